"""The layout of the original S2SBench release, read as items: the one reader of that layout, for the
``s2sbench-release`` loader (new voices for the published items) and for ``s2sbench import-original`` (the release's
own audio).

The release (the original code's ``eval_s2t.yaml``) puts its sets under a root folder::

    S2S/StoryCloze/sStory_s2t.jsonl    set sStory_s2t     rows {uttid, first, last}
    S2S/StoryCloze/zh_story.jsonl      set zh_story       rows {uttid, first, last}
    S2S/cmmlu/cmmlu_rewrite_4.jsonl    set cmmlu_write_4  rows {uttid, first, A, B, C, D[, answer]}

Stories: rows sorted by the integer before the first ``_`` of ``uttid`` pair up (0,1), (2,3), ...; the two rows of
a pair share ``first`` (the context) and the lower id carries the right ending. An item's candidates are the pair's
endings in that order (the right one first), unless an s2sbench export's ``s2sbench_export.json`` beside the file
says where each ending stood in the build it came from (then the items are the build's, ids included). Choice rows:
the answer is the row's ``answer``, or, as the original ``eval_cmmlu4.py`` reads it, the ``answer`` of the row with
the same ``uttid`` in a question file (``source.options.question_file``). Each item keeps its row's ``uttid`` (a
story also its candidates' uttids) in ``meta``, so results line up with the original's rows.

A row that does not pair, an answer outside A-D and a missing answer are data errors naming the file and line.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from s2sbench.pipeline.core.errors import DataError
from s2sbench.pipeline.core.manifest import parse_record
from s2sbench.pipeline.core.records import SCHEMA_VERSION, Item, Record
from s2sbench.pipeline.core.schema import StrictSection
from s2sbench.pipeline.items.sources.rows import DroppedRow, Row, source_of, source_path, takes_options
from s2sbench.pipeline.items.task_config import TaskConfig, TaskConfigError

#: set name -> its file under the release root (the original code's eval_s2t.yaml)
RELEASE_SETS = {
    "sStory_s2t": "S2S/StoryCloze/sStory_s2t.jsonl",
    "zh_story": "S2S/StoryCloze/zh_story.jsonl",
    "cmmlu_write_4": "S2S/cmmlu/cmmlu_rewrite_4.jsonl",
}
LETTERS = "ABCD"
SIDECAR = "s2sbench_export.json"


class OriginalLayoutError(DataError):
    """A build that cannot be written in the original layout, or an original-layout file that cannot be read."""


class ExportedSetEntry(Record):
    task: str
    voice: str
    language: str
    format: Literal["story", "choice"]
    jsonl: str  # file names inside the export folder
    audio_dir: str
    original_name: str  # its name in the original code's config (cmmlu_write_4, or a name with 'tory')
    config_file: str  # the eval_s2t*.yaml that lists it
    uttids: dict[str, tuple[str, int | None]]  # uttid -> (item id, candidate index of a story row)


class ExportSidecar(Record):
    """``s2sbench_export.json``: what an import needs to restore the build exactly."""

    schema_version: int = SCHEMA_VERSION
    sets: dict[str, ExportedSetEntry]


def read_sidecar(folder: Path) -> ExportSidecar | None:
    """The export sidecar in ``folder``, if there is one."""
    from s2sbench.pipeline.core.manifest import DocumentError, parse_versioned, read_json

    path = folder / SIDECAR
    if not path.exists():
        return None
    try:
        return parse_versioned(ExportSidecar, read_json(path), path)
    except DocumentError as error:
        raise OriginalLayoutError(str(error)) from None


@dataclass(frozen=True)
class LayoutItem:
    """One item of an original-layout set and the uttid of the row whose audio is its context."""

    item: Item
    uttid: str


def _read_rows(path: Path, required: tuple[str, ...] = ("uttid", "first")) -> list[tuple[int, dict]]:
    rows = []
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
        if not line.strip():
            continue
        try:
            row = json.loads(line)
        except json.JSONDecodeError as error:
            raise OriginalLayoutError(f"{path}:{number}: invalid JSON: {error.msg}") from None
        if not isinstance(row, dict):
            raise OriginalLayoutError(f"{path}:{number}: expected a JSON object, got {type(row).__name__}")
        for key in required:
            if key not in row:
                raise OriginalLayoutError(f"{path}:{number}: field '{key}' is missing")
        rows.append((number, row))
    return rows


def _prefix(uttid, where: str) -> int:
    head = str(uttid).split("_")[0]
    if not head.isdigit():
        raise OriginalLayoutError(f"{where}: field 'uttid': '{uttid}' does not start with an integer")
    return int(head)


def _item_id(uttid, uttids: dict | None, fallback: str) -> str:
    if uttids and str(uttid) in uttids:
        return uttids[str(uttid)][0]
    rest = str(uttid).split("_", 1)
    return rest[1] if len(rest) == 2 and rest[1] else fallback


def read_answers(path: Path) -> dict[str, tuple[str, int]]:
    """uttid -> (answer, line) of a question file (JSONL rows with ``uttid`` and ``answer``)."""
    answers = {}
    for number, row in _read_rows(path, ("uttid", "answer")):
        answers[str(row["uttid"])] = (row["answer"], number)
    return answers


def read_layout(path: Path, task: str, language: str, *, uttids: dict | None = None,
                answers: dict[str, tuple[str, int]] | None = None, source_file: str | None = None) -> list[LayoutItem]:
    """The items of one original-layout JSONL file (stories or choice rows), in the file's order of stories or rows.

    ``uttids``: an export sidecar's map (uttid -> item id, candidate index); ``answers``: a question file's answers
    by uttid, for choice rows without their own; ``source_file``: the name an item's ``source`` gives the file."""
    rows = _read_rows(path)
    named = source_file or path.name
    first_line: dict[str, int] = {}
    for number, row in rows:
        line = first_line.setdefault(str(row["uttid"]), number)
        if line != number:
            raise OriginalLayoutError(f"{path}:{number}: field 'uttid': '{row['uttid']}' is on line {line} too")
    items = _stories(path, rows, task, language, uttids, named) if rows and "last" in rows[0][1] else \
        _choices(path, rows, task, language, uttids, answers, named)
    seen: dict[str, int] = {}
    for entry in items:
        line = seen.setdefault(entry.item.id, entry.item.source.row)
        if line != entry.item.source.row:
            raise OriginalLayoutError(f"{path}:{entry.item.source.row}: field 'uttid': '{entry.uttid}' gives item id "
                                      f"'{entry.item.id}', as line {line} does")  # fmt: skip
    return items


