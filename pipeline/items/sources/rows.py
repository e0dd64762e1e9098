"""What every loader shares: reading tables (CSV, TSV, JSONL, hub datasets) row by row with their line numbers,
and the bad-row policy that turns a bad row into an error naming file, line and field, or into a counted drop.
"""

from __future__ import annotations

import csv
import io
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from s2sbench.data import DATA_DIR
from s2sbench.pipeline.text.languages import sentence_separator
from s2sbench.pipeline.core.manifest import ManifestError, iter_json_objects, parse_record
from s2sbench.pipeline.core.records import Drop, Item, Reason
from s2sbench.pipeline.core.schema import StrictSection
from s2sbench.pipeline.items.task_config import TaskConfig, TaskConfigError


class ReadOptions(StrictSection):
    """``source.options`` every table loader takes (each loader's own options add to these)."""

    encoding: str | None = None  # of a local file (default utf-8, with or without a BOM)
    delimiter: str | None = None  # of a CSV/TSV file (default: tab for .tsv/.tab, else comma)
    config: str | None = None  # of a hub dataset
    data_dir: str | None = None  # of a hub dataset that needs a manual download


def takes_options(options: type[StrictSection]):
    """Declare the ``source.options`` a loader takes, so a task file is checked against them when it is read."""

    def declare(loader):
        loader.options = options
        return loader

    return declare


@dataclass(frozen=True)
class DroppedRow:
    """A source row or item that did not become a kept item, and why.

    ``stage`` is ``load`` (a bad source row) or ``rewrite`` (candidate construction: a rewriter, the translator).
    """

    file: str
    row: int
    field: str
    reason: str
    stage: str = "load"
    item_id: str = ""
    code: str = ""  # the reason's code when ``reason`` is a sentence (``text_too_long``); else the reason is the code

    def to_drop(self, task: str) -> Drop:
        where = self.item_id or f"{self.file}:{self.row}"
        detail = f"field '{self.field}', {self.file}:{self.row}"
        return Drop(
            id=f"{where}|{self.stage}",
            task=task,
            item_id=where,
            stage=self.stage,
            reason=Reason(code=self.code, detail=f"{self.reason}; {detail}") if self.code
            else Reason(code=self.reason, detail=detail),
        )


@dataclass(frozen=True)
class Row:
    """One row of a table: its values by column name, and where it starts (1-based line; the header is line 1)."""

    file: str
    line: int
    values: dict[str, Any]


class RowPolicy:
    """Applies ``source.on_bad_row``: ``error`` raises :class:`ManifestError`, ``drop`` returns a
    :class:`DroppedRow`."""

    def __init__(self, task: TaskConfig):
        self.task = task
        self.drop = task.source.on_bad_row == "drop"
        self._ids: dict[str, int] = {}

    def bad(self, row: Row, field: str, problem: str) -> DroppedRow:
        if not self.drop:
            raise ManifestError(row.file, row.line, field, problem)
        return DroppedRow(row.file, row.line, field, problem)

    def item(self, row: Row, id_field: str, **fields: Any) -> Item | DroppedRow:
        """The Item of ``row`` from its ``fields`` (id, context, candidates, right, meta), with the task's name and
        language and the row's provenance; a problem (duplicate ids included) goes through the policy."""
        record = {"task": self.task.name, "language": self.task.language, **fields, "source": source_of(row)}
        first = self._ids.get(record["id"])
        if first is not None:
            return self.bad(row, id_field, f"duplicate id '{record['id']}' (first on line {first})")
        try:
            item = parse_record(Item, record, row.file, row.line)
        except ManifestError as error:
            if not self.drop:
                raise
            return DroppedRow(row.file, row.line, error.field, error.problem)
        self._ids[item.id] = row.line
        return item


def join_sentences(sentences: list[str], language: str) -> str:
    return sentence_separator(language).join(sentence.strip() for sentence in sentences)


def source_path(task: TaskConfig, loader: str, reads: str = "file or folder") -> Path:
    """The task's local source; ``reads`` ("file", "folder") is what the loader takes, anything else is an error."""
    if not task.source.path:
        raise TaskConfigError(f"{task.path}: key 'source.path': the {loader} loader needs a path (or source.hub_id)")
    path = task.resolve(task.source.path)
    if not path.exists():
        raise TaskConfigError(
            f"{task.path}: key 'source.path': {path} does not exist; download the source and point source.path "
            "at it (environment variables such as $HOME are expanded), or pass --source-path"
        )
    if (reads == "file" and path.is_dir()) or (reads == "folder" and not path.is_dir()):
        found = "a folder" if path.is_dir() else "a file"
        raise TaskConfigError(f"{task.path}: key 'source.path': {path} is {found}; the {loader} loader reads a {reads}")
    return path


