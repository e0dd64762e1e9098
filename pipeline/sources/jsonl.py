"""Generic JSONL source: one item per line, with a column mapping in the task config.

Default columns are ``id, context, candidates, right``; ``source.options.columns`` maps other names, for example
``{id: uttid, context: first}``.
"""

from __future__ import annotations

import json
from collections.abc import Iterator

from s2sbench.pipeline.manifest import ManifestError, parse_record
from s2sbench.pipeline.records import Item
from s2sbench.pipeline.tasks import TaskConfig, TaskConfigError

DEFAULT_COLUMNS = {"id": "id", "context": "context", "candidates": "candidates", "right": "right"}


def load_jsonl(task: TaskConfig) -> Iterator[Item]:
    if not task.source.path:
        raise TaskConfigError(f"{task.path}: key 'source.path': the jsonl loader needs a path")
    path = task.resolve(task.source.path)
    columns = {**DEFAULT_COLUMNS, **task.source.options.get("columns", {})}
    seen: dict[str, int] = {}
    with open(path, "rb") as handle:
        for number, raw in enumerate(handle, start=1):
            try:
                text = raw.decode("utf-8")
            except UnicodeDecodeError as error:
                raise ManifestError(path, number, "<row>", f"not UTF-8 ({error.reason} at byte {error.start})") from None
            if not text.strip():
                continue
            try:
                row = json.loads(text)
            except json.JSONDecodeError as error:
                raise ManifestError(path, number, "<row>", f"invalid JSON: {error.msg}") from None
            if not isinstance(row, dict):
                raise ManifestError(path, number, "<row>", "expected a JSON object")
            for field, column in columns.items():
                if column not in row:
                    raise ManifestError(path, number, column, f"missing column (mapped to '{field}')")
            item_id = str(row[columns["id"]])
            if item_id in seen:
                raise ManifestError(path, number, columns["id"], f"duplicate id '{item_id}' (first on line {seen[item_id]})")
            seen[item_id] = number
            record = {
                "id": item_id,
                "task": task.name,
                "language": task.language,
                "context": row[columns["context"]],
                "candidates": row[columns["candidates"]],
                "right": row[columns["right"]],
                "source": {"file": str(path), "row": number},
            }
            yield parse_record(Item, record, path, number)
