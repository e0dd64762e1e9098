"""Scoring speed: items per second of the fast path versus a reference-style loop, in one run on one model.

The reference loop is what the original S2SBench code does: one forward pass per (context, candidate), batch size 1,
the context re-encoded for every candidate (``shared_prefix=False, batch_size=1``). The fast path encodes each
item's context once: the contexts of several items fill one KV cache in one pass, and all their candidates run in a
second pass on it (up to 32 candidates a pass). A third row batches full sequences by length without prefix sharing,
to show which part of the gain comes from where.

    python bench/bench_scoring.py                       # offline SmolLM2-135M, T->T, demo stories, CPU
    python bench/bench_scoring.py --model hf-causal --model-option model=Qwen/Qwen2.5-0.5B --device cuda
    python bench/run_all.py --only scoring              # run it and rewrite its section of bench/README.md

2-candidate items are the demo stories (right and wrong ending); 4-candidate items add the two endings of the next
story as extra wrong candidates, as in sCMMLU's one right and three wrong statements.
"""

from __future__ import annotations

import argparse
import json
import platform
import statistics
import sys
import time
from pathlib import Path

import yaml

from s2sbench.evaluation.models import Request, get_adapter

DEMO = Path(__file__).resolve().parents[1] / "data" / "demo" / "stories_en.jsonl"


def load_items(path: Path, n_candidates: int) -> list[tuple[str, list[str]]]:
    stories = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
    items = []
    for index, story in enumerate(stories):
        candidates = list(story["candidates"])
        if n_candidates == 4:
            candidates += stories[(index + 1) % len(stories)]["candidates"]
        items.append((story["context"], candidates[:n_candidates]))
    return items


def requests_of(items: list[tuple[str, list[str]]]) -> list[Request]:
    return [Request(context=context, continuation=" " + ending, group=f"item{i}")
            for i, (context, candidates) in enumerate(items) for ending in candidates]


def time_once(adapter, requests: list[Request]) -> tuple[float, list[float]]:
    start = time.perf_counter()
    results = adapter.loglikelihood(requests)
    return time.perf_counter() - start, [r.sum_logprob for r in results]


def run(model: str, options: dict[str, object], device: str | None, repeats: int, limit: int | None) -> dict:
    adapter = get_adapter(model, device=device, **options)
    variants = {
        "reference loop (batch 1, context re-encoded)": {"shared_prefix": False, "batch_size": 1},
        "batched by length, no prefix sharing": {"shared_prefix": False, "batch_size": 32},
        "shared prefix (context once, items packed)": {"shared_prefix": True, "batch_size": 32},
    }
    report = {"model": adapter.model_id, "device": adapter.device, "dtype": str(adapter.dtype).replace("torch.", ""),
              "machine": f"{platform.processor() or platform.machine()}, {_threads()} torch threads",
              "repeats": repeats, "tasks": {}}
    for n_candidates in (2, 4):
        items = load_items(DEMO, n_candidates)[:limit]
        requests = requests_of(items)
        adapter.shared_prefix, adapter.batch_size = True, 32
        adapter.loglikelihood(requests[:n_candidates])  # warm-up: first-call allocations are not scoring speed
        seconds: dict[str, list[float]] = {name: [] for name in variants}
        scores: dict[str, list[float]] = {}
        for _ in range(repeats):  # interleaved, so load from other processes hits every variant alike
            for name, settings in variants.items():
                adapter.shared_prefix, adapter.batch_size = settings["shared_prefix"], settings["batch_size"]
                elapsed, scores[name] = time_once(adapter, requests)
                seconds[name].append(elapsed)
                print(f"{n_candidates} candidates, {name}: {elapsed:.1f} s", file=sys.stderr, flush=True)
        reference = next(iter(variants))
        rows = {}
        for name in variants:
            median_s = statistics.median(seconds[name])
            rows[name] = {"items_per_s": len(items) / median_s, "median_s": median_s,
                          "max_abs_diff_vs_reference": max(abs(a - b) for a, b in zip(scores[name], scores[reference]))}
        for name in variants:
            rows[name]["speedup"] = rows[name]["items_per_s"] / rows[reference]["items_per_s"]
            # the same ratio within each interleaved round: its spread shows how much the machine's load moved it
            per_round = [ref / mine for ref, mine in zip(seconds[reference], seconds[name])]
            rows[name]["speedup_range"] = [min(per_round), max(per_round)]
        report["tasks"][f"{n_candidates} candidates"] = {"items": len(items), "requests": len(requests), "rows": rows}
    return report


def _threads() -> int:
    import torch

    return torch.get_num_threads()


def readme_section(report: dict) -> str:
    lines = [f"On {report['model']}, {report['device']} "
             f"{report['dtype']} ({report['machine']}), T->T on the demo stories, median of {report['repeats']} "
             "interleaved runs. Speed-up is items per second relative to the reference loop of the same run; "
             "per-round range is that ratio within each round; `max abs diff` is the largest difference of a sum "
             "log-probability from the reference loop's.", ""]
    for task, result in report["tasks"].items():
        lines += [f"**{task}** ({result['items']} items, {result['requests']} requests)", "",
                  "| path | items/s | speed-up | per-round range | max abs diff |", "|---|---|---|---|---|"]
        for name, row in result["rows"].items():
            low, high = row["speedup_range"]
            lines.append(f"| {name} | {row['items_per_s']:.2f} | {row['speedup']:.2f}x | {low:.2f}-{high:.2f}x | "
                         f"{row['max_abs_diff_vs_reference']:.1e} |")
        lines.append("")
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--model", default="smollm2", help="adapter name (default: the offline SmolLM2)")
    parser.add_argument("--model-option", action="append", default=[], metavar="KEY=VALUE",
                        help="option passed to the adapter, e.g. model=HuggingFaceTB/SmolLM2-135M-Instruct")
    parser.add_argument("--device", default=None, help="cpu, cuda (default: CUDA when available)")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--limit", type=int, help="score only the first N demo stories")
    parser.add_argument("--threads", type=int, help="torch CPU threads (default: torch's choice)")
    parser.add_argument("--json", type=Path, help="also write the figures as JSON here")
    args = parser.parse_args()
    # values are YAML, as in `s2sbench eval --model-arg`: batch_size=4 is an int, shared_prefix=false a bool
    options = {key: yaml.safe_load(value) for key, value in (option.split("=", 1) for option in args.model_option)}
    if args.threads:
        import torch

        torch.set_num_threads(args.threads)
    report = run(args.model, options, args.device, args.repeats, args.limit)
    print(readme_section(report))
    if args.json:
        args.json.write_text(json.dumps(report, indent=2), encoding="utf-8")


if __name__ == "__main__":
    main()
