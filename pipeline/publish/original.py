"""The layout of the original S2SBench release: export a build to it, and read it back.

Stories (two candidates): JSONL rows ``{"uttid", "first", "last"}``, one wav per row at ``<audio_dir>/<uttid>.wav``
(the context audio, duplicated for the two rows of a pair). ``uttid`` is ``"<n>_<item id>"``; rows sorted by ``n``
pair up (0,1), (2,3), ... and the lower ``n`` carries the right ending. Choice sets (four candidates, sCMMLU):
rows ``{"uttid", "first", "A", "B", "C", "D", "answer"}`` with the stem audio at ``<audio_dir>/<uttid>.wav``.

An export folder holds, per set (one task spoken by one voice, ``<task>--<voice>``), ``<set>.jsonl`` and
``<set>/<uttid>.wav``; the original inference loop's config files (``eval_s2t.yaml``, plus ``eval_s2t.<set>.yaml``
for each choice set after the first: the loop scores choice sets under one name only, see
:mod:`~s2sbench.pipeline.publish.original_format`), and ``s2sbench_export.json`` (:class:`ExportSidecar`), which
maps each uttid back to its item and candidate so that an import restores the build exactly. Without that file (the
published S2SBench data) item ids come from the uttids and a story's endings keep the order of their rows (the
right one first). One reader serves both this import and the ``s2sbench-release`` task source:
:mod:`s2sbench.pipeline.items.sources.release`, which also holds the layout's records.

An import is a build folder like any other (:class:`~s2sbench.pipeline.buildfolder.builddir.BuildDir`): items, manifests, an
audit whose clips are all ``unverified``, the dataset and a build report, with the imported WAVs (byte for byte) in
the folder's own clip store ``clips/``; so it can be evaluated, re-verified, reported and published.
"""

from __future__ import annotations

import hashlib
import io
import json
from dataclasses import dataclass
from pathlib import Path

from s2sbench.pipeline.run.assemble import finish_build, task_report
from s2sbench.pipeline.speech.audio import ClipStore, decode_audio
from s2sbench.pipeline.buildfolder.build_report import Integrity
from s2sbench.pipeline.buildfolder.configs import config_condition
from s2sbench.pipeline.buildfolder.builddir import BuildDir, BuildDirError
from s2sbench.pipeline.buildfolder.dataset import SAMPLE_RATE_HZ, DatasetRow, iter_rows, undecoded
from s2sbench.pipeline.core.errors import ConfigError
from s2sbench.pipeline.core.manifest import (
    atomic_write_bytes,
    atomic_write_text,
    stable_hash,
    write_json,
)
from s2sbench.pipeline.core.records import (
    BuildRow,
    Clip,
    ClipCheck,
    Item,
    Reason,
    Role,
    safe_component,
)
from s2sbench.pipeline.publish.original_format import (
    CHOICE_SET_NAME,
    LETTERS,
    choice_uttid,
    format_of,
    set_id,
    set_positions,
    story_name,
    story_uttids,
)
from s2sbench.pipeline.items.sources import LoadResult
from s2sbench.pipeline.items.sources.release import (
    SIDECAR,
    ExportedSetEntry,
    ExportSidecar,
    OriginalLayoutError,
    read_layout,
    read_sidecar,
)


EVAL_CONFIG = "eval_s2t.yaml"


@dataclass(frozen=True)
class ExportedSet:
    name: str  # the set's files: <name>.jsonl, <name>/<uttid>.wav
    original_name: str
    config_file: str
    task: str
    voice: str
    format: str  # "story" | "choice"
    rows: int
    items: int


