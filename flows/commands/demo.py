"""``s2sbench demo``: the main job on the embedded default (build the demo set, evaluate it, print the table)."""

from __future__ import annotations

import argparse
import shutil
import time
from pathlib import Path

from s2sbench.flows.commands import add_command, positive_int

#: items of each demo task the demo builds by default: enough for every stage to show what it does (a retry, a drop
#: where the gate finds one, two voices, the conditions), few enough for a first run of about two minutes on 2 cores
DEMO_ITEMS = 5

EXAMPLES = """examples:
  s2sbench demo --out demo-out
  s2sbench demo --out demo-out --limit 14     # every item of the demo files (12-14 a task): tighter intervals, slower
"""


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = add_command(
        subparsers,
        "demo",
        help="build the embedded demo benchmark, evaluate it and print the table",
        description=(
            "Build the demo set (English and Chinese stories written for s2sbench) with offline TTS and the Whisper "
            "gate, evaluate T->T and the cascade S->T baseline (English: Whisper tiny.en -> SmolLM2-135M; Chinese: "
            "Whisper base -> Gemma 3 270M), and print accuracy and degradation per language."
        ),
        epilog=EXAMPLES,
    )
    parser.add_argument("--out", type=Path, default=Path("demo-out"), help="output folder, made fresh (default: demo-out)")
    parser.add_argument("--limit", type=positive_int, default=DEMO_ITEMS,
                        help=f"items of each demo task (default {DEMO_ITEMS}; the demo files hold 12-14 each)")
    parser.add_argument("--keep", action="store_true", help="resume into an existing --out instead of starting fresh")
    parser.set_defaults(handler=run, runs_flow=True)


def run(args: argparse.Namespace) -> int:
    from s2sbench.evaluation.results.summary import results_markdown
    from s2sbench.flows.demo import DEMO_RUNS, REPORT_FILE, demo_flow

    if args.out.exists() and not args.keep:
        shutil.rmtree(args.out)
    started = time.monotonic()
    outcome = demo_flow(out_dir=str(args.out), limit=args.limit)
    evaluated = [run for run in DEMO_RUNS if run.name in outcome.results]
    for run in evaluated:
        print(f"\n# {run.title}\n")
        print(results_markdown(outcome.results[run.name]))
    folders = ", ".join(f"eval/{run.name}/results.json" for run in evaluated)
    print(f"\nwall time {time.monotonic() - started:.0f} s ({outcome.timing_line()}; the rest: Prefect's start-up and "
          f"the tables); outputs in {args.out}/: build/, {folders}, {REPORT_FILE}")
    return 0
