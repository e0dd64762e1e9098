"""``s2sbench build``: synthesize, verify and assemble one or more tasks into a build directory."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from s2sbench.flows.commands import add_command, add_device_argument, positive_float, positive_int
from s2sbench.flows.commands import add_runner_arguments
from s2sbench.flows.runners import check_scheduler, make_task_runner
from s2sbench.pipeline.buildfolder.build_report import BuildReport
from s2sbench.pipeline.run.progress import DEFAULT_INTERVAL_S

EXAMPLES = """examples:
  s2sbench build demo-stories-en --out build/
  s2sbench build demo-stories-en demo-stories-zh --out build/ --limit 4
  s2sbench build my_task.yaml --out build/ --runner dask --address tcp://scheduler:8786
  s2sbench build demo-stories-en --out build/ --limit 8 --rebuild   # the inputs changed: start this folder over
  s2sbench build sstorycloze --source-path ~/data/cloze_test_2016.csv --out build/ --dry-run   # the plan, no build

Re-running the same command resumes a killed build. A build folder remembers its inputs (source file hashes, task
and voice settings, --limit, --shard-size, --seed); resuming with other inputs is refused with what changed, and
--rebuild discards the folder's work and builds it again (clips already in the clip store are not made again).

A build logs its progress (rows done per task, clips per minute, an ETA) every --progress-every seconds and shows a
bar on a terminal. --dry-run prints what the build would make and cost on this machine (clips, those already in
the clip store, wall and CPU time, disk), from the clip store's record of earlier builds here or from a short
calibration build in a temporary folder, and writes nothing into --out or the clip store.
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
    parser.add_argument("--limit", type=positive_int, help="use only the first N items of each task")
    parser.add_argument("--shard-size", type=positive_int, default=8, help="items per shard (unit of work and of resume)")
    parser.add_argument("--store", type=Path, help="clip store (default: $S2SBENCH_CLIP_STORE or ~/.cache/s2sbench/clips)")
    parser.add_argument("--seed", type=int, default=0, help="first synthesis seed; retries use the next ones")
    parser.add_argument("--rebuild", action="store_true", help="discard this folder's earlier build and start over")
    parser.add_argument("--source-path", help="read the (one) task's source from this file or folder instead of source.path")
    parser.add_argument("--dry-run", action="store_true", help="print the plan (clips, time, disk) and build nothing")
    parser.add_argument("--progress-every", type=positive_float, default=DEFAULT_INTERVAL_S, metavar="SECONDS",
                        help=f"seconds between progress lines (default {DEFAULT_INTERVAL_S:g})")
    add_device_argument(parser, "the voices and the gate's ASR")
    add_runner_arguments(parser)
    parser.set_defaults(handler=run, runs_flow=lambda args: not args.dry_run)  # a plan needs no Prefect server


def load_configs(args: argparse.Namespace) -> list:
    from s2sbench.flows.build import load_build_tasks

    return load_build_tasks(args.tasks, args.source_path)


def dry_run(args: argparse.Namespace, configs: list) -> int:
    from s2sbench.pipeline.run.build_plan import plan_build

    runner = args.runner or ("dask" if args.address else "threads")
    plan = plan_build(configs, args.out, limit=args.limit, shard_size=args.shard_size, seed=args.seed, store_root=args.store,
                      runner=runner, workers=args.workers)  # fmt: skip
    print(plan.text())
    return 0


def run(args: argparse.Namespace) -> int:
    from s2sbench.flows.build import build_flow
    from s2sbench.pipeline.buildfolder.builddir import BuildDir
    from s2sbench.pipeline.buildfolder.fingerprint import build_inputs
    from s2sbench.pipeline.run.build import refuse_impossible_conditions

    # config errors, a folder in use or built from other inputs are reported before the orchestrator starts
    configs = load_configs(args)
    refuse_impossible_conditions(configs, args.limit)
    if args.dry_run:
        return dry_run(args, configs)
    BuildDir(args.out).preflight(build_inputs(configs, args.limit, args.shard_size, args.seed), args.rebuild)
    runner = make_task_runner(args.runner, args.workers, args.address)
    if args.address:
        check_scheduler(args.address)
    report = build_flow.with_options(task_runner=runner)(
        tasks=args.tasks,
        out_dir=str(args.out),
        limit=args.limit,
        shard_size=args.shard_size,
        store_root=str(args.store) if args.store else None,
        seed=args.seed,
        rebuild=args.rebuild,
        source_path=args.source_path,
        progress_interval_s=args.progress_every,
    )
    print(json.dumps(report["totals"], indent=2))
    remade = report["this_run"]["clips_remade"] + len(report["integrity"]["clips_remade"])
    if remade:
        print(f"{remade} clip(s) were damaged or missing in the clip store and were made again (build_report.json: integrity)")
    build = BuildDir(args.out)
    print(f"dataset: {build.dataset_dir}   report: {build.report_path}")
    built = BuildReport.model_validate({key: value for key, value in report.items() if key != "this_run"})
    for warning in built.low_yield_warnings():
        print(f"warning: {warning}", file=sys.stderr)
    return 0
