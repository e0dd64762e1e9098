"""Benchmark: Dask versus threads, and peak memory as a build grows (what the flow adds to each stage is
``bench/bench_flow_overhead.py``).

Everything is measured in this one run on the same generated English stories (espeak-ng en-us voice, Whisper
tiny.en gate, context and candidates spoken), each build in its own subprocess so its peak memory (ru_maxrss) is its
own:

  dask        2 local Dask worker processes versus 2 threads, each on a cold store (synthesis included), against a
              Prefect server started once
  memory      peak RSS of a build of N items versus 10 x N items (it must stay flat: audio is streamed, not held)

Usage:  python bench/bench_orchestration.py [--items 4] [--json out.json]
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
from pathlib import Path

NAMES = ["Ann", "Ben", "Cara", "Dan", "Eva", "Finn", "Gail", "Hugo", "Iris", "Jon"]
PLACES = ["market", "library", "station", "park", "bakery", "museum", "harbor", "school", "garden", "stadium"]
ACTIONS = [("bought some bread", "flew to the moon"), ("read a new book", "ate the chairs"),
           ("met an old friend", "turned into a lamp"), ("took a short walk", "swallowed the river")]


def write_task(folder: Path, n_items: int) -> Path:
    """A task of ``n_items`` distinct short stories (distinct texts, so no clip is shared between items)."""
    items = folder / f"stories-{n_items}.jsonl"
    with open(items, "w", encoding="utf-8") as handle:
        for index in range(n_items):
            name, place = NAMES[index % len(NAMES)], PLACES[(index // len(NAMES)) % len(PLACES)]
            right, wrong = ACTIONS[index % len(ACTIONS)]
            context = f"{name} went to the {place} on day {index + 1}. It was a quiet morning."
            row = {"id": f"b{index}", "context": context, "candidates": [f"There {name} {right}.", f"There {name} {wrong}."], "right": 0}
            handle.write(json.dumps(row) + "\n")
    task = folder / f"bench-{n_items}.yaml"
    task.write_text(
        f"name: bench-{n_items}\nlanguage: en\nsource: {{loader: jsonl, path: {items}}}\nvoices: [espeak-en-us]\n"
        "speak: [context, candidates]\ngate: {metric: wer, max_error_rate: 0.5, max_attempts: 1}\n",
        encoding="utf-8",
    )
    return task


CHILD = r"""
import json, resource, sys, time
from pathlib import Path
mode, task, out, store, runner = sys.argv[1:6]
SHARD = 2  # several shards even at 4 items, so threads and Dask workers have work to share
started = time.perf_counter()
if mode == "loop":
    from s2sbench.pipeline.assemble import assemble_build
    from s2sbench.pipeline.build import prepare_items, shard_items, speak_shard
    from s2sbench.pipeline.tasks import load_task
    config = load_task(task)
    items = prepare_items(config, Path(out))
    for index, shard in enumerate(shard_items(items, SHARD)):
        speak_shard(config, shard, index, Path(out), Path(store))
    assemble_build(Path(out), [config], SHARD, Path(store))
else:
    from s2sbench.flows.build import build_flow
    from s2sbench.flows.runners import make_task_runner
    flow = build_flow.with_options(task_runner=make_task_runner(runner, workers=2))
    flow(tasks=[task], out_dir=out, store_root=store, shard_size=SHARD)
wall = time.perf_counter() - started
print(json.dumps({"wall_s": wall, "peak_rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024}))
"""


def run_child(mode: str, task: Path, out: Path, store: Path, runner: str = "threads", env: dict | None = None) -> dict:
    result = subprocess.run([sys.executable, "-c", CHILD, mode, str(task), str(out), str(store), runner],
                            capture_output=True, text=True, env=env or os.environ.copy(), check=False)
    if result.returncode != 0:
        raise RuntimeError(f"{mode} build failed:\n{result.stderr[-3000:]}")
    figures = json.loads(result.stdout.strip().splitlines()[-1])
    # Dask worker processes are children of the child: count their peak too
    figures["children_peak_rss_mb"] = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
    return figures


def readme_section(figures: dict) -> str:
    dask, memory = figures["dask_vs_threads"], figures["memory"]
    return "\n".join([
        f"{figures['items']} generated stories (espeak-ng en-us, Whisper tiny.en gate, context and candidates spoken, "
        "shard size 2), each build in its own subprocess.", "",
        "| measure | value |", "|---|---|",
        f"| 2 threads, cold store | {dask['threads_2_s']} s |",
        f"| 2 local Dask worker processes, cold store | {dask['dask_2_workers_s']} s |",
        f"| **Dask / threads** | **{dask['dask_over_threads']}x** |",
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
        # a private Prefect home: the bench never contends with (or writes into) the user's Prefect database
        os.environ["PREFECT_HOME"] = str(root / "prefect")
        os.environ.setdefault("PREFECT_SERVER_ANALYTICS_ENABLED", "false")
        from prefect.testing.utilities import prefect_test_harness

        small, large = write_task(root, args.items), write_task(root, 10 * args.items)
        with prefect_test_harness(server_startup_timeout=180):
            from prefect.settings import PREFECT_API_URL

            env = {**os.environ, "PREFECT_API_URL": PREFECT_API_URL.value()}
            threads = run_child("flow", small, root / "threads", root / "cold-threads", "threads", env)
            dask = run_child("flow", small, root / "dask", root / "cold-dask", "dask", env)
        mem_small = run_child("loop", small, root / "mem-small", root / "mem-store-small")
        mem_large = run_child("loop", large, root / "mem-large", root / "mem-store-large")

    figures = {
        "items": args.items,
        "dask_vs_threads": {"threads_2_s": round(threads["wall_s"], 2), "dask_2_workers_s": round(dask["wall_s"], 2),
                            "dask_over_threads": round(dask["wall_s"] / threads["wall_s"], 2)},
        "memory": {"items_1x": args.items, "items_10x": 10 * args.items,
                   "peak_rss_1x_mb": round(mem_small["peak_rss_mb"]), "peak_rss_10x_mb": round(mem_large["peak_rss_mb"]),
                   "ratio_10x_over_1x": round(mem_large["peak_rss_mb"] / mem_small["peak_rss_mb"], 2)},
    }
    print(json.dumps(figures, indent=2))
    if args.json:
        args.json.write_text(json.dumps(figures, indent=2) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
