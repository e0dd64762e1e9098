"""Assembly: the shards of a build become ``manifest.jsonl``, the audit files, a ``datasets.DatasetDict`` on disk
(one split per task, 16 kHz Audio columns with the audio embedded) and ``build_report.json``."""

from __future__ import annotations

import json
import os
import platform
import shutil
from collections import Counter
from importlib import metadata
from pathlib import Path

from s2sbench.pipeline.build import items_path, shard_dir
from s2sbench.pipeline.manifest import read_records, write_json, write_records
from s2sbench.pipeline.records import BuildRow, ClipCheck, Drop, Item
from s2sbench.pipeline.tasks import TaskConfig

SAMPLE_RATE_HZ = 16000


def _shard_dirs(out_dir: Path, task: TaskConfig, n_items: int, shard_size: int) -> list[Path]:
    n_shards = max(1, -(-n_items // shard_size))
    return [shard_dir(out_dir, task, shard) for shard in range(n_shards)]


def _read_shards(folders: list[Path], name: str, cls):
    records = []
    for folder in folders:
        path = folder / name
        if not (folder / ".done").exists():
            raise RuntimeError(f"{folder}: shard is not finished (no .done marker); re-run the build to resume it")
        records.extend(read_records(path, cls))
    return records


def dataset_row(row: BuildRow, store) -> dict:
    """One dataset row: text columns, label, voice, audio (as file paths, embedded on save) and verification."""
    item = row.item
    context_check = row.checks.get("context")
    candidate_roles = [f"candidate:{index}" for index in range(len(item.candidates))]
    statuses = {check.status for check in row.checks.values()}
    return {
        "id": row.id,
        "item_id": item.id,
        "task": item.task,
        "language": item.language,
        "context": item.context,
        "candidates": list(item.candidates),
        "label": item.right,
        "voice": row.voice,
        "context_audio": str(store.abspath(row.clips["context"].path)) if "context" in row.clips else None,
        "candidate_audio": [str(store.abspath(row.clips[role].path)) for role in candidate_roles if role in row.clips],
        "context_transcript": context_check.transcript if context_check else "",
        "context_error_rate": context_check.error_rate if context_check else None,
        "context_metric": context_check.metric if context_check else "none",
        "verification_status": "unverified" if "unverified" in statuses else "passed",
        "source_file": item.source.file,
        "source_row": item.source.row,
    }


def dataset_features():
    """The columns of every s2sbench dataset split (a build, an import of the original layout, a Hub config)."""
    import datasets

    return datasets.Features(
        {
            "id": datasets.Value("string"),
            "item_id": datasets.Value("string"),
            "task": datasets.Value("string"),
            "language": datasets.Value("string"),
            "context": datasets.Value("string"),
            "candidates": datasets.List(datasets.Value("string")),
            "label": datasets.Value("int32"),
            "voice": datasets.Value("string"),
            "context_audio": datasets.Audio(sampling_rate=SAMPLE_RATE_HZ),
            "candidate_audio": datasets.List(datasets.Audio(sampling_rate=SAMPLE_RATE_HZ)),
            "context_transcript": datasets.Value("string"),
            "context_error_rate": datasets.Value("float64"),
            "context_metric": datasets.Value("string"),
            "verification_status": datasets.Value("string"),
            "source_file": datasets.Value("string"),
            "source_row": datasets.Value("int64"),
        }
    )


def split_name(task: str) -> str:
    """The dataset split of a task (split names cannot hold '-')."""
    return task.replace("-", "_")


def build_dataset(rows_by_task: dict[str, list[BuildRow]], store):
    import datasets

    features = dataset_features()
    splits = {}
    for task, rows in rows_by_task.items():
        table = [dataset_row(row, store) for row in rows]
        columns = {name: [entry[name] for entry in table] for name in features}
        splits[split_name(task)] = datasets.Dataset.from_dict(columns, features=features)
    return datasets.DatasetDict(splits)


def save_dataset_atomically(dataset, target: Path) -> None:
    """Save into a fresh folder beside ``target`` and swap it in, so a killed save never leaves a half dataset."""
    for stale in target.parent.glob(f".{target.name}.tmp-*"):
        shutil.rmtree(stale)
    staging = target.parent / f".{target.name}.tmp-{os.getpid()}"
    dataset.save_to_disk(str(staging))
    if target.exists():
        shutil.rmtree(target)
    os.replace(staging, target)


def _package_version(name: str) -> str:
    try:
        return metadata.version(name)
    except metadata.PackageNotFoundError:
        return "not installed"


def assemble_build(out_dir: Path, tasks: list[TaskConfig], shard_size: int, store_root: Path | None = None) -> dict:
    """Merge the shards of every task, save the dataset and write the build report; returns the report."""
    from s2sbench.pipeline.audio import ClipStore
    from s2sbench.pipeline.tts.voices import get_voice
    from s2sbench.pipeline.verify import summarize_checks

    out_dir = Path(out_dir)
    store = ClipStore(store_root)
    rows_by_task: dict[str, list[BuildRow]] = {}
    all_checks: list[ClipCheck] = []
    all_drops: list[Drop] = []
    per_task = {}
    items_by_id: dict[str, Item] = {}
    for task in tasks:
        items = read_records(items_path(out_dir, task), Item)
        items_by_id.update((item.id, item) for item in items)
        load_drops = read_records(items_path(out_dir, task).with_suffix(".drops.jsonl"), Drop)
        load_report = json.loads(items_path(out_dir, task).with_suffix(".report.json").read_text(encoding="utf-8"))
        folders = _shard_dirs(out_dir, task, len(items), shard_size)
        rows = _read_shards(folders, "rows.jsonl", BuildRow)
        drops = _read_shards(folders, "drops.jsonl", Drop)
        checks = _read_shards(folders, "checks.jsonl", ClipCheck)
        order = {item.id: index for index, item in enumerate(items)}
        rows.sort(key=lambda row: (order[row.item.id], task.voices.index(row.voice)))
        rows_by_task[task.name] = rows
        all_checks.extend(checks)
        all_drops.extend(load_drops + drops)
        pairs_in = len(items) * len(task.voices)
        if len(rows) + len(drops) != pairs_in:
            raise RuntimeError(
                f"task {task.name}: {len(rows)} kept + {len(drops)} dropped != {pairs_in} item x voice pairs in"
            )
        per_task[task.name] = {
            "config": task.model_dump(mode="json"),
            "items": load_report,
            "version": task.version,
            "language": task.language,
            "voices": task.voices,
            "source_rows_dropped": len(load_drops),
            "items_in": len(items),
            "item_voice_pairs_in": pairs_in,
            "kept": len(rows),
            "dropped": len(drops),
            "drop_reasons": dict(Counter(drop.reason.split(":")[0] for drop in drops)),
            "clips_kept": sum(len(row.clips) for row in rows),
            "clips_unverified": sum(1 for row in rows for check in row.checks.values() if check.status == "unverified"),
        }
    every_row = [row for rows in rows_by_task.values() for row in rows]
    write_records(out_dir / "manifest.jsonl", every_row)
    write_records(out_dir / "clips.jsonl", [clip for row in every_row for clip in row.clips.values()])
    write_records(out_dir / "verification.jsonl", all_checks)
    write_records(out_dir / "drops.jsonl", all_drops)
    save_dataset_atomically(build_dataset(rows_by_task, store), out_dir / "dataset")
    report = {
        "tasks": per_task,
        "totals": {
            "items_in": sum(entry["items_in"] for entry in per_task.values()),
            "item_voice_pairs_in": sum(entry["item_voice_pairs_in"] for entry in per_task.values()),
            "kept": sum(entry["kept"] for entry in per_task.values()),
            "dropped": sum(entry["dropped"] for entry in per_task.values()),
            "distinct_clips": len({check.clip_key for check in all_checks if check.clip_key}),
            "clip_attempts": len(all_checks),
            "clips_rejected": sum(1 for check in all_checks if check.status == "rejected"),
        },
        "verification": summarize_checks(all_checks, items_by_id),
        "voices": {voice_id: get_voice(voice_id).model_dump(mode="json") for voice_id in sorted({v for t in tasks for v in t.voices})},
        "normalization": {
            "before_tts": "s2sbench.pipeline.normalize.normalize_for_tts (numbers, dates, currency, abbreviations, symbols)",
            "before_scoring": "s2sbench.pipeline.verify.error_rate (Whisper English normalizer; CER for zh/ja)",
            "languages": sorted({t.language for t in tasks}),
        },
        "clip_store": str(store.root),
        "engines": sorted({f"{clip.engine} {clip.model_version}" for row in every_row for clip in row.clips.values()}),
        "asr_models": sorted({check.asr_model for check in all_checks}),
        "software": {
            "python": platform.python_version(),
            **{name: _package_version(name) for name in ("s2sbench", "datasets", "torch", "piper-tts", "faster-whisper", "jiwer")},
        },
    }
    write_json(out_dir / "build_report.json", report)
    return report
