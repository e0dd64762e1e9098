"""The dataset of a build: one typed :class:`DatasetRow` per kept (item, voice), its ``datasets`` features, and the
one function that turns a build row into a dataset row (assembly, the original-layout import and the Hub all use it).

A build's dataset is a set of configs (:mod:`s2sbench.pipeline.buildfolder.configs`): one per task, or per task and voice, each
in the task's split; the audio columns are 16 kHz ``datasets.Audio`` with the WAV bytes embedded, so a build's
dataset plays without its clip store.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Literal

from pydantic import ConfigDict, Field, ValidationError, model_validator

from s2sbench.pipeline.core.errors import DataError
from s2sbench.pipeline.core.records import BuildRow, Clip, ConditionedRow, Record, Role

SAMPLE_RATE_HZ = 16000


class DatasetError(DataError):
    """A dataset split or row that is not what a build writes; the message names the folder, split, row and field."""


class AudioValue(Record):
    """One cell of an Audio column: a file to embed (``path``) or the embedded WAV (``bytes``, with its file name)."""

    model_config = ConfigDict(frozen=True, extra="forbid", validate_by_name=True, serialize_by_alias=True)

    path: str | None = None
    wav: bytes | None = Field(default=None, alias="bytes")


class DatasetRow(Record):
    """A row of a build's dataset: the item's texts and label, the voice, the audio and the gate's verdict."""

    id: str
    item_id: str
    task: str
    language: str
    context: str
    # what the voice read: the context with numbers, units, symbols and letters written out as spoken ("" when the
    # context is not spoken); the gate compared the transcript with this reading
    context_spoken: str = ""
    candidates: list[str]
    label: int = Field(strict=True, ge=0)
    voice: str
    context_audio: AudioValue | None
    candidate_audio: list[AudioValue]  # every candidate in order when the task speaks them, else empty
    context_transcript: str
    context_error_rate: float | None
    context_metric: str
    verification_status: Literal["passed", "unverified"]
    source_file: str
    source_row: int

    @model_validator(mode="after")
    def _consistent(self) -> "DatasetRow":
        if self.label >= len(self.candidates):
            raise ValueError(f"label {self.label} is not an index into {len(self.candidates)} candidates")
        if self.id != BuildRow.make_id(self.item_id, self.voice):
            raise ValueError(f"id '{self.id}' is not '<item_id>@<voice>' ({BuildRow.make_id(self.item_id, self.voice)})")
        if self.candidate_audio and len(self.candidate_audio) != len(self.candidates):
            raise ValueError(f"{len(self.candidate_audio)} candidate clips for {len(self.candidates)} candidates")
        return self


COLUMNS = tuple(DatasetRow.model_fields)


def dataset_row(row: BuildRow, audio_of: Callable[[Clip], AudioValue]) -> DatasetRow:
    """The dataset row of a kept build row; ``audio_of`` gives the Audio cell of each of its clips."""
    item = row.item
    context_check = row.checks.get(Role.context())
    candidate_roles = [Role.of_candidate(index) for index in range(len(item.candidates))]
    statuses = {check.status for check in row.checks.values()}
    return DatasetRow(
        id=row.id, item_id=item.id, task=item.task, language=item.language, context=item.context,
        context_spoken=row.clips[Role.context()].normalized_text if Role.context() in row.clips else "",
        candidates=list(item.candidates), label=item.right, voice=row.voice,
        context_audio=audio_of(row.clips[Role.context()]) if Role.context() in row.clips else None,
        candidate_audio=[audio_of(row.clips[role]) for role in candidate_roles if role in row.clips],
        context_transcript=context_check.transcript if context_check else "",
        context_error_rate=context_check.error_rate if context_check else None,
        context_metric=context_check.metric if context_check else "none",
        verification_status="unverified" if "unverified" in statuses else "passed",
        source_file=item.source.file, source_row=item.source.row,
    )  # fmt: skip


def conditioned_dataset_row(row: BuildRow, conditioned: ConditionedRow, audio_of: Callable[[Clip], AudioValue]) -> DatasetRow:
    """The dataset row of a kept row under a condition: its clips are the condition's, its transcript and error rate
    what the gate's ASR heard of them; its verification status is the clean clips' (the gate passed those)."""
    clean = dataset_row(row, audio_of)
    heard = conditioned.checks.get(Role.context())
    candidate_roles = [Role.of_candidate(index) for index in range(len(clean.candidates))]
    return clean.model_copy(update=dict(
        context_audio=audio_of(conditioned.clips[Role.context()]) if Role.context() in conditioned.clips else None,
        candidate_audio=[audio_of(conditioned.clips[role]) for role in candidate_roles if role in conditioned.clips],
        context_transcript=heard.transcript if heard else "", context_error_rate=heard.error_rate if heard else None,
        context_metric=heard.metric if heard else "none",
    ))  # fmt: skip