def decode(path: Path, encoding: str) -> str:
    """The whole text of ``path``; a wrong encoding is an error naming the line and byte, never replaced silently."""
    data = path.read_bytes()
    try:
        return data.decode(encoding)
    except UnicodeDecodeError as error:
        line = data[: error.start].count(b"\n") + 1
        raise ManifestError(
            path, line, "<row>",
            f"not {encoding} ({error.reason} at byte {error.start}); set source.options.encoding (e.g. gbk)",
        ) from None


def read_delimited(path: Path, delimiter: str | None = None, encoding: str = "utf-8-sig") -> Iterator[Row]:
    """Rows of a CSV/TSV file with a header; fields may span lines, ``Row.line`` is where the row starts."""
    if delimiter is None:
        delimiter = "\t" if path.suffix.lower() in {".tsv", ".tab"} else ","
    text = decode(path, encoding)
    reader = csv.reader(io.StringIO(text, newline=""), delimiter=delimiter)
    try:
        header = next(reader)
    except StopIteration:
        raise ManifestError(path, 1, "<header>", "empty file: expected a header row") from None
    start = reader.line_num + 1
    for cells in reader:
        line, start = start, reader.line_num + 1
        if not any(cell.strip() for cell in cells):
            continue
        if len(cells) != len(header):
            raise ManifestError(path, line, "<row>", f"{len(cells)} fields, the header has {len(header)}")
        yield Row(str(path), line, dict(zip(header, cells)))


def source_of(row: Row) -> dict[str, Any]:
    """An item's provenance. Files shipped in ``s2sbench.data`` are named relative to it, so a dataset built from
    them (and published) carries no local path of the machine that built it; user files keep their path."""
    try:
        file = f"s2sbench.data/{Path(row.file).resolve().relative_to(DATA_DIR).as_posix()}"
    except ValueError:
        file = row.file
    return {"file": file, "row": row.line}


def read_jsonl(path: Path, encoding: str = "utf-8") -> Iterator[Row]:
    for number, values in iter_json_objects(path, encoding, hint="set source.options.encoding (e.g. gbk)"):
        yield Row(str(path), number, values)


def read_table(path: Path, options: dict[str, Any]) -> Iterator[Row]:
    encoding = options.get("encoding", "utf-8-sig")
    if path.suffix.lower() in {".jsonl", ".json"}:
        return read_jsonl(path, encoding)
    return read_delimited(path, options.get("delimiter"), encoding)


def read_hub(hub_id: str, split: str | None, options: dict[str, Any]) -> Iterator[Row]:
    """Rows of a Hugging Face dataset (a hub id or a local dataset folder); ``Row.line`` is the 1-based row index."""
    import datasets  # heavy: only when a task reads from the hub

    config = options.get("config")
    dataset = datasets.load_dataset(hub_id, config, split=split or "test", data_dir=options.get("data_dir"))
    name = f"hf://{hub_id}" + (f"/{config}" if config else "") + f":{split or 'test'}"
    for index, values in enumerate(dataset, start=1):
        yield Row(name, index, dict(values))


def require_columns(row: Row, columns: list[str], hint: str = "") -> None:
    """A missing column is a file-level problem (every row would fail), so it is always an error."""
    for column in columns:
        if column not in row.values:
            known = ", ".join(str(name) for name in row.values)
            raise ManifestError(row.file, row.line, column, f"missing column (columns: {known}){hint}")


def text_cells(policy: RowPolicy, row: Row, columns: list[str] | tuple[str, ...],
               empty: str) -> list[str] | DroppedRow:
    """The stripped texts of ``columns``, or the row dropped (or the error raised) at the first empty one, ``empty``
    saying what it is ("empty question", "empty option")."""
    texts = []
    for column in columns:
        text = text_cell(row, column)
        if text is None:
            return policy.bad(row, column, empty)
        texts.append(text)
    return texts


def text_cell(row: Row, column: str) -> str | None:
    """The stripped text of a cell, or None when it is empty."""
    value = row.values.get(column)
    if value is None:
        return None
    text = str(value).strip()
    return text or None
