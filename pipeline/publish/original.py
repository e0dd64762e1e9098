"""The layout of the original S2SBench release: export a build to it, and read it back.

Stories (two candidates): JSONL rows ``{"uttid", "first", "last"}``, one wav per row at ``<audio_dir>/<uttid>.wav``
(the context audio, duplicated for the two rows of a pair). ``uttid`` is ``"<n>_<item id>"``; rows sorted by ``n``
pair up (0,1), (2,3), ... and the lower ``n`` carries the right ending. Choice sets (four candidates, sCMMLU):
rows ``{"uttid", "first", "A", "B", "C", "D", "answer"}`` with the stem audio at ``<audio_dir>/<uttid>.wav``.

An export folder holds, per config, ``<config>.jsonl`` and ``<config>/<uttid>.wav``, an ``eval_s2t.yaml`` in the
original evaluation code's config format, and ``s2sbench_export.json``, which maps each uttid back to its item and
candidate so that an import restores the build exactly. Without that file (the published S2SBench data) item ids
come from the uttids and the two endings of a story are put in an order drawn from a hash of the item id, so the
right ending is not always first.
"""

from __future__ import annotations

import hashlib
import io
import json
import re
from dataclasses import dataclass
from pathlib import Path

from s2sbench.pipeline.assemble import SAMPLE_RATE_HZ, dataset_features, split_name
from s2sbench.pipeline.manifest import atomic_write_bytes, atomic_write_text, write_json, write_records
from s2sbench.pipeline.records import BuildRow, Item, Source


LETTERS = "ABCD"
SIDECAR = "s2sbench_export.json"
EVAL_CONFIG = "eval_s2t.yaml"


class OriginalLayoutError(ValueError):
    """A build that cannot be written in the original layout, or an original-layout file that cannot be read."""


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


def _wav_16k(audio: dict, where: str) -> bytes:
    """The clip as a 16 kHz wav: the stored bytes when they already are one (byte-exact), else re-encoded PCM-16."""
    import numpy as np
    import soundfile as sf

    data = audio.get("bytes") if audio else None
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


def export_original(build_dir: str | Path, out_dir: str | Path) -> list[ExportedSet]:
    """Write every config of a build (task, or task and voice) in the original S2SBench layout."""
    import datasets
    import yaml

    from s2sbench.pipeline.publish.hub import config_name

    build_dir, out_dir = Path(build_dir), Path(out_dir)
    splits = datasets.load_from_disk(str(build_dir / "dataset"))
    sidecar, eval_config, exported = {"sets": {}}, {"datasets": {}}, []
    for split_key in sorted(splits):
        columns = ["id", "item_id", "task", "language", "context", "candidates", "label", "voice", "context_audio"]
        table = splits[split_key].select_columns(columns).cast_column("context_audio", datasets.Audio(decode=False))
        voices = sorted(set(table["voice"]))
        for voice in voices:
            rows = [row for row in table if row["voice"] == voice]
            task = rows[0]["task"]
            name = config_name(task, voice, len(voices))
            n_candidates = {len(row["candidates"]) for row in rows}
            if n_candidates not in ({2}, {4}):
                raise OriginalLayoutError(f"{build_dir}: task {task} has {sorted(n_candidates)} candidates per item; "
                                          "the original layout holds 2 (stories) or 4 (sCMMLU)")
            story = n_candidates == {2}
            lines, uttids = [], {}
            for n, row in enumerate(rows):
                wav = _wav_16k(row["context_audio"], f"{build_dir}/dataset split {split_key} row {row['id']}")
                right, candidates = row["label"], row["candidates"]
                if story:
                    order = [right, 1 - right]  # the right ending takes the even (lower) id
                    entries = [(f"{2 * n + slot}_{_safe(row['item_id'])}", {"last": candidates[k]}, k) for slot, k in enumerate(order)]
                else:
                    entries = [(f"{n}_{_safe(row['item_id'])}", {**dict(zip(LETTERS, candidates)), "answer": LETTERS[right]}, None)]
                for uttid, fields, candidate in entries:
                    lines.append(json.dumps({"uttid": uttid, "first": row["context"], **fields}, ensure_ascii=False) + "\n")
                    atomic_write_bytes(out_dir / name / f"{uttid}.wav", wav)
                    uttids[uttid] = [row["item_id"], candidate]
            atomic_write_text(out_dir / f"{name}.jsonl", "".join(lines))
            language = rows[0]["language"]
            sidecar["sets"][name] = {"task": task, "voice": voice, "language": language, "format": "story" if story else "choice",
                                     "jsonl": f"{name}.jsonl", "audio_dir": name, "uttids": uttids}
            eval_config["datasets"][name] = {"path": f"{name}.jsonl", "audio_path": name, "lang": language}
            exported.append(ExportedSet(name, task, voice, "story" if story else "choice", len(lines), len(rows)))
    write_json(out_dir / SIDECAR, sidecar)
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
    uttids: dict | None = None  # uttid -> [item id, candidate index], from an s2sbench export


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
    path = spec.audio_dir / f"{uttid}.wav"
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