def dataset_features():
    """The columns of every s2sbench dataset split (a build, an import of the original layout, a Hub config)."""
    import datasets

    text = datasets.Value("string")
    return datasets.Features(
        {
            "id": text, "item_id": text, "task": text, "language": text, "context": text, "context_spoken": text,
            "candidates": datasets.List(text), "label": datasets.Value("int32"), "voice": text,
            "context_audio": datasets.Audio(sampling_rate=SAMPLE_RATE_HZ),
            "candidate_audio": datasets.List(datasets.Audio(sampling_rate=SAMPLE_RATE_HZ)),
            "context_transcript": text, "context_error_rate": datasets.Value("float64"), "context_metric": text,
            "verification_status": text, "source_file": text, "source_row": datasets.Value("int64"),
        }
    )  # fmt: skip


def make_split(rows: list[DatasetRow]):
    """A ``datasets.Dataset`` of ``rows`` with the build's features (audio given as paths is embedded on save).

    The Audio cells go into the table as they are, ``{bytes, path}``: the Audio columns' storage, what
    ``Dataset.from_dict`` would make of them. ``from_dict`` runs ``Audio.encode_example`` on every cell, which imports
    torch and torchcodec whatever the cell holds: 6-9 s of CPU in every process that assembles a dataset here, for
    cells it then stores unchanged (a cell with both bytes and the path of a file on disk keeps its bytes here, where
    ``encode_example`` would drop them for the file's)."""
    import datasets
    from datasets.table import InMemoryTable

    features = dataset_features()
    table = [row.model_dump() for row in rows]
    columns = {name: [entry[name] for entry in table] for name in COLUMNS}
    return datasets.Dataset(InMemoryTable.from_pydict(columns, schema=features.arrow_schema),
                            info=datasets.DatasetInfo(features=features))  # fmt: skip


def check_features(split, where: str) -> None:
    """A split whose columns are not a build's is a :class:`DatasetError` naming the first column that differs."""
    expected = dataset_features()
    for name, feature in expected.items():
        if name not in split.features:
            raise DatasetError(f"{where}: column '{name}' is missing; was this dataset written by `s2sbench build`?")
        if split.features[name] != feature:
            raise DatasetError(f"{where}: column '{name}' is {split.features[name]}, expected {feature}")
    extra = sorted(set(split.features) - set(expected))
    if extra:
        raise DatasetError(f"{where}: unexpected column '{extra[0]}'")


def undecoded(split):
    """``split`` with its audio columns as raw ``{"bytes", "path"}`` (nothing decoded). The cast of the nested
    candidate column rewrites the table; with caching off, ``datasets`` writes that to a temporary folder, not as a
    cache file into the build's dataset folder (a reader never writes into the build it reads)."""
    import datasets

    caching = datasets.is_caching_enabled()
    datasets.disable_caching()
    try:
        return split.cast_column("context_audio", datasets.Audio(decode=False)).cast_column(
            "candidate_audio", datasets.List(datasets.Audio(decode=False))
        )
    finally:
        if caching:
            datasets.enable_caching()


def iter_rows(split, where: str, start: int = 0, stop: int | None = None, chunk: int = 64) -> Iterator[tuple[int, DatasetRow]]:
    """(row index, typed row) of ``split`` from ``start`` to ``stop``, read in chunks with the audio undecoded; a
    row that does not validate is a :class:`DatasetError` naming the split, the row and the field."""
    table = split.with_format("arrow")
    stop = len(split) if stop is None else min(stop, len(split))
    for begin in range(start, stop, chunk):
        for offset, raw in enumerate(table[begin : min(begin + chunk, stop)].to_pylist()):
            yield begin + offset, parse_row(raw, f"{where} row {begin + offset}")


def parse_row(raw: dict, where: str) -> DatasetRow:
    try:
        return DatasetRow.model_validate(raw)
    except ValidationError as error:
        first = error.errors()[0]
        field = ".".join(str(part) for part in first["loc"]) or "<row>"
        raise DatasetError(f"{where}: field '{field}': {first['msg']}") from None
