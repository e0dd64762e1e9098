"""JSONL manifests of typed records: validated reading, atomic and resumable writing.

A manifest is UTF-8 JSONL (``ensure_ascii=False`` so Chinese stays readable), one record a line. A bad line is a
:class:`ManifestError` naming the file, the line and the field. Writers never rewrite a finished file in place:
whole files are written atomically (temp file + rename), and :class:`ResumableJsonlWriter` appends records keyed
by a deterministic id, skipping ids already on disk, so a killed run resumes without duplicates.
"""

from __future__ import annotations

import functools
import hashlib
import json
import os
import tempfile
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import TypeVar

from pydantic import BaseModel, ValidationError

from s2sbench.pipeline.core.errors import DataError

Record = TypeVar("Record", bound=BaseModel)

_UMASK = os.umask(0)
os.umask(_UMASK)


class ManifestError(DataError):
    """A manifest line that cannot be read as the expected record."""

    def __init__(self, path: str | Path, line: int, field: str, problem: str):
        self.path, self.line, self.field, self.problem = str(path), line, field, problem
        super().__init__(f"{path}:{line}: field '{field}': {problem}")


class DocumentError(DataError):
    """A JSON document (a build report, results, a sidecar) that cannot be read as its record; names file and field."""


class SchemaVersionError(DocumentError):
    """A document written by an s2sbench whose records have another shape (another ``schema_version``)."""


def read_json(path: str | Path) -> object:
    """The decoded JSON of ``path``; invalid JSON or a wrong encoding is a :class:`DocumentError` naming the line."""
    path = Path(path)
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except json.JSONDecodeError as error:
        raise DocumentError(f"{path}:{error.lineno}: not valid JSON ({error.msg})") from None
    except UnicodeDecodeError as error:
        raise DocumentError(f"{path}: not UTF-8 ({error.reason} at byte {error.start})") from None


def parse_document(cls: type[Record], data: object, path: str | Path) -> Record:
    """``data`` (a decoded JSON document) as ``cls``; an error names the file and the first wrong field."""
    try:
        return cls.model_validate(data)
    except ValidationError as error:
        field, problem = _field_of(error)
        raise DocumentError(f"{path}: field '{field}': {problem}") from None


def parse_versioned(cls: type[Record], data: object, path: str | Path, version: int | None = None) -> Record:
    """:func:`parse_document` for a record with a ``schema_version``: another version (none counts as 1, the untyped
    layout) is a :class:`SchemaVersionError` saying what to do, before any other field is looked at."""
    from s2sbench.pipeline.core.records import SCHEMA_VERSION

    expected = SCHEMA_VERSION if version is None else version
    found = data.get("schema_version", 1) if isinstance(data, dict) else None
    if found != expected:
        raise SchemaVersionError(
            f"{path}: field 'schema_version': {found!r}, this s2sbench reads {expected}; it was written by another "
            "version of s2sbench: make it again (a build: `s2sbench build ... --rebuild`, the clip cache is kept)"
        )
    return parse_document(cls, data, path)


def atomic_write_bytes(path: str | Path, data: bytes) -> None:
    """Write ``data`` to ``path`` so that readers see either the old file or the whole new one."""
    path = Path(path)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    except OSError as error:
        error.filename = str(path)  # the file asked for, not a folder or the temporary name
        raise
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
        os.chmod(tmp, 0o666 & ~_UMASK)  # mkstemp makes 0600; outputs get the permissions a plain open() would give
        os.replace(tmp, path)
    except BaseException as error:
        Path(tmp).unlink(missing_ok=True)
        if isinstance(error, OSError):
            error.filename = str(path)
        raise


def atomic_write_text(path: str | Path, text: str) -> None:
    atomic_write_bytes(path, text.encode("utf-8"))


def write_json(path: str | Path, obj: object) -> None:
    atomic_write_text(path, json.dumps(obj, ensure_ascii=False, indent=2, sort_keys=False) + "\n")


@functools.cache
def _strict_yaml_loader():
    """A safe YAML loader that refuses a key given twice in one mapping (PyYAML keeps the last one silently, and the
    error a user then sees is about some other key)."""
    import yaml

    class StrictLoader(yaml.SafeLoader):
        def construct_mapping(self, node, deep=False):
            seen: dict[object, int] = {}
            for key_node, _ in node.value:
                key = self.construct_object(key_node, deep=True)
                line = key_node.start_mark.line + 1
                if isinstance(key, (str, int, float, bool)) and key in seen:
                    raise DuplicateKeyError(f"key '{key}' is given twice, on line {seen[key]} and on line {line}")
                seen.setdefault(key, line)
            return super().construct_mapping(node, deep)

    return StrictLoader


class DuplicateKeyError(ValueError):
    """A YAML mapping with the same key twice (raised while loading, turned into the caller's error kind)."""


def load_yaml(path: str | Path, error: type[Exception]) -> object:
    """The parsed YAML of ``path``; a missing file, invalid YAML or a key given twice in one mapping raises ``error``
    naming the file (and the key and its lines)."""
    import yaml

    path = Path(path)
    if not path.exists():
        raise error(f"{path}: no such file")
    try:
        return yaml.load(path.read_text(encoding="utf-8"), Loader=_strict_yaml_loader())  # noqa: S506 - a SafeLoader
    except DuplicateKeyError as problem:
        raise error(f"{path}: {problem}") from None
    except yaml.YAMLError as problem:
        raise error(f"{path}: not valid YAML: {problem}") from None


