"""Loaders: one module per public format, each turning a source into :class:`~s2sbench.pipeline.core.records.Item` s.

A loader is a function ``(task: TaskConfig) -> Iterator[Item | DroppedRow]`` registered by name; the task's
``source.loader`` picks it. Modules are imported only when their loader is used. Loaders know the task config and
nothing above it; :func:`s2sbench.pipeline.items.load.load_task_items` runs a task's loader and then its candidate
builder, and keeps every drop with its reason (:class:`LoadResult`), so kept + dropped = rows in.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

from pydantic import ConfigDict

from s2sbench.pipeline.core.errors import DataError
from s2sbench.pipeline.core.records import Drop, Item, Record
from s2sbench.pipeline.core.registry import Registry
from s2sbench.pipeline.items.sources.rows import DroppedRow
from s2sbench.pipeline.items.task_config import TaskConfig

Loader = Callable[[TaskConfig], Iterator[Item | DroppedRow]]

#: name -> loader; modules import lazily so a missing optional dependency only hurts its own loader. A loader may
#: declare its ``source.options`` (:func:`~s2sbench.pipeline.items.sources.rows.takes_options`), and the files it reads
#: (``loader.source_files(task)``, where ``source.path`` is a folder that holds more than its items, such as audio).
LOADERS: Registry[Loader] = Registry("loader", {
    "jsonl": "s2sbench.pipeline.items.sources.jsonl:load_table",
    "csv": "s2sbench.pipeline.items.sources.jsonl:load_table",
    "storycloze": "s2sbench.pipeline.items.sources.storycloze:load_storycloze",
    "xstorycloze": "s2sbench.pipeline.items.sources.xstorycloze:load_xstorycloze",
    "cmmlu": "s2sbench.pipeline.items.sources.cmmlu:load_cmmlu",
    "jcommonsenseqa": "s2sbench.pipeline.items.sources.jcommonsenseqa:load_jcommonsenseqa",
    "s2sbench-release": "s2sbench.pipeline.items.sources.release:load_release",
}, group="s2sbench.loaders")


class EmptySourceError(DataError):
    """A task whose source gave no item to keep: an empty benchmark is never what was asked for."""


def get_loader(name: str) -> Loader:
    return LOADERS.get(name)


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
    config: TaskConfig | None = None

    def require_items(self) -> "LoadResult":
        """This result, or :class:`EmptySourceError` saying why no item was kept (an empty benchmark is never the
        point of a build)."""
        if self.items:
            return self
        task = self.config
        where = f"task '{self.task}'" + (f" ({task.path})" if task is not None and task.path else "")
        source = (task.source.hub_id or task.source.path) if task is not None else "its source"
        if self.rows_in == 0:
            raise EmptySourceError(f"{where}: {source} has no rows; point source.path at a file with items")
        reasons = Counter(drop.reason.code for drop in self.drops)
        listed = ", ".join(f"{code} x{count}" for code, count in reasons.most_common(5))
        first = self.drops[0].reason
        raise EmptySourceError(f"{where}: none of the {self.rows_in} rows of {source} was kept ({listed}); the first: "
                               f"{first.code}: {first.detail}")

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
