"""``s2sbench tasks``: list the task registry (``data/tasks/*.yaml``); a broken task file is reported by file and
key."""

from __future__ import annotations

import argparse
import sys

from s2sbench.flows.commands import add_command

EXAMPLES = """examples:
  s2sbench tasks
  s2sbench tasks --dir my_tasks/
"""

COLUMNS = ("name", "language", "loader", "construction", "scoring", "voices", "version")


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = add_command(
        subparsers,
        "tasks",
        help="list the registered tasks",
        description="List the tasks of the registry (one YAML file each) with their language, source and scoring.",
        epilog=EXAMPLES,
    )
    parser.add_argument("--dir", help="a folder of task YAML files to list instead of the shipped registry")
    parser.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    from pathlib import Path

    from s2sbench.flows.commands import CommandError
    from s2sbench.pipeline.core.errors import ConfigError
    from s2sbench.pipeline.catalog.tasks import TASKS_DIR, load_task

    folder = Path(args.dir or TASKS_DIR)
    if not folder.is_dir():
        raise CommandError(f"--dir {folder}: not a folder of task YAML files")
    rows, errors = [], []
    for path in sorted(folder.glob("*.yaml")):
        try:
            task = load_task(path)
        except ConfigError as error:
            errors.append(str(error))
            continue
        scoring = " + ".join([task.scoring, *task.also_report])
        rows.append((task.name, task.language, task.source.loader, task.candidates.construction, scoring,
                     ",".join(task.voices), str(task.version)))
    widths = [max(len(row[index]) for row in [COLUMNS, *rows]) for index in range(len(COLUMNS))]
    for row in [COLUMNS, *rows]:
        print("  ".join(cell.ljust(width) for cell, width in zip(row, widths)).rstrip())
    for error in errors:
        print(f"s2sbench tasks: config error: {error}", file=sys.stderr)
    return ConfigError.exit_code if errors else 0
