"""Benchmark: peak memory as a build grows (what the flow adds to each stage is ``bench/bench_flow_overhead.py``,
Dask workers against one worker and threads ``bench/bench_scaling.py``).

Peak RSS of a build of N generated English stories versus 10 x N (espeak-ng en-us voice, Whisper tiny.en gate,
context and candidates spoken), each build in its own subprocess so its peak memory (ru_maxrss) is its own: it must
stay flat, since audio is streamed, not held.

Usage:  python bench/bench_orchestration.py [--items 4] [--json out.json]
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
from pathlib import Path

NAMES = ["Ann", "Ben", "Cara", "Dan", "Eva", "Finn", "Gail", "Hugo", "Iris", "Jon"]
PLACES = ["market", "library", "station", "park", "bakery", "museum", "harbor", "school", "garden", "stadium"]
ACTIONS = [("bought some bread", "flew to the moon"), ("read a new book", "ate the chairs"),
           ("met an old friend", "turned into a lamp"), ("took a short walk", "swallowed the river")]


def write_task(folder: Path, n_items: int, voice: str = "espeak-en-us", asr_model: str = "tiny.en", first: int = 0,
               name: str | None = None) -> Path:
    """A task of ``n_items`` short stories, context and candidates spoken, every text distinct (no clip is shared
    between items; stories ``first`` onwards, so tasks with other ``first`` share none either)."""
    name = name or f"bench-{n_items}"
    items = folder / f"{name}.jsonl"
    with open(items, "w", encoding="utf-8") as handle:
        for index in range(first, first + n_items):
            person, place = NAMES[index % len(NAMES)], PLACES[(index // len(NAMES)) % len(PLACES)]
            right, wrong = ACTIONS[index % len(ACTIONS)]
            context = f"{person} went to the {place} on day {index + 1}. It was a quiet morning."
            candidates = [f"On day {index + 1}, {person} {right}.", f"On day {index + 1}, {person} {wrong}."]
            row = {"id": f"b{index}", "context": context, "candidates": candidates, "right": 0}
            handle.write(json.dumps(row) + "\n")
    task = folder / f"{name}.yaml"
    task.write_text(
        f"name: {name}\nlanguage: en\nsource: {{loader: jsonl, path: {items}}}\nvoices: [{voice}]\n"
        "speak: [context, candidates]\n"
        f"gate: {{metric: wer, max_error_rate: 0.5, max_attempts: 1, asr: {{engine: faster-whisper, model: {asr_model}}}}}\n",
        encoding="utf-8",
    )
    return task


CHILD = r"""
import json, resource, sys, time
from pathlib import Path
from s2sbench.pipeline.run.build import run_build
from s2sbench.pipeline.catalog.tasks import load_task
task, out, store = sys.argv[1:4]
started = time.perf_counter()
run_build([load_task(task)], Path(out), shard_size=2, store_root=Path(store))
wall = time.perf_counter() - started
print(json.dumps({"wall_s": wall, "peak_rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024}))
"""


def run_child(task: Path, out: Path, store: Path) -> dict:
    result = subprocess.run([sys.executable, "-c", CHILD, str(task), str(out), str(store)],
                            capture_output=True, text=True, check=False)
    if result.returncode != 0:
        raise RuntimeError(f"build failed:\n{result.stderr[-3000:]}")
    return json.loads(result.stdout.strip().splitlines()[-1])


def readme_section(figures: dict) -> str:
    memory = figures["memory"]
    return "\n".join([
        "Generated stories (espeak-ng en-us, Whisper tiny.en gate, context and candidates spoken, shard size 2), "
        "each build in its own subprocess.", "",
        "| measure | value |", "|---|---|",
        f"| peak RSS, {memory['items_1x']} items | {memory['peak_rss_1x_mb']:,} MB |",
        f"| peak RSS, {memory['items_10x']} items | {memory['peak_rss_10x_mb']:,} MB |",
        f"| **peak RSS 10x / 1x** | **{memory['ratio_10x_over_1x']}** |",
    ])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--items", type=int, default=4, help="items of the 1x build (default 4)")
    parser.add_argument("--json", type=Path, help="also write the figures here")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="s2sbench-bench-") as scratch:
        root = Path(scratch)
        small, large = write_task(root, args.items), write_task(root, 10 * args.items)
        mem_small = run_child(small, root / "mem-small", root / "mem-store-small")
        mem_large = run_child(large, root / "mem-large", root / "mem-store-large")
    figures = {
        "items": args.items,
        "memory": {"items_1x": args.items, "items_10x": 10 * args.items,
                   "peak_rss_1x_mb": round(mem_small["peak_rss_mb"]), "peak_rss_10x_mb": round(mem_large["peak_rss_mb"]),
                   "ratio_10x_over_1x": round(mem_large["peak_rss_mb"] / mem_small["peak_rss_mb"], 2)},
    }
    print(json.dumps(figures, indent=2))
    if args.json:
        args.json.write_text(json.dumps(figures, indent=2) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