def _wav_16k(audio, where: str) -> bytes:
    """The clip as a 16 kHz wav: the stored bytes when they already are one (byte-exact), else re-encoded PCM-16."""
    import soundfile as sf

    data = audio.wav if audio else None
    if not data:
        raise OriginalLayoutError(f"{where}: the audio is not embedded in the dataset")
    samples, rate = decode_audio(data, where)  # an unreadable clip is an error naming it
    info = sf.info(io.BytesIO(data))
    if info.format == "WAV" and rate == SAMPLE_RATE_HZ and info.channels == 1:
        return data
    if rate != SAMPLE_RATE_HZ:
        raise OriginalLayoutError(f"{where}: audio is {rate} Hz; the build should have resampled it to {SAMPLE_RATE_HZ} Hz")
    buffer = io.BytesIO()
    sf.write(buffer, samples, SAMPLE_RATE_HZ, format="WAV", subtype="PCM_16")
    return buffer.getvalue()


def _set_lines(rows: list[DatasetRow], positions: dict, story: bool, name: str, out_dir: Path, where: str):
    """The JSONL lines of one set and its uttid map; writes each row's wav (the context audio)."""
    lines, uttids = [], {}
    for row in rows:
        wav = _wav_16k(row.context_audio, f"{where} row {row.id}")
        position = positions[(row.task, row.voice, row.item_id)]
        if story:
            right_id, wrong_id = story_uttids(position, row.item_id)
            entries = [(right_id, {"last": row.candidates[row.label]}, row.label),
                       (wrong_id, {"last": row.candidates[1 - row.label]}, 1 - row.label)]  # fmt: skip
        else:
            entries = [(choice_uttid(position, row.item_id),
                        {**dict(zip(LETTERS, row.candidates)), "answer": LETTERS[row.label]}, None)]  # fmt: skip
        for uttid, fields, candidate in entries:
            lines.append(json.dumps({"uttid": uttid, "first": row.context, **fields}, ensure_ascii=False) + "\n")
            atomic_write_bytes(out_dir / name / f"{uttid}.wav", wav)
            uttids[uttid] = (row.item_id, candidate)
    return lines, uttids


def export_original(build_dir: str | Path | BuildDir, out_dir: str | Path) -> list[ExportedSet]:
    """Write every set of a build (one task spoken by one voice) in the original S2SBench layout, with the config
    files its inference loop reads: ``eval_s2t.yaml`` lists every story set and the first choice set (the loop
    scores choice sets only under the one name ``cmmlu_write_4``); each further choice set has its own
    ``eval_s2t.<set>.yaml``."""
    import yaml

    build, out_dir = BuildDir.of(build_dir), Path(out_dir)
    # a set per task (``<task>-<condition>`` under an acoustic condition: a set of its own) and voice
    by_set: dict[tuple[str, str], list[DatasetRow]] = {}
    where_of: dict[tuple[str, str], str] = {}
    for config, splits in build.load_dataset().items():
        for split, table in splits.items():
            where = f"{build.dataset_dir} config '{config}' split '{split}'"
            for _, row in iter_rows(undecoded(table), where):
                condition = config_condition(config, row.task)
                key = (row.task if condition is None else f"{row.task}-{condition}", row.voice)
                by_set.setdefault(key, []).append(row)
                where_of.setdefault(key, where)
    # the clean configs come first, so a condition's rows take their clean rows' places (and uttids)
    positions = set_positions((row.task, row.voice, row.item_id) for rows in by_set.values() for row in rows)
    sets, config_files, exported = {}, {EVAL_CONFIG: {}}, []
    for (task, voice), rows in by_set.items():
        name = safe_component(set_id(task, voice), "export set")
        try:
            fmt = format_of(len(rows[0].candidates))
        except ValueError as error:
            raise OriginalLayoutError(f"{build.root}: task {task}: {error}") from None
        if any(len(row.candidates) != len(rows[0].candidates) for row in rows):
            raise OriginalLayoutError(f"{build.root}: task {task} mixes items of {sorted({len(r.candidates) for r in rows})} candidates")
        if fmt == "story":
            original_name, config_file = story_name(name), EVAL_CONFIG
        else:
            taken = CHOICE_SET_NAME in config_files[EVAL_CONFIG]
            original_name, config_file = CHOICE_SET_NAME, f"eval_s2t.{name}.yaml" if taken else EVAL_CONFIG
        lines, uttids = _set_lines(rows, positions, fmt == "story", name, out_dir, where_of[(task, voice)])
        atomic_write_text(out_dir / f"{name}.jsonl", "".join(lines))
        sets[name] = ExportedSetEntry(task=task, voice=voice, language=rows[0].language, format=fmt, jsonl=f"{name}.jsonl",
                                      audio_dir=name, original_name=original_name, config_file=config_file, uttids=uttids)  # fmt: skip
        config_files.setdefault(config_file, {})[original_name] = {"path": f"{name}.jsonl", "audio_path": name, "lang": rows[0].language}
        exported.append(ExportedSet(name, original_name, config_file, task, voice, fmt, len(lines), len(rows)))
    write_json(out_dir / SIDECAR, ExportSidecar(sets=sets).model_dump(mode="json"))
    for config_file, datasets in config_files.items():
        atomic_write_text(out_dir / config_file, "# sets in the config format of the original S2SBench inference loop; run it with "
                          "--config THIS_FILE --root_dir THIS_FOLDER --dataset_list NAMES\n"
                          + yaml.safe_dump({"datasets": datasets}, allow_unicode=True, sort_keys=True))  # fmt: skip
    return exported


