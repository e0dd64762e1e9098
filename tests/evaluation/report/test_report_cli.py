"""``s2sbench report``: writes the HTML, markdown and CSV; bad input is exit code 2 with a message, no traceback."""

from __future__ import annotations

import pandas as pd
import pytest

from s2sbench.flows.cli import build_parser, main

from tests.prefect_runs import recorded_run

pytestmark = pytest.mark.usefixtures("prefect_harness")  # `s2sbench report` runs the report flow


def test_report_command_writes_html_markdown_csv(eval_dir, build_dir, clip_store, tmp_path, capsys):
    out = tmp_path / "nested" / "report.html"
    code = main(["report", str(eval_dir), "--build", str(build_dir), "--store", str(clip_store), "--out", str(out),
                 "--markdown", str(tmp_path / "s.md"), "--csv", str(tmp_path / "s.csv"), "--samples", "1"])  # fmt: skip
    assert code == 0
    printed = capsys.readouterr().out
    assert f"report: {out}" in printed and "csv:" in printed
    assert out.read_text(encoding="utf-8").count("<audio") == 2
    assert "| toy | fixture-stories-en | pairwise_strict |" in (tmp_path / "s.md").read_text(encoding="utf-8")
    assert len(pd.read_csv(tmp_path / "s.csv")) == 3
    run = recorded_run("report", task_runs=4, out=str(out))
    assert run.task_runs == (f"audit {build_dir}", f"load {eval_dir}", f"render {out}", "summary tables")
    assert run.artifacts["report"][1] == f"[report.html]({out.resolve().as_uri()})"  # a link artifact
    assert "| toy | fixture-stories-en | pairwise_strict |" in run.artifacts["report-summary"][1]


def test_build_only_report(build_dir, clip_store, tmp_path):
    out = tmp_path / "audit.html"
    assert main(["report", "--build", str(build_dir), "--store", str(clip_store), "--out", str(out)]) == 0
    html = out.read_text(encoding="utf-8")
    assert "id='build'" in html and "id='summary'" not in html


def test_bad_input_exits_with_its_kind_without_traceback(tmp_path, capsys):
    assert main(["report", "--out", str(tmp_path / "r.html")]) == 2
    assert "config error: nothing to report" in capsys.readouterr().err
    assert main(["report", str(tmp_path / "missing"), "--out", str(tmp_path / "r.html")]) == 3
    err = capsys.readouterr().err
    assert "missing: expected a results.json" in err and "Traceback" not in err
    assert main(["report", "--build", str(tmp_path), "--out", str(tmp_path / "r.html")]) == 3
    assert "build_report.json: not found" in capsys.readouterr().err
    assert not (tmp_path / "r.html").exists()


def test_help_has_examples():
    parser = build_parser()
    action = next(a for a in parser._subparsers._group_actions if a.dest == "command")
    text = action.choices["report"].format_help()
    assert "examples:" in text and "s2sbench report eval/ --build build/ --out report.html" in text
