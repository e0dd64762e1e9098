"""Fixtures for the report tests: the session's real build (tests/real_build.py), one evaluation of it and a
two-checkpoint sweep, both by the real ``evaluate``/``sweep`` with a deterministic toy adapter (report_helpers)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.evaluation.report.report_helpers import ToyAdapter, eval_options

from s2sbench.evaluation.runner.run import evaluate
from s2sbench.evaluation.runner.sweep import Checkpoint, sweep


@pytest.fixture(scope="session")
def build_dir(real_build) -> Path:
    return real_build.root


@pytest.fixture(scope="session")
def clip_store(real_build) -> Path:
    return real_build.store


@pytest.fixture(scope="session")
def eval_dir(tmp_path_factory, build_dir) -> Path:
    out = tmp_path_factory.mktemp("eval")
    evaluate(build_dir, ToyAdapter(), None, out, eval_options())
    return out


@pytest.fixture(scope="session")
def sweep_dir(tmp_path_factory, build_dir) -> Path:
    out = tmp_path_factory.mktemp("sweep")
    runs = tmp_path_factory.mktemp("runs")
    checkpoints = []
    for step in (100, 200):
        (runs / f"ckpt_{step}").mkdir()
        (runs / f"ckpt_{step}" / "weights.txt").write_text(str(step))
        checkpoints.append(Checkpoint(runs / f"ckpt_{step}", step))
    sweep(build_dir, checkpoints, lambda path: ToyAdapter(int(path.name.split("_")[1])), None, out, eval_options())
    return out
