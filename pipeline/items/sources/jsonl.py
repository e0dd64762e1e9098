"""Generic tables: JSONL, CSV or TSV, one item per row, with a column mapping in the task config.

Default columns are ``id, context, candidates, right``. ``source.options.columns`` maps other names, for example
``{id: uttid, context: first}``; ``context`` may list several columns (joined as sentences) and ``candidates`` may
list one column per candidate (CSV has no list cells). ``right`` is a 0-based index unless
``source.options.labels`` gives the label of each position (``[A, B, C, D]`` or ``[1, 2]``).
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any, Literal

from s2sbench.pipeline.core.records import Item
from s2sbench.pipeline.items.sources.rows import (DroppedRow, ReadOptions, Row, RowPolicy, join_sentences, read_hub,
                                            read_table, require_columns, source_path, takes_options)
from s2sbench.pipeline.items.task_config import TaskConfig

DEFAULT_COLUMNS: dict[str, Any] = {"id": "id", "context": "context", "candidates": "candidates", "right": "right"}


class TableOptions(ReadOptions):
    # item field -> the source column(s) holding it
    columns: dict[Literal["id", "context", "candidates", "right"], str | list[str]] = {}
    labels: list[str | int] | None = None  # the label of each candidate position, when ``right`` is a label


@takes_options(TableOptions)
def load_table(task: TaskConfig) -> Iterator[Item | DroppedRow]:
    options = task.source.options
    columns = {**DEFAULT_COLUMNS, **options.get("columns", {})}
    labels = [str(label) for label in options["labels"]] if "labels" in options else None
    if task.source.hub_id:
        rows = read_hub(task.source.hub_id, task.source.split, options)
    else:
        rows = read_table(source_path(task, task.source.loader, reads="file"), options)
    policy = RowPolicy(task)
    for row in rows:
        require_columns(row, _flat(columns.values()), " (map them with source.options.columns)")
        yield _item(task, policy, row, columns, labels)


def _flat(values: Any) -> list[str]:
    return [name for value in values for name in (value if isinstance(value, list) else [value])]


def _item(task: TaskConfig, policy: RowPolicy, row: Row, columns: dict, labels: list[str] | None) -> Item | DroppedRow:
    if isinstance(columns["context"], list):
        context = join_sentences([str(row.values[name]) for name in columns["context"]], task.language)
    else:
        context = row.values[columns["context"]]
    if isinstance(columns["candidates"], list):
        candidates = [row.values[name] for name in columns["candidates"]]
    else:
        candidates = row.values[columns["candidates"]]
        if isinstance(candidates, str) and candidates.startswith("["):
            try:
                candidates = json.loads(candidates)  # a list written into one CSV cell
            except json.JSONDecodeError as error:
                return policy.bad(row, columns["candidates"], f"not a JSON list: {error.msg}")
    right = row.values[columns["right"]]
    if labels is not None:
        if str(right).strip() not in labels:
            return policy.bad(row, columns["right"], f"label {right!r} is not one of {', '.join(labels)}")
        right = labels.index(str(right).strip())
    elif isinstance(right, str) and right.strip().lstrip("-").isdigit():
        right = int(right)
    return policy.item(
        row,
        columns["id"],
        id=str(row.values[columns["id"]]),
        context=context,
        candidates=candidates,
        right=right,
    )
