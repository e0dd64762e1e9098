"""A checkpoint sweep over three real (tiny, random-weight) GPT2 checkpoints, through the hf-causal adapter."""

from __future__ import annotations

import csv
import json
import re

import pytest

from tests.original_rules import checkpoint_folders, read_summary, story_result_dir_summary

from s2sbench.evaluation.models import get_adapter
from s2sbench.evaluation.runner.run import EvalOptions
from s2sbench.evaluation.protocol.stats import BootstrapOptions
from s2sbench.evaluation.runner.sweep import find_checkpoints, sweep
from s2sbench.flows.cli import main
from s2sbench.pipeline.core.errors import ConfigError

from tests.prefect_runs import recorded_run

PREFECT_LOG_LINE = re.compile(r"\d\d:\d\d:\d\d\.\d{3} \| ")  # Prefect's console lines (the run's start, its URL)

# T->T only (hf-causal is a text LM): stories 6 x 2 candidates, choices 4 x 4
PER_CHECKPOINT = 6 * 2 + 4 * 4


def test_step_pattern(tmp_path):
    for name in ("ckpt_100", "ckpt_20", "run3-step-5"):
        (tmp_path / name).mkdir()
    assert [c.step for c in find_checkpoints(str(tmp_path / "ckpt_*"))] == [20, 100]
    assert [c.step for c in find_checkpoints(str(tmp_path / "run3-*"), r"step-(\d+)")] == [5]
    with pytest.raises(ValueError, match="cannot read a step from 'run3-step-5'"):
        find_checkpoints(str(tmp_path / "run3-*"), r"ckpt_(\d+)")
    with pytest.raises(ConfigError, match="no checkpoint matches"):
        find_checkpoints(str(tmp_path / "nothing_*"))


def test_sweep_writes_trajectory_and_plots_and_reruns_from_cache(build_dir, gpt2_checkpoints, tmp_path, eval_tasks):
    checkpoints = find_checkpoints(str(gpt2_checkpoints / "ckpt_*"))
    assert [c.step for c in checkpoints] == [100, 200, 300]
    options = EvalOptions(tasks=eval_tasks, bootstrap=BootstrapOptions(n_resamples=200))

    def make_adapter(path):
        return get_adapter("hf-causal", model=str(path), batch_size=16)

    first = sweep(build_dir, checkpoints, make_adapter, None, tmp_path, options)
    assert (first.n_scored, first.n_cached) == (3 * PER_CHECKPOINT, 0)
    with open(first.table, newline="", encoding="utf-8") as handle:
        rows = list(csv.DictReader(handle))
    token = [r for r in rows if r["normalization"] == "token" and r["rule"] == "pairwise_strict"]
    assert [int(r["step"]) for r in token] == [100, 200, 300]
    assert all(float(r["ci_low"]) <= float(r["accuracy"]) <= float(r["ci_high"]) for r in rows)
    # different random weights give different losses at each step
    assert len({r["mean_right_loss"] for r in token}) == 3
    assert [p.name for p in first.plots] == ["demo-stories-en.png", "mc-zh.png"]
    assert all(p.stat().st_size > 10_000 for p in first.plots)
    # the original summary readers, on the sweep's folder of one set, find every checkpoint and write this summary
    result_dir = tmp_path / "original" / "T-T" / "demo-stories-en--voice-a"
    assert [(step, folder.name) for step, folder in checkpoint_folders(result_dir)] == [
        (100, "ckpt_0_100_ckpt_100"), (200, "ckpt_1_200_ckpt_200"), (300, "ckpt_2_300_ckpt_300"),
    ]  # fmt: skip
    summary = (result_dir / "results_summary.txt").read_text(encoding="utf-8").splitlines()
    assert summary == story_result_dir_summary(result_dir)
    assert [step for step, *_ in read_summary(result_dir / "results_summary.txt")] == [100, 200, 300]
    per_ckpt = json.loads((tmp_path / "checkpoints" / "ckpt_200" / "results.json").read_text(encoding="utf-8"))
    assert per_ckpt["model"]["revision"].startswith(str(checkpoints[1].path.resolve()))

    again = sweep(build_dir, checkpoints, make_adapter, None, tmp_path, options)
    assert (again.n_scored, again.n_cached) == (0, 3 * PER_CHECKPOINT)
    assert again.rows == first.rows


def test_eval_command_single_model_and_sweep(prefect_harness, build_dir, gpt2_checkpoints, tmp_path, capsys):
    """`s2sbench eval` runs the evaluate flow (the sweep flow with --model-glob): flow runs in the Prefect API with
    task runs named for what they work on, and the results table as an artifact."""
    task_file = tmp_path / "mc-zh.yaml"
    from tests.evaluation.conftest import CHOICE_TASK

    import yaml

    task_file.write_text(yaml.safe_dump(CHOICE_TASK.model_dump(mode="json", exclude={"path"})), encoding="utf-8")
    common = ["eval", "--dataset", str(build_dir), "--model", "hf-causal", "--task-file", str(task_file),
              "--bootstrap", "100"]  # fmt: skip
    out_file = tmp_path / "single" / "scores.json"
    model = f"model={gpt2_checkpoints / 'ckpt_100'}"
    assert main([*common, "--model-arg", model, "--model-arg", "batch_size=8", "--out", str(out_file)]) == 0
    assert json.loads(out_file.read_text())["model"]["name"] == "hf-causal"
    assert (tmp_path / "single" / "samples.jsonl").exists()
    assert "| hf-causal | demo-stories-en | pairwise_strict |" in capsys.readouterr().out
    run = recorded_run("evaluate", task_runs=3, out_dir=str(out_file.parent))
    assert run.state == "Completed" and run.name == f"evaluate hf-causal on {build_dir}"
    assert run.parameters["results_file"] == "scores.json" and run.parameters["bootstrap"] == 100
    assert run.task_runs == (f"check hf-causal on {build_dir}", "load hf-causal", "score hf-causal on demo-stories-en, mc-zh")
    kind, table = run.artifacts["evaluation-results"]
    assert kind == "markdown" and "| hf-causal | demo-stories-en | pairwise_strict |" in table

    sweep_out = tmp_path / "sweep"
    glob = str(gpt2_checkpoints / "ckpt_[12]*")
    assert main([*common, "--model-glob", glob, "--step-pattern", r"ckpt_(\d+)", "--out", str(sweep_out)]) == 0
    assert "2 checkpoints (steps 100, 200)" in capsys.readouterr().out
    assert (sweep_out / "trajectory.csv").exists() and (sweep_out / "plots" / "mc-zh.png").exists()
    run = recorded_run("sweep", task_runs=4, out_dir=str(sweep_out))
    assert run.task_runs == (f"check hf-causal on {build_dir}", "evaluate ckpt_100 (step 100)",
                             "evaluate ckpt_200 (step 200)", "trajectory of sweep")
    assert "| 200 | ckpt_200 | mc-zh | T->T | pairwise_ties_right |" in run.artifacts["sweep-trajectory"][1]
    assert main([*common, "--model-arg", "oops", "--out", str(sweep_out)]) == 2
    assert "expected KEY=VALUE" in capsys.readouterr().err
    # a user error inside the flow (here in its check task) is one line on the console, as before flows
    assert main(["eval", "--dataset", str(build_dir), "--model", "no-such-model", "--out", str(tmp_path / "x")]) == 2
    [line] = [line for line in capsys.readouterr().err.splitlines() if not PREFECT_LOG_LINE.match(line)]
    assert re.match(r"s2sbench eval: (\w+ )?error: ", line) and "no-such-model" in line