# --- import -------------------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class OriginalSet:
    """Where one set of the original layout is, and what the rest of s2sbench should call it."""

    jsonl: Path
    audio_dir: Path
    task: str
    language: str
    voice: str = "original"
    uttids: dict[str, tuple[str, int | None]] | None = None  # uttid -> (item id, candidate index), from an export


def _wav(spec: OriginalSet, uttid, where: str) -> bytes:
    name = safe_component(str(uttid), f"{where}: field 'uttid'")  # a file name inside the audio folder
    path = spec.audio_dir / f"{name}.wav"
    if not path.exists():
        raise OriginalLayoutError(f"{where}: no audio at {path}")
    data = path.read_bytes()
    decode_audio(data, f"{where}: {path}")  # a truncated or corrupt file is named here, with its row
    return data


def read_original_set(spec: OriginalSet) -> list[tuple[Item, bytes]]:
    """The items of one original-layout set (:func:`~s2sbench.pipeline.items.sources.release.read_layout`) with their
    context audio (wav bytes)."""
    return [(entry.item, _wav(spec, entry.uttid, f"{spec.jsonl}:{entry.item.source.row}"))
            for entry in read_layout(spec.jsonl, spec.task, spec.language, uttids=spec.uttids)]


def _inside(folder: Path, name: str, what: str) -> Path:
    """``folder / name`` for a file name an index file gives, which must not leave ``folder``."""
    return folder / safe_component(name, what)


def find_sets(source: str | Path, *, task: str | None = None, language: str | None = None, audio_dir: str | Path | None = None) -> list[OriginalSet]:
    """The sets at ``source``: an s2sbench export folder, a folder with an ``eval_s2t.yaml``, or one JSONL file."""
    import yaml

    source = Path(source)
    if source.is_dir() and (source / SIDECAR).exists():
        path = source / SIDECAR
        sidecar = read_sidecar(source)
        return [OriginalSet(_inside(source, entry.jsonl, f"{path}: set '{name}': field 'jsonl'"),
                            _inside(source, entry.audio_dir, f"{path}: set '{name}': field 'audio_dir'"),
                            safe_component(entry.task, f"{path}: set '{name}': field 'task'"), entry.language,
                            safe_component(entry.voice, f"{path}: set '{name}': field 'voice'"), entry.uttids)
                for name, entry in sidecar.sets.items()]  # fmt: skip
    if source.is_dir() and (source / EVAL_CONFIG).exists():
        path = source / EVAL_CONFIG
        config = yaml.safe_load(path.read_text(encoding="utf-8")) or {}
        try:
            return [OriginalSet(source / entry["path"], source / entry["audio_path"],
                                safe_component(name, f"{path}: dataset name"), entry["lang"])
                    for name, entry in config.get("datasets", {}).items()]  # fmt: skip
        except KeyError as missing:
            raise OriginalLayoutError(f"{path}: a dataset lacks field {missing}") from None
    if source.is_file():
        if audio_dir is None or language is None:
            raise ConfigError(f"{source}: a single JSONL file needs its audio folder and language (--audio-dir, --language)")
        name = task or source.stem
        return [OriginalSet(source, Path(audio_dir), safe_component(name, "--task (default: the file name)"), language)]
    raise OriginalLayoutError(f"{source}: neither a JSONL file nor a folder with {SIDECAR} or {EVAL_CONFIG}")


