"""``s2sbench build``: synthesize, verify and assemble one or more tasks into a build directory."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from s2sbench.flows.commands import add_command
from s2sbench.flows.runners import add_runner_arguments, make_task_runner

EXAMPLES = """examples:
  s2sbench build demo-stories-en --out build/
  s2sbench build demo-stories-en demo-stories-zh --out build/ --limit 4
  s2sbench build my_task.yaml --out build/ --runner dask --address tcp://scheduler:8786
"""


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = add_command(
        subparsers,
        "build",
        help="build a spoken benchmark (items, TTS, ASR gate, dataset)",
        description="Build a spoken benchmark: load items, synthesize, verify with Whisper, assemble a dataset.",
        epilog=EXAMPLES,
    )
    parser.add_argument("tasks", nargs="+", metavar="TASK", help="task name from `s2sbench tasks` or a task YAML path")
    parser.add_argument("--out", required=True, type=Path, help="build directory (re-running resumes it)")
    parser.add_argument("--limit", type=int, help="use only the first N items of each task")
    parser.add_argument("--shard-size", type=int, default=8, help="items per shard (unit of work and of resume)")
    parser.add_argument("--store", type=Path, help="clip store (default: $S2SBENCH_CLIP_STORE or ~/.cache/s2sbench/clips)")
    parser.add_argument("--seed", type=int, default=0, help="first synthesis seed; retries use the next ones")
    add_runner_arguments(parser)
    parser.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    from s2sbench.flows.build import build_flow
    from s2sbench.pipeline.tasks import load_task

    for task in args.tasks:  # a config error is reported before the orchestrator starts
        load_task(task)
    runner = make_task_runner(args.runner, args.workers, args.address)
    report = build_flow.with_options(task_runner=runner)(
        tasks=args.tasks,
        out_dir=str(args.out),
        limit=args.limit,
        shard_size=args.shard_size,
        store_root=str(args.store) if args.store else None,
        seed=args.seed,
    )
    print(json.dumps(report["totals"], indent=2))
    print(f"dataset: {args.out / 'dataset'}   report: {args.out / 'build_report.json'}")
    return 0
