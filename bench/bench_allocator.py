"""Benchmark: a command's engine threads on one malloc arena (what ``s2sbench`` sets first thing) against glibc's default
arenas.

The same build of N generated English stories (Piper joe, Whisper tiny.en gate, context and candidates spoken, shard
size 2 so two shard threads run at once) by ``s2sbench build`` in a fresh process, each time into a new clip store,
once as every command now runs and once with ``MALLOC_ARENA_MAX`` set to glibc's default (8 per core: a per-thread
arena, as before), in alternating order, for R rounds. Both share one Prefect server started beforehand. Printed:
wall time, CPU time and minor page faults of the command process, and the ratios default / one arena.

Usage:  python bench/bench_allocator.py [--items 8] [--rounds 2] [--json out.json]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_orchestration import write_task  # noqa: E402

CONFIGS = {"one arena": {}, "glibc default": {"MALLOC_ARENA_MAX": str(8 * (os.cpu_count() or 1))}}


def run_build(task: Path, out: Path, store: Path, env: dict[str, str]) -> dict:
    command = [sys.executable, "-m", "s2sbench.flows.cli", "build", str(task), "--out", str(out), "--store", str(store),
               "--shard-size", "2"]
    clean = {name: value for name, value in os.environ.items() if not name.startswith("MALLOC_")}
    started = time.perf_counter()
    process = subprocess.Popen(command, env={**clean, **env}, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    _, status, usage = os.wait4(process.pid, 0)
    wall = time.perf_counter() - started
    if os.waitstatus_to_exitcode(status) != 0:
        raise RuntimeError(f"build failed:\n{process.stderr.read().decode()[-3000:]}")
    return {"wall_s": wall, "cpu_s": usage.ru_utime + usage.ru_stime, "sys_s": usage.ru_stime, "faults": usage.ru_minflt}


def readme_section(figures: dict) -> str:
    rows = figures["configs"]
    lines = [
        f"`s2sbench build` of {figures['items']} generated stories (Piper joe, Whisper tiny.en gate, context and "
        f"candidates, shard size 2: two shard threads), a fresh process and clip store each run, {figures['rounds']} "
        "rounds in alternating order; medians.", "",
        "| allocator | wall | CPU | of it system | minor page faults |", "|---|---|---|---|---|",
    ]
    for name, row in rows.items():
        lines.append(f"| {name} | {row['wall_s']:.1f} s | {row['cpu_s']:.1f} s | {row['sys_s']:.1f} s | {row['faults']:,} |")
    ratio = figures["default_over_one_arena"]
    lines += ["", f"**glibc default / one arena: wall {ratio['wall_s']}x, CPU {ratio['cpu_s']}x, "
                  f"page faults {ratio['faults']}x.**"]
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--items", type=int, default=8, help="stories per build (default 8)")
    parser.add_argument("--rounds", type=int, default=2, help="builds per allocator setting (default 2)")
    parser.add_argument("--json", type=Path, help="also write the figures here")
    args = parser.parse_args()
    from s2sbench.flows.server import private_server

    runs: dict[str, list[dict]] = {name: [] for name in CONFIGS}
    with tempfile.TemporaryDirectory(prefix="s2sbench-bench-") as scratch, private_server() as api_url:
        os.environ["PREFECT_API_URL"] = api_url
        root = Path(scratch)
        task = write_task(root, args.items, voice="piper-en-joe")
        for round_index in range(args.rounds):
            order = list(CONFIGS) if round_index % 2 == 0 else list(reversed(CONFIGS))
            for name in order:
                where = root / f"{name.replace(' ', '-')}-{round_index}"
                runs[name].append(run_build(task, where / "build", where / "clips", CONFIGS[name]))
                print(f"round {round_index + 1} {name}: {runs[name][-1]}", file=sys.stderr, flush=True)
    configs = {name: {key: statistics.median(run[key] for run in results) for key in results[0]} for name, results in runs.items()}
    configs = {name: {**row, "faults": int(row["faults"])} for name, row in configs.items()}
    one, default = configs["one arena"], configs["glibc default"]
    figures = {"items": args.items, "rounds": args.rounds, "configs": configs,
               "default_over_one_arena": {key: round(default[key] / one[key], 2) for key in ("wall_s", "cpu_s", "faults")}}
    print(json.dumps(figures, indent=2))
    if args.json:
        args.json.write_text(json.dumps(figures, indent=2) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
