"""Run every benchmark and rewrite its section of bench/README.md from what it measured (``make bench``).

Each benchmark runs in its own subprocess with ``--json``; its module's ``readme_section(figures)`` renders the
figures, and the section between ``<!-- NAME:start -->`` and ``<!-- NAME:end -->`` is replaced, headed by the
command, the date, the machine, its load average before and after, and the CPU time other processes took meanwhile
(these machines are shared; a load average cannot tell the benchmark's own workers from other jobs, CPU time can).
A benchmark that fails keeps its previous section and makes the exit status 1.
The studies on real public data kept outside the repository (``bench_offline_lms.py``, ``scmmlu_yield.py``,
``check_real_sources.py``: accuracy, rewriter yield, source checks) are not timings and need ``--data``; they run
by hand and keep their hand-written sections.

Usage:  python bench/run_all.py [--only NAME ...] [--skip NAME ...] [--list]
"""

from __future__ import annotations

import argparse
import datetime
import importlib.util
import json
import os
import platform
import resource
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

BENCH_DIR = Path(__file__).resolve().parent
sys.path.insert(0, str(BENCH_DIR))
from readme import write_section  # noqa: E402


@dataclass(frozen=True)
class Bench:
    name: str  # the README section
    title: str
    script: str
    arguments: list[str] = field(default_factory=list)

    @property
    def command(self) -> str:
        return " ".join(["python", f"bench/{self.script}", *self.arguments])


BENCHES = [
    Bench("flow-overhead", "Flow overhead per stage", "bench_flow_overhead.py"),
    Bench("asr", "ASR: one clip at a time, batched, packed", "bench_asr.py", ["--engines", "faster-whisper", "--limit", "14"]),
    Bench("asr-zh", "ASR on Mandarin (Whisper base)", "bench_asr.py",
          ["--model", "base", "--task", "demo-stories-zh", "--engines", "faster-whisper", "--limit", "13"]),
    Bench("asr-openai", "ASR: openai-whisper batched", "bench_asr.py", ["--engines", "openai-whisper"]),
    Bench("scaling", "Scaling: Dask workers, threads and processes", "bench_scaling.py"),
    Bench("projections", "Full-set projections", "bench_projections.py"),
    Bench("orchestration", "Orchestration: memory", "bench_orchestration.py"),
    Bench("allocator", "Allocator: a command's threads on one malloc arena", "bench_allocator.py"),
    Bench("synthesis", "Synthesis", "bench_synthesis.py"),
    Bench("condition-cost", "Acoustic conditions: deriving one, against synthesizing the same clips", "bench_conditions.py"),
    Bench("scoring", "Scoring", "bench_scoring.py", ["--repeats", "5", "--threads", "1"]),
]


def load_module(script: str):
    spec = importlib.util.spec_from_file_location(Path(script).stem, BENCH_DIR / script)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up there
    spec.loader.exec_module(module)
    return module


@dataclass(frozen=True)
class CpuClock:
    """CPU seconds so far: the whole machine's busy time (every core, from /proc/stat; None without it) and this
    process's reaped children's (the benchmark and the processes it started and waited for)."""

    machine_s: float | None
    children_s: float

    @classmethod
    def now(cls) -> CpuClock:
        try:
            user, nice, system, _idle, _iowait, irq, softirq = Path("/proc/stat").read_text().split(None, 8)[1:8]
            machine_s = sum(int(v) for v in (user, nice, system, irq, softirq)) / os.sysconf("SC_CLK_TCK")
        except (OSError, ValueError):
            machine_s = None
        children = resource.getrusage(resource.RUSAGE_CHILDREN)
        return cls(machine_s, children.ru_utime + children.ru_stime)


def others_cpu_s(before: CpuClock, after: CpuClock) -> float | None:
    """CPU seconds the machine spent on anything but the benchmark between two clocks (kernel threads included)."""
    if before.machine_s is None or after.machine_s is None:
        return None
    return max(0.0, (after.machine_s - before.machine_s) - (after.children_s - before.children_s))


def provenance(bench: Bench, load_before: float, load_after: float, wall_s: float, others_s: float | None) -> str:
    cores = os.cpu_count() or 1
    if others_s is None:
        others = ""
    else:
        share = others_s / (wall_s * cores)
        busy = "busy: other jobs ran" if share > 0.1 else "quiet"
        others = f"; other processes took {others_s:.0f} CPU s, {share:.0%} of the machine ({busy})"
    return (f"`{bench.command}`, measured {datetime.date.today().isoformat()} by `make bench` in {wall_s / 60:.0f} min "
            f"on {platform.machine()}, {cores} cores, load average {load_before:.1f} at start and {load_after:.1f} at "
            f"end{others}.")


def run(bench: Bench) -> bool:
    print(f"== {bench.name}: {bench.command}", flush=True)
    with tempfile.TemporaryDirectory(prefix=f"bench-{bench.name}-") as scratch:
        figures_path = Path(scratch) / "figures.json"
        load_before, started, cpu_before = os.getloadavg()[0], time.monotonic(), CpuClock.now()
        result = subprocess.run([sys.executable, str(BENCH_DIR / bench.script), *bench.arguments,
                                 "--json", str(figures_path)], check=False)
        wall_s, load_after = time.monotonic() - started, os.getloadavg()[0]
        others_s = others_cpu_s(cpu_before, CpuClock.now())
        if result.returncode != 0 or not figures_path.exists():
            print(f"== {bench.name} failed (exit {result.returncode}); its README section is unchanged", flush=True)
            return False
        figures = json.loads(figures_path.read_text(encoding="utf-8"))
    body = load_module(bench.script).readme_section(figures)
    heading = provenance(bench, load_before, load_after, wall_s, others_s)
    write_section(bench.name, f"## {bench.title}\n\n{heading}\n\n{body}")
    print(f"== {bench.name} done in {wall_s:.0f} s; bench/README.md section rewritten", flush=True)
    return True


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    names = [bench.name for bench in BENCHES]
    parser.add_argument("--only", nargs="+", choices=names, metavar="NAME", help=f"run only these ({', '.join(names)})")
    parser.add_argument("--skip", nargs="+", choices=names, default=[], metavar="NAME", help="run all but these")
    parser.add_argument("--list", action="store_true", help="print the benchmarks and their commands")
    args = parser.parse_args()
    chosen = [bench for bench in BENCHES if (not args.only or bench.name in args.only) and bench.name not in args.skip]
    if args.list:
        for bench in chosen:
            print(f"{bench.name:15s} {bench.command}")
        return 0
    failed = [bench.name for bench in chosen if not run(bench)]
    if failed:
        print(f"failed: {', '.join(failed)}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
