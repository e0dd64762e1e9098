"""SIGINT and SIGTERM stop a command within 5 s with exit code 130, its folders consistent: a build resumes, a
results or build folder is not left locked. Real processes, since signals and exits are what is tested."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

from s2sbench.evaluation.results.folder import ResultsDir
from s2sbench.pipeline.buildfolder.builddir import BuildDir

from tests.badinput.conftest import STORIES, World

STOP_WITHIN_S = 5.0
REPO = Path(__file__).resolve().parents[2]


def interrupt_when(command: list, env: dict, ready, signum: int, timeout_s: float = 300) -> tuple[int, float, str]:
    """Start ``command``; once ``ready()`` holds, send ``signum``. Returns (exit code, seconds from the signal to the
    exit, stderr)."""
    process = subprocess.Popen([str(part) for part in command], env=env, cwd=REPO, stdout=subprocess.DEVNULL,
                               stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + timeout_s
    try:
        while not ready():
            if process.poll() is not None:
                raise AssertionError(f"ended before it was interrupted ({process.returncode}): {process.stderr.read()[-2000:]}")
            if time.monotonic() > deadline:
                raise AssertionError(f"not ready after {timeout_s} s")
            time.sleep(0.05)
        sent = time.monotonic()
        process.send_signal(signum)
        try:
            code = process.wait(timeout=60)
        except subprocess.TimeoutExpired:
            raise AssertionError(f"still running 60 s after {signal.Signals(signum).name}") from None
        return code, time.monotonic() - sent, process.stderr.read()
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()


def slow_backends(world: World, *argv) -> tuple[list, dict]:
    busy = world.root / "busy"
    env = {**os.environ, "S2SBENCH_TEST_BUSY": str(busy), "S2SBENCH_CLIP_STORE": str(world.store)}
    return [sys.executable, "-m", "tests.badinput.slow_backends", *argv], env


def test_sigterm_stops_an_eval_inside_a_long_model_call(world):
    out = world.out / "eval"
    command, env = slow_backends(world, "eval", "--dataset", world.real_build.root, "--model", "slow-lm", "--out", out)
    code, took, err = interrupt_when(command, env, (world.root / "busy").exists, signal.SIGTERM)
    assert code == 130, err[-2000:]
    assert took < STOP_WITHIN_S, f"took {took:.1f} s: {err[-1500:]}"
    with ResultsDir(out).lock():  # not left locked
        pass


def test_sigint_stops_a_verify_inside_a_long_asr_call(world):
    build = world.build_copy()
    command, env = slow_backends(world, "verify", build, "--engine", "slow-asr", "--store", world.store,
                                 "--out", world.out / "verify")
    code, took, err = interrupt_when(command, env, (world.root / "busy").exists, signal.SIGINT)
    assert code == 130 and "interrupted" in err and "run the command again to resume" in err, err[-2000:]
    assert took < STOP_WITHIN_S, f"took {took:.1f} s: {err[-1500:]}"
    with BuildDir(build).lock():
        pass


def test_an_interrupted_build_exits_130_and_resumes(world, prefect_harness):
    world.source(rows=STORIES + [{**story, "id": story["id"] + "b"} for story in STORIES])
    task = world.task(gate={"asr": {"engine": "faster-whisper", "model": "tiny.en"}, "max_error_rate": 1.0})
    out = world.out / "build"
    command = [sys.executable, "-m", "s2sbench.flows.cli", "build", task, "--out", out, "--shard-size", "1",
               "--store", world.out / "store"]
    env = {**os.environ, "PREFECT_API_URL": prefect_harness}  # the session's server: no start-up per run
    checks = out / "work" / "t"
    code, took, err = interrupt_when(command, env, lambda: any(path.stat().st_size for path in checks.glob("*/checks.jsonl")),
                                     signal.SIGINT)
    assert code == 130, err[-2000:]
    assert took < STOP_WITHIN_S, f"took {took:.1f} s: {err[-1500:]}"
    assert "run the command again to resume" in err
    resumed = world.run(*command[3:])  # the same command again, in this process (its imports and models are loaded)
    assert resumed.code == 0, resumed.err[-2000:]
    build = BuildDir(out)
    ids = [row.id for row in build.read_manifest()]
    assert len(ids) == len(set(ids)) == build.read_report().tasks["t"].kept
    assert build.read_report().tasks["t"].kept + build.read_report().tasks["t"].dropped == 4
