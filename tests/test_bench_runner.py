"""The benchmark runner (bench/run_all.py): every benchmark it lists renders its README section, and a section is
rewritten in place between its markers while the hand-written text around it stays."""

from __future__ import annotations

import importlib.util
import os
import subprocess
import sys
import time
from pathlib import Path

BENCH = Path(__file__).resolve().parents[1] / "bench"


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


def test_the_flow_overhead_section_heads_with_task_runs_against_plain_calls_at_every_size():
    bench = _module("bench_flow_overhead")
    stage = {"task_runs": 2, "plain_s": 1.0, "in_flow_s": 1.05, "overhead": 0.05, "cpu_overhead": 0.02,
             "per_task_run_ms": 9.5, "slowdown_inside": 0.031}
    size = {"stages": {"speak-shard": stage}, "plain_run_s": 1.2, "flow_run_s": 1.4, "flow_over_plain": 1.167,
            "flow_over_plain_cpu": 1.1, "flow_server_cpu_s": 0.3, "load_average": [1.0, 1.5]}
    figures = {"case": "build", "rounds": 3, "private_server_start_s": 7.8,
               "sizes": [{"items": 4, **size}, {"items": 16, **size}]}
    section = bench.readme_section(figures)
    assert "| 4 | speak-shard (2 task runs) | 1.0 s | 1.05 s | **+5.0%** | +2.0% | 9.5 ms | +3.1% |" in section
    assert "| 16 | whole run | 1.2 s | 1.4 s | +16.7% | +10.0% (server 0.3 s) | | |" in section
    assert "4 stories 1.0 to 1.5, 16 stories 1.0 to 1.5" in section


BUSY = "import time\nend = time.process_time() + {seconds}\nwhile time.process_time() < end: pass\n"


def test_the_cpu_of_other_processes_is_told_apart_from_the_benchmarks_own(tmp_path):
    run_all = _module("run_all")
    before = run_all.CpuClock.now()
    subprocess.run([sys.executable, "-c", BUSY.format(seconds=0.5)], check=True)  # the benchmark: a reaped child
    after_own = run_all.CpuClock.now()
    assert after_own.children_s - before.children_s >= 0.45
    assert after_own.machine_s - before.machine_s >= 0.45

    done = tmp_path / "done"  # another job: running beside it, never reaped by the runner while it measures
    other = subprocess.Popen([sys.executable, "-c", BUSY.format(seconds=0.5) + f"open({str(done)!r}, 'w').close()\n"
                              "time.sleep(60)\n"])
    try:
        while not done.exists():
            time.sleep(0.05)
        others = run_all.others_cpu_s(after_own, run_all.CpuClock.now())
    finally:
        other.kill()
        other.wait()
    assert others >= 0.45


def test_the_heading_says_how_much_of_the_machine_other_processes_took():
    run_all = _module("run_all")
    bench = run_all.BENCHES[0]
    cores = os.cpu_count() or 1
    quiet = run_all.provenance(bench, 0.5, 1.5, 600, 0.05 * 600 * cores)
    assert quiet.startswith(f"`{bench.command}`, measured ") and quiet.endswith("5% of the machine (quiet).")
    assert run_all.provenance(bench, 3.0, 4.0, 600, 0.5 * 600 * cores).endswith("50% of the machine (busy: other jobs ran).")
    assert "other processes" not in run_all.provenance(bench, 1.0, 1.0, 60, None)
