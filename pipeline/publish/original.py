"""The layout of the original S2SBench release: export a build to it, and read it back.

Stories (two candidates): JSONL rows ``{"uttid", "first", "last"}``, one wav per row at ``<audio_dir>/<uttid>.wav``
(the context audio, duplicated for the two rows of a pair). ``uttid`` is ``"<n>_<item id>"``; rows sorted by ``n``
pair up (0,1), (2,3), ... and the lower ``n`` carries the right ending. Choice sets (four candidates, sCMMLU):
rows ``{"uttid", "first", "A", "B", "C", "D", "answer"}`` with the stem audio at ``<audio_dir>/<uttid>.wav``.

An export folder holds, per config, ``<config>.jsonl`` and ``<config>/<uttid>.wav``, an ``eval_s2t.yaml`` in the
original evaluation code's config format, and ``s2sbench_export.json`` (:class:`ExportSidecar`), which maps each
uttid back to its item and candidate so that an import restores the build exactly. Without that file (the
published S2SBench data) item ids come from the uttids and the two endings of a story are put in an order drawn
from a hash of the item id, so the right ending is not always first.

An import is a build folder like any other (:class:`~s2sbench.pipeline.builddir.BuildDir`): items, manifests, an
audit whose clips are all ``unverified``, the dataset and a build report, with the imported WAVs (byte for byte) in
the folder's own clip store ``clips/``; so it can be evaluated, re-verified, reported and published.
"""

from __future__ import annotations

import hashlib
import io
import json
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from s2sbench.pipeline.assemble import finish_build, task_report
from s2sbench.pipeline.audio import ClipStore
from s2sbench.pipeline.build_report import Integrity
from s2sbench.pipeline.builddir import BuildDir, BuildDirError
from s2sbench.pipeline.dataset import SAMPLE_RATE_HZ, iter_rows, undecoded
from s2sbench.pipeline.manifest import (
    DocumentError,
    atomic_write_bytes,
    atomic_write_text,
    parse_versioned,
    read_json,
    stable_hash,
    write_json,
)
from s2sbench.pipeline.records import (
    SCHEMA_VERSION,
    BuildRow,
    Clip,
    ClipCheck,
    Item,
    Reason,
    Record,
    Role,
    Source,
    safe_component,
)
from s2sbench.pipeline.sources import LoadResult


LETTERS = "ABCD"
SIDECAR = "s2sbench_export.json"
EVAL_CONFIG = "eval_s2t.yaml"


class OriginalLayoutError(ValueError):
    """A build that cannot be written in the original layout, or an original-layout file that cannot be read."""


class ExportedSetEntry(Record):
    task: str
    voice: str
    language: str
    format: Literal["story", "choice"]
    jsonl: str  # file names inside the export folder
    audio_dir: str
    uttids: dict[str, tuple[str, int | None]]  # uttid -> (item id, candidate index of a story row)


class ExportSidecar(Record):
    """``s2sbench_export.json``: what an import needs to restore the build exactly."""

    schema_version: int = SCHEMA_VERSION
    sets: dict[str, ExportedSetEntry]


@dataclass(frozen=True)
class ExportedSet:
    config: str
    task: str
    voice: str
    format: str  # "story" | "choice"
    rows: int
    items: int


def _safe(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9._-]+", "-", text)


def _wav_16k(audio, where: str) -> bytes:
    """The clip as a 16 kHz wav: the stored bytes when they already are one (byte-exact), else re-encoded PCM-16."""
    import numpy as np
    import soundfile as sf

    data = audio.wav if audio else None
    if not data:
        raise OriginalLayoutError(f"{where}: the audio is not embedded in the dataset")
    info = sf.info(io.BytesIO(data))
    if info.format == "WAV" and info.samplerate == SAMPLE_RATE_HZ and info.channels == 1:
        return data
    samples, rate = sf.read(io.BytesIO(data), dtype="float32", always_2d=True)
    if rate != SAMPLE_RATE_HZ:
        raise OriginalLayoutError(f"{where}: audio is {rate} Hz; the build should have resampled it to {SAMPLE_RATE_HZ} Hz")
    buffer = io.BytesIO()
    sf.write(buffer, np.mean(samples, axis=1), SAMPLE_RATE_HZ, format="WAV", subtype="PCM_16")
    return buffer.getvalue()


