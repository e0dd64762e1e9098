"""The commands that do work are thin callers of their flows: every option of the command reaches the flow as a
parameter it accepts (`--device` reaches the engines through the environment instead: tests/machine/test_device.py).
The flows themselves run for real in the tests of each command."""

from __future__ import annotations

import importlib

import pytest

from s2sbench.flows.cli import build_parser

# command -> (argv setting every option, the flow it calls, the parameters it passes)
CASES = {
    "eval": [
        (["eval", "--dataset", "org/set@v2", "--model", "m", "--model-arg", "k=1", "--modes", "T->T", "S->T",
          "--out", "o/r.json", "--tasks", "a,b", "--voices", "v", "--limit", "9", "--split", "dev", "--task-file",
          "t.yaml", "--bootstrap", "7", "--seed", "3", "--requests-per-call", "5", "--device", "cpu"],
         "evaluate:evaluate_flow",
         {"dataset": "org/set@v2", "model": "m", "out_dir": "o", "model_options": {"k": 1}, "modes": ["T->T", "S->T"],
          "tasks": ["a", "b"], "voices": ["v"], "limit": 9, "split": "dev", "task_files": ["t.yaml"], "bootstrap": 7,
          "seed": 3, "requests_per_call": 5, "results_file": "r.json"}),
        (["eval", "--dataset", "b", "--model", "m", "--model-glob", "c/*", "--step-pattern", r"s(\d+)",
          "--checkpoint-arg", "path", "--out", "sweep"],
         "evaluate:sweep_flow",
         {"dataset": "b", "model": "m", "out_dir": "sweep", "model_options": {}, "modes": None, "tasks": [],
          "voices": [], "limit": None, "split": None, "task_files": [], "bootstrap": 2000, "seed": None,
          "requests_per_call": 64, "model_glob": "c/*", "step_pattern": r"s(\d+)", "checkpoint_arg": "path"}),
    ],
    "verify": [
        (["verify", "b", "--engine", "openai-whisper", "--model", "base", "--device", "cpu", "--compute-type", "float32",
          "--batch-size", "4", "--beam-size", "5", "--store", "s", "--out", "o"],
         "verify:verify_flow",
         {"build_dir": "b", "engine": "openai-whisper", "model": "base", "device": "cpu", "compute_type": "float32",
          "batch_size": 4, "store": "s", "out_dir": "o", "beam_size": 5}),
    ],
    "publish": [
        (["publish", "b", "--repo-id", "o/n", "--private", "--revision", "v2", "--dry-run", "st", "--license", "mit",
          "--default-config", "c", "--attempts", "2", "--no-verify"],
         "publish:publish_flow",
         {"build_dir": "b", "repo_id": "o/n", "revision": "v2", "private": True, "dry_run_dir": "st", "licence": "mit",
          "default_config": "c", "attempts": 2, "verify": False}),
    ],
    "report": [
        (["report", "r1", "r2", "--build", "b", "--out", "x.html", "--markdown", "m.md", "--csv", "c.csv",
          "--normalization", "char", "--samples", "2", "--store", "s", "--title", "T", "--screenshot", "p.png"],
         "report:report_flow",
         {"results": ["r1", "r2"], "out": "x.html", "build_dir": "b", "store": "s", "markdown": "m.md", "csv": "c.csv",
          "normalization": "char", "samples": 2, "title": "T", "screenshot": "p.png"}),
    ],
    "export-original": [
        (["export-original", "b", "--out", "o"], "original:export_original_flow", {"build_dir": "b", "out_dir": "o"}),
    ],
    "import-original": [
        (["import-original", "src", "--out", "o", "--audio-dir", "a", "--task", "t", "--language", "zh"],
         "original:import_original_flow",
         {"source": "src", "out_dir": "o", "audio_dir": "a", "task": "t", "language": "zh"}),
    ],
}  # fmt: skip


class _Called(Exception):
    pass


@pytest.mark.parametrize("command", sorted(CASES))
def test_every_option_of_a_command_reaches_its_flow(command, monkeypatch):
    parser = build_parser()
    subparser = next(a for a in parser._subparsers._group_actions if a.dest == "command").choices[command]
    options = {action.dest for action in subparser._actions if action.option_strings and action.dest != "help"}
    set_somewhere = set()
    for argv, target, expected in CASES[command]:
        module_name, _, flow_name = target.partition(":")
        module = importlib.import_module(f"s2sbench.flows.{module_name}")
        flow = getattr(module, flow_name)
        calls = []

        def record(**parameters):
            calls.append(parameters)
            raise _Called

        monkeypatch.setattr(module, flow_name, record)
        args = parser.parse_args(argv)
        assert args.runs_flow, f"{command} must get a Prefect API from the CLI"
        with pytest.raises(_Called):
            args.handler(args)
        assert calls == [expected]
        flow.validate_parameters(expected)  # names and types the flow accepts
        set_somewhere |= {dest for dest in options if getattr(args, dest) != subparser.get_default(dest)}
        monkeypatch.undo()
    assert set_somewhere == options, f"options of `{command}` no case sets: {sorted(options - set_somewhere)}"