def find_sets(source: str | Path, *, task: str | None = None, language: str | None = None, audio_dir: str | Path | None = None) -> list[OriginalSet]:
    """The sets at ``source``: an s2sbench export folder, a folder with an ``eval_s2t.yaml``, or one JSONL file."""
    import yaml

    source = Path(source)
    if source.is_dir() and (source / SIDECAR).exists():
        sets = json.loads((source / SIDECAR).read_text(encoding="utf-8"))["sets"]
        return [OriginalSet(source / entry["jsonl"], source / entry["audio_dir"], entry["task"], entry["language"], entry["voice"], entry["uttids"])
                for entry in sets.values()]
    if source.is_dir() and (source / EVAL_CONFIG).exists():
        config = yaml.safe_load((source / EVAL_CONFIG).read_text(encoding="utf-8")) or {}
        return [OriginalSet(source / entry["path"], source / entry["audio_path"], name, entry["lang"])
                for name, entry in config.get("datasets", {}).items()]
    if source.is_file():
        if audio_dir is None or language is None:
            raise OriginalLayoutError(f"{source}: a single JSONL file needs its audio folder and language (--audio-dir, --language)")
        return [OriginalSet(source, Path(audio_dir), task or source.stem, language)]
    raise FileNotFoundError(f"{source}: neither a JSONL file nor a folder with {SIDECAR} or {EVAL_CONFIG}")


def import_original(sets: list[OriginalSet], out_dir: str | Path) -> dict[str, int]:
    """Write ``items/<task>.jsonl`` and a ``dataset/`` like a build's (audio unverified); returns rows per task."""
    import datasets

    out_dir = Path(out_dir)
    by_task: dict[str, list[dict]] = {}
    items: dict[str, dict[str, Item]] = {}  # task -> item id -> item, over all voices of the task
    for spec in sets:
        pairs = read_original_set(spec)
        items.setdefault(spec.task, {}).update((item.id, item) for item, _ in pairs)
        by_task.setdefault(spec.task, []).extend({
            "id": BuildRow.make_id(item.id, spec.voice), "item_id": item.id, "task": item.task, "language": item.language,
            "context": item.context, "candidates": item.candidates, "label": item.right, "voice": spec.voice,
            "context_audio": {"bytes": wav, "path": f"{item.id}.wav"}, "candidate_audio": [],
            "context_transcript": "", "context_error_rate": None, "context_metric": "none",
            "verification_status": "unverified", "source_file": item.source.file, "source_row": item.source.row,
        } for item, wav in pairs)
    features = dataset_features()
    for task, task_items in items.items():
        write_records(out_dir / "items" / f"{task}.jsonl", task_items.values())
    splits = {split_name(task): datasets.Dataset.from_list(rows, features=features) for task, rows in by_task.items()}
    datasets.DatasetDict(splits).save_to_disk(str(out_dir / "dataset"))
    write_json(out_dir / "build_report.json", {
        "imported_from": sorted({str(spec.jsonl) for spec in sets}),
        "tasks": {task: {"language": rows[0]["language"], "voices": sorted({row["voice"] for row in rows}), "kept": len(rows)}
                  for task, rows in by_task.items()},
        "note": "imported from the original S2SBench layout; the audio was not verified by s2sbench",
    })
    return {task: len(rows) for task, rows in by_task.items()}