def export_original(build_dir: str | Path | BuildDir, out_dir: str | Path) -> list[ExportedSet]:
    """Write every config of a build (task, or task and voice) in the original S2SBench layout."""
    import yaml

    from s2sbench.pipeline.publish.hub import config_name

    build, out_dir = BuildDir.of(build_dir), Path(out_dir)
    splits = build.load_dataset()
    sets, eval_config, exported = {}, {"datasets": {}}, []
    for split_key in sorted(splits):
        where = f"{build.dataset_dir} split '{split_key}'"
        table = [row for _, row in iter_rows(undecoded(splits[split_key]), where)]
        voices = sorted({row.voice for row in table})
        for voice in voices:
            rows = [row for row in table if row.voice == voice]
            task = rows[0].task
            name = config_name(task, voice, len(voices))
            n_candidates = {len(row.candidates) for row in rows}
            if n_candidates not in ({2}, {4}):
                raise OriginalLayoutError(f"{build.root}: task {task} has {sorted(n_candidates)} candidates per item; "
                                          "the original layout holds 2 (stories) or 4 (sCMMLU)")
            story = n_candidates == {2}
            lines, uttids = [], {}
            for n, row in enumerate(rows):
                wav = _wav_16k(row.context_audio, f"{where} row {row.id}")
                right, candidates = row.label, row.candidates
                if story:
                    order = [right, 1 - right]  # the right ending takes the even (lower) id
                    entries = [(f"{2 * n + slot}_{_safe(row.item_id)}", {"last": candidates[k]}, k) for slot, k in enumerate(order)]
                else:
                    entries = [(f"{n}_{_safe(row.item_id)}", {**dict(zip(LETTERS, candidates)), "answer": LETTERS[right]}, None)]
                for uttid, fields, candidate in entries:
                    lines.append(json.dumps({"uttid": uttid, "first": row.context, **fields}, ensure_ascii=False) + "\n")
                    atomic_write_bytes(out_dir / name / f"{uttid}.wav", wav)
                    uttids[uttid] = (row.item_id, candidate)
            atomic_write_text(out_dir / f"{name}.jsonl", "".join(lines))
            language = rows[0].language
            sets[name] = ExportedSetEntry(task=task, voice=voice, language=language, format="story" if story else "choice",
                                          jsonl=f"{name}.jsonl", audio_dir=name, uttids=uttids)  # fmt: skip
            eval_config["datasets"][name] = {"path": f"{name}.jsonl", "audio_path": name, "lang": language}
            exported.append(ExportedSet(name, task, voice, "story" if story else "choice", len(lines), len(rows)))
    write_json(out_dir / SIDECAR, ExportSidecar(sets=sets).model_dump(mode="json"))
    atomic_write_text(out_dir / EVAL_CONFIG, "# datasets in the config format of the original S2SBench evaluation code (paths relative to this folder)\n"
                      + yaml.safe_dump(eval_config, allow_unicode=True, sort_keys=True))
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


def _read_rows(path: Path) -> list[tuple[int, dict]]:
    rows = []
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
        if not line.strip():
            continue
        try:
            row = json.loads(line)
        except json.JSONDecodeError as error:
            raise OriginalLayoutError(f"{path}:{number}: invalid JSON: {error.msg}") from None
        for key in ("uttid", "first"):
            if key not in row:
                raise OriginalLayoutError(f"{path}:{number}: field '{key}' is missing")
        rows.append((number, row))
    return rows


def _prefix(uttid, where: str) -> int:
    head = str(uttid).split("_")[0]
    if not head.isdigit():
        raise OriginalLayoutError(f"{where}: field 'uttid': '{uttid}' does not start with an integer")
    return int(head)


def _item_id(uttid, spec: OriginalSet, fallback: str) -> str:
    if spec.uttids and str(uttid) in spec.uttids:
        return spec.uttids[str(uttid)][0]
    rest = str(uttid).split("_", 1)
    return rest[1] if len(rest) == 2 and rest[1] else fallback


def _wav(spec: OriginalSet, uttid, where: str) -> bytes:
    name = safe_component(str(uttid), f"{where}: field 'uttid'")  # a file name inside the audio folder
    path = spec.audio_dir / f"{name}.wav"
    if not path.exists():
        raise OriginalLayoutError(f"{where}: no audio at {path}")
    return path.read_bytes()


