"""Every bench script imports against the current library: a bench that drifts from a renamed function fails here,
not when someone next runs it (the benches themselves are too slow for the default run)."""

import importlib.util
import sys
from pathlib import Path

import pytest

BENCH_DIR = Path(__file__).resolve().parent.parent / "bench"


def _load(script: str, monkeypatch):
    monkeypatch.syspath_prepend(str(BENCH_DIR))
    spec = importlib.util.spec_from_file_location(f"bench_under_test_{Path(script).stem}", BENCH_DIR / script)
    module = importlib.util.module_from_spec(spec)
    monkeypatch.setitem(sys.modules, spec.name, module)  # dataclasses look their module up there
    spec.loader.exec_module(module)
    return module


@pytest.mark.parametrize("script", sorted(path.name for path in BENCH_DIR.glob("*.py")))
def test_bench_script_imports(script, monkeypatch):
    module = _load(script, monkeypatch)
    assert module.__doc__, f"bench/{script} says what it measures in its docstring"


def test_the_gpu_bench_says_plainly_that_there_is_no_gpu(monkeypatch, capsys):
    from s2sbench.pipeline.machine.device import cuda_device_count

    if cuda_device_count():
        pytest.skip("a GPU is here: bench_gpu.py measures it (minutes), outside the test run")
    module = _load("bench_gpu.py", monkeypatch)
    monkeypatch.setattr(sys, "argv", ["bench_gpu.py"])
    assert module.main() == 0
    assert capsys.readouterr().out.startswith("no GPU found: CTranslate2 sees no CUDA device on this machine")


def test_the_stage_cost_section_is_the_real_builds_table(real_build, monkeypatch):
    """bench/stage_costs.py reads the cost table a real build wrote (one row per stage and voice); it builds nothing."""
    module = _load("stage_costs.py", monkeypatch)
    body = module.section(real_build.root, "s2sbench build stories.yaml")
    assert body.startswith("## Per-stage costs of a whole build\n\nBuild: fixture-stories-en (3 items, 4 rows kept), "
                           "fixture-choice-zh (2 items, 2 rows kept).")
    assert "`s2sbench build stories.yaml`" in body
    table = [line.split(" | ")[:3] for line in body.splitlines() if line.startswith("| ")][1:]
    voices = ["piper-en-joe", "piper-en-joe-slow", "espeak-zh-pinyin"]
    assert [row[:2] for row in table] == [["| synthesis", voice] for voice in voices] + [["| gate", table[3][1]]] + [
        ["| retries", voice] for voice in voices] + [["| assembly", "all"]]
    assert table[3][1].startswith("faster-whisper:tiny.en")
    assert [int(row[2]) for row in table[:3]] == [9, 9, 2]  # 3 stories x 3 texts per voice; 2 questions' contexts
