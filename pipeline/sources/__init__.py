"""Loaders: one module per public format, each turning a source into :class:`~s2sbench.pipeline.records.Item` s.

A loader is a function ``(task: TaskConfig) -> Iterator[Item | DroppedRow]`` registered by name; the task's
``source.loader`` picks it. Modules are imported only when their loader is used. :func:`load_task_items` runs the
loader and the task's candidate construction and keeps every drop with its reason, so kept + dropped = rows in.
"""

from __future__ import annotations

import importlib
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pydantic import ConfigDict

from s2sbench.pipeline.records import Drop, Item, Record
from s2sbench.pipeline.sources.rows import DroppedRow
from s2sbench.pipeline.tasks import TaskConfig, TaskConfigError

Loader = Callable[[TaskConfig], Iterator[Item | DroppedRow]]

# name -> "module:function"; modules import lazily so a missing optional dependency only hurts its own loader
LOADERS: dict[str, str] = {
    "jsonl": "s2sbench.pipeline.sources.jsonl:load_table",
    "csv": "s2sbench.pipeline.sources.jsonl:load_table",
    "storycloze": "s2sbench.pipeline.sources.storycloze:load_storycloze",
    "xstorycloze": "s2sbench.pipeline.sources.xstorycloze:load_xstorycloze",
    "cmmlu": "s2sbench.pipeline.sources.cmmlu:load_cmmlu",
}


def get_loader(name: str) -> Loader:
    if name not in LOADERS:
        raise TaskConfigError(f"unknown loader '{name}' (known: {', '.join(sorted(LOADERS))})")
    module_name, function = LOADERS[name].split(":")
    return getattr(importlib.import_module(module_name), function)


class LoadReport(Record):
    """How a task's items were loaded: source rows looked at, kept and dropped (by stage, by reason code), and the
    candidate builder's counts (who handled how many, why the rest failed; a builder may add counts of its own,
    such as the rule rewriter's ``handled_by_rule``, kept as further fields)."""

    model_config = ConfigDict(frozen=True, extra="allow")

    task: str
    rows_in: int
    kept: int
    dropped: int
    dropped_by_stage: dict[str, int]
    source_drop_reasons: dict[str, int]
    construction: str
    handled: dict[str, int]
    rejected: dict[str, dict[str, int]]


@dataclass
class LoadResult:
    """The kept items of a task and everything that was dropped on the way, with the builder's counts."""

    task: str
    items: list[Item]
    drops: list[Drop]
    rows_in: int  # source rows looked at (all of them without a limit)
    construction: dict[str, Any] = field(default_factory=dict)  # the candidate builder's report

    def report(self) -> dict[str, Any]:
        """:meth:`load_report` as plain JSON values."""
        return self.load_report().model_dump(mode="json")

    def load_report(self) -> LoadReport:
        return LoadReport(
            task=self.task,
            rows_in=self.rows_in,
            kept=len(self.items),
            dropped=len(self.drops),
            dropped_by_stage=dict(Counter(drop.stage for drop in self.drops)),
            source_drop_reasons=dict(Counter(drop.reason.code for drop in self.drops if drop.stage == "load")),
            **self.construction,
        )


def load_task_items(task: TaskConfig, limit: int | None = None) -> LoadResult:
    """The items of a task, in source order, after candidate construction, cut to ``limit`` kept items (or the
    task's ``limit``), with the dropped rows and the builder's counts (who handled how many, why the rest failed)."""
    from s2sbench.pipeline.candidates import get_builder

    builder = get_builder(task)
    cap = limit if limit is not None else task.limit
    loaded = list(get_loader(task.source.loader)(task))
    builder.prepare([entry for entry in loaded if isinstance(entry, Item)])
    items: list[Item] = []
    drops: list[Drop] = []
    rows_in = 0
    for entry in loaded:
        if cap is not None and len(items) >= cap:
            break
        rows_in += 1
        result = builder.build(entry) if isinstance(entry, Item) else entry
        if isinstance(result, Item):
            items.append(result)
        else:
            drops.append(result.to_drop(task.name))
    return LoadResult(task.name, items, drops, rows_in, builder.report())


def override_source(task: TaskConfig, **changes: str | None) -> TaskConfig:
    """``task`` with some ``source`` settings replaced (the CLI's --source-path, --hub-id ...); None keeps a setting.

    A path given here is relative to the current folder, not to the task file.
    """
    update = {key: value for key, value in changes.items() if value is not None}
    if "path" in update:
        update["path"] = str(Path(update["path"]).expanduser().resolve())
        update.setdefault("hub_id", None)
    if "hub_id" in update:
        update.setdefault("path", None)
    source = task.source.model_validate({**task.source.model_dump(), **update})
    return task.model_copy(update={"source": source})


def load_items(task: TaskConfig, limit: int | None = None) -> list[Item]:
    """The kept items of a task (see :func:`load_task_items` for the drops and counts)."""
    return load_task_items(task, limit).items