def sha256_bytes(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def sha256_file(path: str | Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


@functools.cache
def model_file_sha256(path: Path) -> str:
    """:func:`sha256_file` once per process: for a model file that does not change while a process uses it, hashed
    for its version string and its caches at every load."""
    return sha256_file(path)


def stable_hash(obj: object) -> str:
    """Hash of a JSON-serializable value, independent of dict order: the cache key of a stage's inputs."""
    canonical = json.dumps(obj, ensure_ascii=False, sort_keys=True, separators=(",", ":"), default=str)
    return hashlib.sha256(canonical.encode("utf-8")).hexdigest()


def record_line(record: BaseModel) -> str:
    return json.dumps(record.model_dump(mode="json"), ensure_ascii=False) + "\n"


def _field_of(error: ValidationError) -> tuple[str, str]:
    first = error.errors()[0]
    field = ".".join(str(part) for part in first["loc"]) or "<row>"
    found = f", got {first['input']!r}"[:80] if first["type"].endswith("_type") else ""  # "yes" or true for a number
    return field, first["msg"] + found


def parse_record(cls: type[Record], obj: object, path: str | Path, line: int) -> Record:
    """Validate one decoded JSON value as ``cls``; errors name file, line and field."""
    if not isinstance(obj, dict):
        raise ManifestError(path, line, "<row>", f"expected a JSON object, got {type(obj).__name__}")
    try:
        return cls.model_validate(obj)
    except ValidationError as error:
        field, problem = _field_of(error)
        raise ManifestError(path, line, field, problem) from None
    except ValueError as error:  # record-level checks raised by model validators
        raise ManifestError(path, line, "<row>", str(error)) from None


def iter_json_objects(path: str | Path, encoding: str = "utf-8", hint: str = "") -> Iterator[tuple[int, dict]]:
    """(line number, object) for each non-blank line of a JSONL file; a wrong encoding, invalid JSON or a value that
    is not an object is a :class:`ManifestError` naming the line (``hint`` is appended to encoding errors)."""
    path = Path(path)
    with open(path, "rb") as handle:
        for number, raw in enumerate(handle, start=1):
            try:
                text = raw.decode(encoding)
            except UnicodeDecodeError as error:
                name = "UTF-8" if encoding.lower().replace("_", "-") == "utf-8" else encoding
                problem = f"not {name} ({error.reason} at byte {error.start})" + (f"; {hint}" if hint else "")
                raise ManifestError(path, number, "<row>", problem) from None
            if not text.strip():
                continue
            try:
                obj = json.loads(text)
            except json.JSONDecodeError as error:
                raise ManifestError(path, number, "<row>", f"invalid JSON: {error.msg}") from None
            if not isinstance(obj, dict):
                raise ManifestError(path, number, "<row>", f"expected a JSON object, got {type(obj).__name__}")
            yield number, obj


def iter_records(path: str | Path, cls: type[Record]) -> Iterator[Record]:
    """Yield the records of a JSONL manifest. A torn last line (a killed writer) is an error, not a skip."""
    for number, obj in iter_json_objects(path):
        yield parse_record(cls, obj, path, number)


def read_records(path: str | Path, cls: type[Record]) -> list[Record]:
    return list(iter_records(path, cls))


def write_records(path: str | Path, records: Iterable[BaseModel]) -> int:
    """Write a whole manifest atomically; returns the number of records."""
    lines = [record_line(record) for record in records]
    atomic_write_text(path, "".join(lines))
    return len(lines)


class ResumableJsonlWriter:
    """Append-only JSONL writer of ``cls`` records keyed by their ``id``: re-opening skips ids already written.

    A line torn by a crash (no trailing newline) is cut off on open, so the file is always whole lines.
    """

    def __init__(self, path: str | Path, cls: type[BaseModel]):
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self.seen: set[str] = set()
        if self.path.exists():
            data = self.path.read_bytes()
            whole = data[: data.rfind(b"\n") + 1]
            if len(whole) != len(data):
                with open(self.path, "r+b") as handle:
                    handle.truncate(len(whole))
            self.seen = {str(record.id) for record in iter_records(self.path, cls)}
        self._handle = open(self.path, "a", encoding="utf-8")

    def __contains__(self, record_id: str) -> bool:
        return record_id in self.seen

    def write(self, record: BaseModel) -> bool:
        """Append ``record`` unless its id is already written; returns whether it was written."""
        record_id = str(record.id)
        if record_id in self.seen:
            return False
        self._handle.write(record_line(record))
        self._handle.flush()
        os.fsync(self._handle.fileno())
        self.seen.add(record_id)
        return True

    def write_many(self, records: Iterable[BaseModel]) -> int:
        """Append the records whose ids are new with one fsync (a per-record fsync costs milliseconds, which adds
        minutes over the tens of thousands of scores of one evaluation); returns how many were written."""
        lines = []
        for record in records:
            record_id = str(record.id)
            if record_id not in self.seen:
                lines.append(record_line(record))
                self.seen.add(record_id)
        if lines:
            self._handle.write("".join(lines))
            self._handle.flush()
            os.fsync(self._handle.fileno())
        return len(lines)

    def close(self) -> None:
        self._handle.close()

    def __enter__(self) -> "ResumableJsonlWriter":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
