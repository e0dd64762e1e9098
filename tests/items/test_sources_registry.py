import argparse
import json

import pytest

from s2sbench.pipeline.core.errors import ConfigError
from s2sbench.pipeline.items.sources import get_loader
from s2sbench.pipeline.items.task_config import TaskConfigError, override_source
from s2sbench.pipeline.catalog.tasks import load_task, task_names
from s2sbench.pipeline.items.candidates import BUILDERS


@pytest.mark.parametrize("name", task_names())
def test_every_shipped_task_file_is_valid(name):
    task = load_task(name)
    assert task.name == name
    get_loader(task.source.loader)
    assert task.candidates.construction in BUILDERS


def test_unknown_loader_and_construction_name_the_choices(make_task):
    with pytest.raises(ConfigError, match=r"unknown loader 'parquet' \(known: cmmlu, csv, jcommonsenseqa, jsonl, s2sbench-release, storycloze"):
        get_loader("parquet")
    # the task file is checked when it is read: names, and the options each component declares
    with pytest.raises(ConfigError, match=r"t.yaml: key 'source.loader': unknown loader 'jsnol' .*did you mean 'jsonl'"):
        make_task(source={"loader": "jsnol", "path": "x"})
    with pytest.raises(ConfigError, match=r"t.yaml: key 'candidates.construction': unknown candidate construction 'shuffle'"):
        make_task(source={"loader": "jsonl", "path": "x"}, candidates={"construction": "shuffle"})
    with pytest.raises(TaskConfigError, match=r"key 'candidates.options.sed': unknown key; did you mean 'seed'\? \(known: seed\)"):
        make_task(source={"loader": "jsonl", "path": "x"}, candidates={"construction": "random_other", "options": {"sed": 1}})
    with pytest.raises(TaskConfigError, match=r"key 'source.options.encodng': unknown key; did you mean 'encoding'"):
        make_task(source={"loader": "jsonl", "path": "x", "options": {"encodng": "gbk"}})


def test_config_error_names_file_and_key(tmp_path):
    path = tmp_path / "bad.yaml"
    path.write_text("name: bad\nlanguage: en\nvoices: [x]\nsource: {loader: jsonl, on_bad_row: skip}\n", encoding="utf-8")
    with pytest.raises(TaskConfigError, match=r"bad.yaml: key 'source.on_bad_row'"):
        load_task(path)


def test_override_source_replaces_path_and_clears_hub(spring_csv):
    task = override_source(load_task("sstorycloze"), path=str(spring_csv), split=None)
    assert task.source.path == str(spring_csv) and task.source.hub_id is None


def _cli(*argv):
    from s2sbench.flows.commands import items, tasks

    parser = argparse.ArgumentParser(prog="s2sbench")
    sub = parser.add_subparsers(dest="command")
    tasks.register(sub)
    items.register(sub)
    args = parser.parse_args(list(argv))
    return args.handler(args)


def test_tasks_command_lists_the_registry(capsys, tmp_path):
    assert _cli("tasks") == 0
    out = capsys.readouterr().out
    assert out.splitlines()[0].split() == ["name", "language", "loader", "construction", "scoring", "voices", "version"]
    assert any(line.split()[:3] == ["scmmlu", "zh", "cmmlu"] and "pairwise_ties_right + argmin" in line
               for line in out.splitlines())
    (tmp_path / "broken.yaml").write_text("name: broken\nlanguage: en\nvoices: []\nsource: {loader: jsonl}\n")
    assert _cli("tasks", "--dir", str(tmp_path)) == 2
    assert "broken.yaml: key 'voices'" in capsys.readouterr().err


def test_items_command_writes_items_drops_and_report(tmp_path, spring_csv, capsys):
    out = tmp_path / "out" / "items.jsonl"
    assert _cli("items", "tstorycloze", "--source-path", str(spring_csv), "--out", str(out), "--limit", "4") == 0
    lines = out.read_text(encoding="utf-8").splitlines()
    assert len(lines) == 4 and json.loads(lines[0])["task"] == "tstorycloze"
    assert out.with_suffix(".drops.jsonl").read_text() == ""
    report = json.loads(out.with_suffix(".report.json").read_text())
    assert report["kept"] == 4 and report["handled"] == {"random_other": 4}