def _choices(path: Path, rows: list[tuple[int, dict]], task: str, language: str, uttids: dict | None,
             answers: dict[str, tuple[str, int]] | None, named: str) -> list[LayoutItem]:  # fmt: skip
    out = []
    for number, row in rows:
        where = f"{path}:{number}"
        missing = [key for key in LETTERS if key not in row]
        if missing:
            raise OriginalLayoutError(f"{where}: field '{missing[0]}' is missing (a row has 'last', or A-D and 'answer')")
        answer = row.get("answer")
        if answer is None and answers is not None and str(row["uttid"]) in answers:
            answer, _ = answers[str(row["uttid"])]
        if answer is None:
            hint = "nor in the question file" if answers is not None else "(or give source.options.question_file)"
            raise OriginalLayoutError(f"{where}: field 'answer': missing, not in the row {hint}")
        if answer not in LETTERS:
            raise OriginalLayoutError(f"{where}: field 'answer': {answer!r} is not one of A-D")
        uttid = str(row["uttid"])
        item = parse_record(Item, {
            "id": _item_id(uttid, uttids, uttid), "task": task, "language": language, "context": row["first"],
            "candidates": [row[letter] for letter in LETTERS], "right": LETTERS.index(answer),
            "source": {"file": named, "row": number}, "meta": {"uttid": uttid},
        }, path, number)  # fmt: skip
        out.append(LayoutItem(item, uttid))
    return out


