"""``s2sbench items``: write a task's item manifest (no synthesis), its dropped rows and its load report.

This is the loading step of ``s2sbench build`` (the same :func:`~s2sbench.pipeline.items.sources.load_task_items`).
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from s2sbench.flows.commands import add_command, positive_int

EXAMPLES = """examples:
  s2sbench items demo-scmmlu-zh --out items.jsonl
  s2sbench items sstorycloze --source-path ~/data/cloze_test_test__spring2016.csv --out sc.jsonl
  s2sbench items xstorycloze-es --source-path ~/data/xstorycloze --out es.jsonl --limit 20
  s2sbench items my_task.yaml --out items.jsonl
writes OUT, OUT with .drops.jsonl (every dropped row with its reason) and OUT with .report.json
"""


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = add_command(
        subparsers,
        "items",
        help="write the item manifest of a task without synthesizing",
        description="Load a task's source, build its candidates and write the items as JSONL.",
        epilog=EXAMPLES,
    )
    parser.add_argument("task", metavar="TASK", help="task name from `s2sbench tasks` or a task YAML path")
    parser.add_argument("--out", required=True, type=Path, help="item manifest to write (JSONL)")
    parser.add_argument("--limit", type=positive_int, help="keep only the first N items")
    parser.add_argument("--source-path", help="read the source from this file or folder instead of source.path")
    parser.add_argument("--hub-id", help="read the source from this hub dataset instead")
    parser.add_argument("--split", help="override source.split")
    parser.add_argument("--on-bad-row", choices=["error", "drop"], help="override source.on_bad_row")
    parser.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    from s2sbench.pipeline.core.manifest import write_json, write_records
    from s2sbench.pipeline.items.load import load_task_items
    from s2sbench.pipeline.items.task_config import override_source
    from s2sbench.pipeline.catalog.tasks import load_task

    task = override_source(
        load_task(args.task), path=args.source_path, hub_id=args.hub_id, split=args.split, on_bad_row=args.on_bad_row
    )
    result = load_task_items(task, args.limit)
    out = args.out
    write_records(out, result.items)
    write_records(out.with_suffix(".drops.jsonl"), result.drops)
    report = result.report()
    write_json(out.with_suffix(".report.json"), report)
    print(json.dumps(report, ensure_ascii=False, indent=2))
    print(f"{len(result.items)} items -> {out}; {len(result.drops)} dropped -> {out.with_suffix('.drops.jsonl')}")
    result.require_items()  # written first, so the drops say why nothing was kept
    return 0
