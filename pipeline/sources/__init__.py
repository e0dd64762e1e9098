"""Loaders: one module per public format, each turning a source into :class:`~s2sbench.pipeline.records.Item` s.

A loader is a function ``(task: TaskConfig) -> Iterator[Item]`` registered by name; the task's ``source.loader``
picks it. Modules are imported only when their loader is used.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Iterator

from s2sbench.pipeline.records import Item
from s2sbench.pipeline.tasks import TaskConfig, TaskConfigError

Loader = Callable[[TaskConfig], Iterator[Item]]

# name -> "module:function"; modules import lazily so a missing optional dependency only hurts its own loader
LOADERS: dict[str, str] = {
    "jsonl": "s2sbench.pipeline.sources.jsonl:load_jsonl",
}


def get_loader(name: str) -> Loader:
    if name not in LOADERS:
        raise TaskConfigError(f"unknown loader '{name}' (known: {', '.join(sorted(LOADERS))})")
    module_name, function = LOADERS[name].split(":")
    return getattr(importlib.import_module(module_name), function)


def load_items(task: TaskConfig, limit: int | None = None) -> list[Item]:
    """The items of a task, in source order, after candidate construction, cut to ``limit`` (or the task's)."""
    items = []
    cap = limit if limit is not None else task.limit
    for item in get_loader(task.source.loader)(task):
        if cap is not None and len(items) >= cap:
            break
        items.append(item)
    return items