def _stories(path: Path, rows: list[tuple[int, dict]], task: str, language: str, uttids: dict | None,
             named: str) -> list[LayoutItem]:  # fmt: skip
    for number, row in rows:
        if "last" not in row:
            raise OriginalLayoutError(f"{path}:{number}: field 'last' is missing (the file's first row is a story row)")
    rows = sorted(rows, key=lambda entry: _prefix(entry[1]["uttid"], f"{path}:{entry[0]}"))
    if len(rows) % 2:
        raise OriginalLayoutError(f"{path}: {len(rows)} rows; stories come in pairs (line {rows[-1][0]} has no partner)")
    out = []
    for pair in range(len(rows) // 2):
        (line_a, right), (line_b, wrong) = rows[2 * pair], rows[2 * pair + 1]
        where = f"{path}:{line_a}"
        if _prefix(wrong["uttid"], where) != _prefix(right["uttid"], where) + 1 or right["first"] != wrong["first"]:
            raise OriginalLayoutError(f"{where}: rows {right['uttid']} and {wrong['uttid']} (line {line_b}) are not a pair "
                                      "(consecutive ids with the same context)")  # fmt: skip
        uttid = str(right["uttid"])
        right_index = uttids[uttid][1] if uttids and uttid in uttids and uttids[uttid][1] is not None else 0
        ordered = [(right["last"], uttid), (wrong["last"], str(wrong["uttid"]))]
        if right_index == 1:
            ordered.reverse()
        item = parse_record(Item, {
            "id": _item_id(uttid, uttids, f"{task}-{pair:05d}"), "task": task, "language": language,
            "context": right["first"], "candidates": [text for text, _ in ordered], "right": right_index,
            "source": {"file": named, "row": line_a},
            "meta": {"uttid": uttid, "candidate_uttids": [one for _, one in ordered]},
        }, path, line_a)  # fmt: skip
        out.append(LayoutItem(item, uttid))
    return out


# --- the loader -----------------------------------------------------------------------------------------------------
class ReleaseOptions(StrictSection):
    """``source.options`` of the ``s2sbench-release`` loader."""

    set: Literal["sStory_s2t", "zh_story", "cmmlu_write_4"] | None = None  # which file under a release root
    question_file: str | None = None  # JSONL with uttid and answer, for choice rows without an answer


def release_file(task: TaskConfig) -> Path:
    """The JSONL file a release task reads: ``source.path`` itself, or its set's file under the release root."""
    path = source_path(task, "s2sbench-release")
    chosen = task.source.options.get("set")
    if path.is_file():
        return path
    if chosen is None:
        raise TaskConfigError(f"{task.path}: key 'source.options.set': {path} is a folder; name the set to read "
                              f"({', '.join(RELEASE_SETS)}) or point source.path at one JSONL file")  # fmt: skip
    file = path / RELEASE_SETS[chosen]
    if not file.is_file():
        raise TaskConfigError(f"{task.path}: key 'source.path': {path} has no {RELEASE_SETS[chosen]}; point it at the "
                              "folder that holds S2S/ (the release's root) or at the set's JSONL file")  # fmt: skip
    return file


def question_file(task: TaskConfig) -> Path | None:
    name = task.source.options.get("question_file")
    if name is None:
        return None
    path = task.resolve(name)
    if not path.is_file():
        raise TaskConfigError(f"{task.path}: key 'source.options.question_file': {path} is not a file")
    return path


def release_source_files(task: TaskConfig) -> list[Path]:
    """The files a release task's items come from (what a build's inputs record: not the release's audio)."""
    return [file for file in (release_file(task), question_file(task)) if file is not None]


@takes_options(ReleaseOptions)
def load_release(task: TaskConfig) -> Iterator[Item | DroppedRow]:
    """The items of a release set, exactly as the release has them (see the module docstring)."""
    file = release_file(task)
    questions = question_file(task)
    sidecar = read_sidecar(file.parent)
    uttids = next((entry.uttids for entry in sidecar.sets.values() if entry.jsonl == file.name), None) if sidecar else None
    answers = read_answers(questions) if questions else None
    named = source_of(Row(str(file), 0, {}))["file"]
    for entry in read_layout(file, task.name, task.language, uttids=uttids, answers=answers, source_file=named):
        yield entry.item


load_release.source_files = release_source_files