UNVERIFIED = Reason(code="unverified", detail="imported from the original S2SBench layout; not verified by s2sbench")


def _imported_row(item: Item, voice: str, wav: bytes, store: ClipStore, source: Path) -> tuple[BuildRow, ClipCheck]:
    """The build row of one imported item: its context clip (the WAV as it was) and an unverified check."""
    digest = hashlib.sha256(wav).hexdigest()
    stored = store.put_wav(stable_hash({"original_layout": digest}), wav, {"source": str(source)})
    role = Role.context()
    clip = Clip(key=stored.key, item_id=item.id, role=role, text=item.context, normalized_text=item.context, voice=voice,
                engine="original", model_version="unknown", seed=0, audio_sha256=stored.audio_sha256, path=stored.path,
                sample_rate_hz=stored.sample_rate_hz, duration_s=stored.duration_s)  # fmt: skip
    check = ClipCheck(item_id=item.id, role=role, attempt=1, clip_key=clip.key, voice=voice, seed=0, asr_model="none",
                      metric="none", reference="", hypothesis="", transcript="", error_rate=None, passed=False,
                      status="unverified", reasons=(UNVERIFIED,))  # fmt: skip
    row = BuildRow(id=BuildRow.make_id(item.id, voice), item=item, voice=voice, clips={role: clip}, checks={role: check})
    return row, check


def import_original(sets: list[OriginalSet], out_dir: str | Path | BuildDir) -> dict[str, int]:
    """Write a build folder of the sets (see the module docstring; audio unverified); returns rows per task."""
    build = BuildDir.of(out_dir)
    with build.lock():
        if build.has_build_files():
            previous = build.read_report() if build.report_path.exists() else None
            if previous is None or previous.origin != "import-original":
                raise BuildDirError(f"{build.root} holds a build; import into a new folder")
            build.discard()
        store = ClipStore(build.own_store_dir)
        rows_by_task: dict[str, list[BuildRow]] = {}
        items: dict[str, dict[str, Item]] = {}  # task -> item id -> item, over all voices of the task
        languages: dict[str, str] = {}
        checks = []
        for spec in sets:
            for item, wav in read_original_set(spec):
                row, check = _imported_row(item, spec.voice, wav, store, spec.jsonl)
                rows_by_task.setdefault(spec.task, []).append(row)
                checks.append(check)
                items.setdefault(spec.task, {})[item.id] = item
            languages.setdefault(spec.task, spec.language)
        reports = {}
        for task, rows in rows_by_task.items():
            task_items = list(items[task].values())
            construction = {"construction": "original-layout", "handled": {"original-layout": len(task_items)}, "rejected": {}}
            build.write_items(LoadResult(task, task_items, [], len(task_items), construction))
            reports[task] = task_report(
                config=None, language=languages[task], version=1, voices=sorted({row.voice for row in rows}), load=None,
                items=task_items, pairs_in=len(rows), load_drops=[], rows=rows, drops=[],
            )  # fmt: skip
        finish_build(build, reports, rows_by_task, checks, [], {i.id: i for by_id in items.values() for i in by_id.values()},
                     store, Integrity(clips_checked=len(checks)), {}, origin="import-original",
                     imported_from=sorted({str(spec.jsonl) for spec in sets}))  # fmt: skip
    return {task: len(rows) for task, rows in rows_by_task.items()}
