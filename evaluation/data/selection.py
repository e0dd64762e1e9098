"""Which rows an evaluation scores: the selected tasks, voices and the first ``limit`` items of each task.

The selection is made from the id columns alone (task, voice, item, language, how many candidate clips), read
without decoding or copying any audio, before a model loads: a task or voice the data does not have is an error
that lists what it has. It also numbers every row in its set (one task spoken by one voice) the way an export to
the original layout does, over the whole data, so results of a subset carry the export's uttids.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import PurePath

from s2sbench.evaluation.data.sources import DatasetSourceError, EvalDataset, Part
from s2sbench.pipeline.buildfolder.configs import config_condition
from s2sbench.pipeline.core.errors import ConfigError
from s2sbench.pipeline.publish.original_format import set_positions


@dataclass(frozen=True)
class Selection:
    tasks: tuple[str, ...] = ()  # empty: every task
    voices: tuple[str, ...] = ()  # empty: every voice
    limit: int | None = None  # the first N items of each task (in the data's order)

    def __post_init__(self) -> None:
        if self.limit is not None and self.limit < 1:
            raise ConfigError(f"--limit must be at least 1, got {self.limit}")


@dataclass
class TaskRows:
    """What the selection holds of one task."""

    language: str
    voices: dict[str, None] = field(default_factory=dict)  # ordered sets, in the data's order
    items: dict[str, None] = field(default_factory=dict)
    candidate_audio: bool = False  # its rows carry spoken candidates
    # item id -> the stem of the source file it came from (a CMMLU subject is one file); {} for data without the column
    sources: dict[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class SelectedPart:
    part: Part
    indices: tuple[int, ...]  # the part's rows to score
    condition: str | None = None  # the acoustic condition its clips are under (None: clean)


@dataclass(frozen=True)
class SelectedRows:
    parts: tuple[SelectedPart, ...]
    tasks: dict[str, TaskRows]
    positions: dict[tuple[str, str, str], int]  # (task, voice, item id) -> its row's position in its set


def _id_columns(part: Part) -> list[tuple[str, str, str, str, int, str]]:
    """(task, voice, item id, language, candidate clips, source file's stem) of every row, without reading any audio
    (the stem is '' where the data has no ``source_file`` column)."""
    import pyarrow.compute as pc

    columns = ["task", "voice", "item_id", "language", "candidate_audio"]
    has_source = "source_file" in part.rows.column_names
    table = part.rows.select_columns(columns + ["source_file"] * has_source).with_format("arrow")[:]
    clips = pc.list_value_length(table.column("candidate_audio")).to_pylist()
    sources = ([PurePath(name).stem for name in table.column("source_file").to_pylist()] if has_source
               else [""] * len(clips))  # fmt: skip
    return list(zip(*(table.column(name).to_pylist() for name in columns[:4]), clips, sources))


def _unknown(kind: str, wanted: Sequence[str], known: Sequence[str], where: str) -> None:
    missing = [name for name in wanted if name not in known]
    if missing:
        raise DatasetSourceError(f"{where}: no {kind} {', '.join(repr(m) for m in missing)} (it has: {', '.join(known) or 'none'})")


def select_rows(data: EvalDataset, selection: Selection = Selection()) -> SelectedRows:
    """The rows of ``data`` that ``selection`` keeps, per part, and what they hold per task."""
    columns = {part.where: _id_columns(part) for part in data.parts}
    every_row = [row for part in data.parts for row in columns[part.where]]
    _unknown("task", selection.tasks, list(dict.fromkeys(row[0] for row in every_row)), data.location)
    _unknown("voice", selection.voices, list(dict.fromkeys(row[1] for row in every_row)), data.location)
    order: dict[str, dict[str, None]] = {}
    for task, voice, item_id, *_ in every_row:
        if (not selection.tasks or task in selection.tasks) and (not selection.voices or voice in selection.voices):
            order.setdefault(task, {})[item_id] = None
    kept = {task: set(list(items)[: selection.limit]) for task, items in order.items()}
    tasks: dict[str, TaskRows] = {}
    parts = []
    clean_rows = []
    for part in data.parts:
        indices = []
        conditions = {config_condition(part.config, task) for task, *_ in columns[part.where]}
        if len(conditions) > 1:
            raise DatasetSourceError(f"{part.where}: rows of several tasks in a config named for one condition")
        condition = next(iter(conditions), None)
        if condition is None:
            clean_rows.extend(columns[part.where])
        for index, (task, voice, item_id, language, clips, source) in enumerate(columns[part.where]):
            if item_id not in kept.get(task, ()) or (selection.voices and voice not in selection.voices):
                continue
            indices.append(index)
            entry = tasks.setdefault(task, TaskRows(language))
            entry.voices[voice] = entry.items[item_id] = None
            entry.candidate_audio = entry.candidate_audio or clips > 0
            if source:
                entry.sources[item_id] = source
        if indices:
            parts.append(SelectedPart(part, tuple(indices), condition))
    if not parts:
        raise DatasetSourceError(f"{data.location}: the selection holds no rows")
    # a row's place in its set (the original layout's uttid) is the clean row's; a condition repeats the rows
    positions = set_positions((task, voice, item_id) for task, voice, item_id, *_ in clean_rows)
    return SelectedRows(tuple(parts), tasks, positions)