def read_original_set(spec: OriginalSet) -> list[tuple[Item, bytes]]:
    """The items of one original-layout set with their context audio (wav bytes)."""
    rows = _read_rows(spec.jsonl)
    out = []
    if rows and "last" in rows[0][1]:
        rows.sort(key=lambda entry: _prefix(entry[1]["uttid"], f"{spec.jsonl}:{entry[0]}"))
        if len(rows) % 2:
            raise OriginalLayoutError(f"{spec.jsonl}: {len(rows)} rows; stories come in pairs")
        for pair in range(len(rows) // 2):
            (line_a, right), (line_b, wrong) = rows[2 * pair], rows[2 * pair + 1]
            where = f"{spec.jsonl}:{line_a}"
            if _prefix(wrong["uttid"], where) != _prefix(right["uttid"], where) + 1 or right["first"] != wrong["first"]:
                raise OriginalLayoutError(f"{where}: rows {right['uttid']} and {wrong['uttid']} (line {line_b}) are not a pair "
                                          "(consecutive ids with the same context)")
            item_id = _item_id(right["uttid"], spec, f"{spec.task}-{pair:05d}")
            if spec.uttids and str(right["uttid"]) in spec.uttids:
                right_index = spec.uttids[str(right["uttid"])][1]
            else:  # the layout does not say where the right ending stood: a fixed, unbiased order
                right_index = int(hashlib.sha256(item_id.encode()).hexdigest(), 16) % 2
            candidates = [right["last"], wrong["last"]] if right_index == 0 else [wrong["last"], right["last"]]
            item = Item(id=item_id, task=spec.task, language=spec.language, context=right["first"], candidates=candidates,
                        right=right_index, source=Source(file=spec.jsonl.name, row=line_a))
            out.append((item, _wav(spec, right["uttid"], where)))
        return out
    for number, row in rows:
        where = f"{spec.jsonl}:{number}"
        missing = [key for key in (*LETTERS, "answer") if key not in row]
        if missing:
            raise OriginalLayoutError(f"{where}: field '{missing[0]}' is missing (a row has 'last', or A-D and 'answer')")
        if row["answer"] not in LETTERS:
            raise OriginalLayoutError(f"{where}: field 'answer': '{row['answer']}' is not one of A-D")
        item = Item(id=_item_id(row["uttid"], spec, str(row["uttid"])), task=spec.task, language=spec.language,
                    context=row["first"], candidates=[row[letter] for letter in LETTERS], right=LETTERS.index(row["answer"]),
                    source=Source(file=spec.jsonl.name, row=number))
        out.append((item, _wav(spec, row["uttid"], where)))
    return out


def _inside(folder: Path, name: str, what: str) -> Path:
    """``folder / name`` for a file name an index file gives, which must not leave ``folder``."""
    return folder / safe_component(name, what)


def find_sets(source: str | Path, *, task: str | None = None, language: str | None = None, audio_dir: str | Path | None = None) -> list[OriginalSet]:
    """The sets at ``source``: an s2sbench export folder, a folder with an ``eval_s2t.yaml``, or one JSONL file."""
    import yaml

    source = Path(source)
    if source.is_dir() and (source / SIDECAR).exists():
        path = source / SIDECAR
        try:
            sidecar = parse_versioned(ExportSidecar, read_json(path), path)
        except DocumentError as error:
            raise OriginalLayoutError(str(error)) from None
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
            raise OriginalLayoutError(f"{source}: a single JSONL file needs its audio folder and language (--audio-dir, --language)")
        name = task or source.stem
        return [OriginalSet(source, Path(audio_dir), safe_component(name, "--task (default: the file name)"), language)]
    raise FileNotFoundError(f"{source}: neither a JSONL file nor a folder with {SIDECAR} or {EVAL_CONFIG}")


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
        store = ClipStore(build.root / "clips")
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
                items_in=len(task_items), pairs_in=len(rows), load_drops=[], rows=rows, drops=[],
            )  # fmt: skip
        finish_build(build, reports, rows_by_task, checks, [], {i.id: i for by_id in items.values() for i in by_id.values()},
                     store, Integrity(clips_checked=len(checks)), {}, origin="import-original",
                     imported_from=sorted({str(spec.jsonl) for spec in sets}))  # fmt: skip
    return {task: len(rows) for task, rows in rows_by_task.items()}
