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
    from s2sbench.pipeline.device import cuda_device_count

    if cuda_device_count():
        pytest.skip("a GPU is here: bench_gpu.py measures it (minutes), outside the test run")
    module = _load("bench_gpu.py", monkeypatch)
    monkeypatch.setattr(sys, "argv", ["bench_gpu.py"])
    assert module.main() == 0
    assert capsys.readouterr().out.startswith("no GPU found: CTranslate2 sees no CUDA device on this machine")
