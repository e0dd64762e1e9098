"""The benchmark runner (bench/run_all.py): every benchmark it lists renders its README section, and a section is
rewritten in place between its markers while the hand-written text around it stays."""

from __future__ import annotations

import importlib.util
import subprocess
import sys
from pathlib import Path

BENCH = Path(__file__).resolve().parents[2] / "bench"


def _module(name: str):
    spec = importlib.util.spec_from_file_location(name, BENCH / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module  # dataclasses look their module up there
    spec.loader.exec_module(module)
    return module


def test_a_section_is_replaced_between_its_markers_and_appended_when_missing():
    readme = _module("readme")
    text = "# Benchmarks\n\nintro\n\n<!-- asr:start -->\nold table\n<!-- asr:end -->\n\nhand-written notes\n"
    replaced = readme.replace_section(text, "asr", "## ASR\n\nnew table\n")
    assert replaced == "# Benchmarks\n\nintro\n\n<!-- asr:start -->\n## ASR\n\nnew table\n<!-- asr:end -->\n\nhand-written notes\n"
    assert readme.replace_section(replaced, "asr", "## ASR\n\nnew table") == replaced  # idempotent
    appended = readme.replace_section(replaced, "synthesis", "## Synthesis")
    assert appended.startswith(replaced.rstrip("\n")) and appended.endswith("<!-- synthesis:start -->\n## Synthesis\n<!-- synthesis:end -->\n")


def test_every_listed_benchmark_exists_and_renders_a_section(tmp_path):
    run_all = _module("run_all")
    assert {bench.name for bench in run_all.BENCHES} >= {"flow-overhead", "asr", "orchestration", "synthesis", "scoring"}
    readme = (BENCH / "README.md").read_text(encoding="utf-8")
    for bench in run_all.BENCHES:
        assert callable(run_all.load_module(bench.script).readme_section), bench.script
        start, end = _module("readme").markers(bench.name)
        assert start in readme and end in readme, f"bench/README.md has no section for {bench.name}"
    listed = subprocess.run([sys.executable, str(BENCH / "run_all.py"), "--list"], capture_output=True, text=True, check=True)
    assert "python bench/bench_asr.py --model base" in listed.stdout
