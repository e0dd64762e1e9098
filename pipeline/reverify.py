"""Re-verify a finished build with another ASR model (say a larger Whisper) without re-synthesizing anything.

The kept clips of ``<build>/clips.jsonl`` are read back from the clip store, checked by the task's gate with the
given ASR engine, and a new audit is written next to the build (never over it): ``verification.jsonl`` (one
:class:`ClipCheck` per clip, with the attempt number of the check that kept it) and ``report.json`` (the summary,
status changes against the build's own audit, and the rows that the new model would have dropped).
Clips missing from the store (a build copied to another machine) are read from the build's ``dataset/``, which
embeds every kept clip.
"""

from __future__ import annotations

import io
import json
import logging
import re
from collections import Counter, defaultdict
from collections.abc import Mapping
from pathlib import Path

import numpy as np
import soundfile

from pydantic import ValidationError

from s2sbench.pipeline.asr.base import ASREngine
from s2sbench.pipeline.manifest import read_records, write_json, write_records
from s2sbench.pipeline.records import BuildRow, Clip, ClipCheck, Item, clip_role
from s2sbench.pipeline.tasks import GateConfig, TaskConfigError, load_task
from s2sbench.pipeline.verify import SAMPLE_RATE_HZ, Verifier, final_checks, summarize_checks

log = logging.getLogger(__name__)

BATCH_CLIPS = 32  # clips read and checked together; bounds memory, the engine batches within


def default_out_dir(build_dir: Path, asr: ASREngine) -> Path:
    slug = re.sub(r"[^A-Za-z0-9._-]+", "-", asr.model_id).strip("-")
    return build_dir / "reverify" / slug


def read_build_items(build_dir: Path) -> dict[str, Item]:
    paths = sorted((build_dir / "items").glob("*.jsonl"))
    if not paths:
        raise FileNotFoundError(f"{build_dir / 'items'}: no item manifests; is {build_dir} a build directory?")
    return {item.id: item for path in paths for item in read_records(path, Item)}


def _build_report(build_dir: Path) -> dict:
    path = build_dir / "build_report.json"
    return json.loads(path.read_text(encoding="utf-8")) if path.is_file() else {}


def _gate_for(task: str, gates: Mapping[str, GateConfig], report: dict) -> tuple[GateConfig, str]:
    """The gate to re-verify ``task`` with: given, else the one the build recorded, else the registry's."""
    if task in gates:
        return gates[task], "given"
    recorded = report.get("tasks", {}).get(task, {}).get("config", {}).get("gate")
    if recorded is not None:
        try:
            return GateConfig.model_validate(recorded), "build_report"
        except ValidationError as error:
            raise ValueError(f"build_report.json: task '{task}': recorded gate is not valid: {error}") from None
    try:
        return load_task(task).gate, "registry"
    except TaskConfigError as error:
        log.warning("task %s: %s; re-verifying with the default gate", task, error)
        return GateConfig(), "default"


class ClipAudio:
    """Clip samples from the clip store, else from the audio embedded in the build's dataset (indexed on first need,
    decoded one clip at a time)."""

    def __init__(self, store, dataset_dir: Path):
        self.store = store
        self.dataset_dir = dataset_dir
        self._index: dict[tuple[str, str, str], tuple[object, int, str, int | None]] | None = None

    def load(self, clip: Clip) -> np.ndarray:
        if self.store.abspath(clip.path).is_file():
            return self.store.load(clip.path)
        where = self._dataset_index().get((clip.item_id, clip.voice, clip.role))
        if where is None:
            raise FileNotFoundError(
                f"clip {clip.item_id} {clip.role} ({clip.voice}): {self.store.abspath(clip.path)} is missing and "
                f"{self.dataset_dir} does not hold it; pass the clip store the build used (--store)"
            )
        split, row, column, position = where
        value = split[row][column]
        data = (value if position is None else value[position])["bytes"]
        samples, rate = soundfile.read(io.BytesIO(data), dtype="float32", always_2d=True)
        if rate != SAMPLE_RATE_HZ:
            raise ValueError(f"{self.dataset_dir}: clip {clip.item_id} {clip.role} is {rate} Hz, expected {SAMPLE_RATE_HZ}")
        return samples.mean(axis=1)

    def _dataset_index(self) -> dict:
        if self._index is None:
            self._index = {}
            if self.dataset_dir.is_dir():
                import datasets

                for split in datasets.load_from_disk(str(self.dataset_dir)).values():
                    raw = split.cast_column("context_audio", datasets.Audio(decode=False)).cast_column(
                        "candidate_audio", datasets.List(datasets.Audio(decode=False))
                    )
                    for row, (item_id, voice, candidates) in enumerate(
                        zip(raw["item_id"], raw["voice"], raw["candidates"])
                    ):
                        self._index[(item_id, voice, clip_role(None))] = (raw, row, "context_audio", None)
                        # candidate_audio holds every candidate in order when candidates are spoken, else nothing
                        for index in range(len(candidates)):
                            self._index[(item_id, voice, clip_role(index))] = (raw, row, "candidate_audio", index)
        return self._index


def reverify_build(
    build_dir: str | Path,
    asr: ASREngine,
    out_dir: str | Path | None = None,
    *,
    clip_store: str | Path | None = None,
    gates: Mapping[str, GateConfig] | None = None,
) -> dict:
    """Check every kept clip of ``build_dir`` again with ``asr``; write and return the new audit's report.

    ``gates`` maps task name -> gate; tasks not in it use their registry config (or the default gate, with a warning).
    ``clip_store`` is the store the build wrote its clips to (default: the build report's, else the usual default).
    """
    from s2sbench.pipeline.audio import ClipStore

    build_dir = Path(build_dir)
    clips_path = build_dir / "clips.jsonl"
    if not clips_path.is_file():
        raise FileNotFoundError(f"{clips_path}: no such file; is {build_dir} a finished build?")
    clips = read_records(clips_path, Clip)
    items = read_build_items(build_dir)
    audit_path = build_dir / "verification.jsonl"
    earlier = final_checks(read_records(audit_path, ClipCheck)) if audit_path.is_file() else []
    before = {(check.item_id, check.voice, check.role): check for check in earlier}
    recorded = _build_report(build_dir)
    store = ClipStore(clip_store if clip_store is not None else recorded.get("clip_store"))
    audio = ClipAudio(store, build_dir / "dataset")
    out_dir = Path(out_dir) if out_dir is not None else default_out_dir(build_dir, asr)

    by_group: dict[tuple[str, str], list[Clip]] = defaultdict(list)
    for number, clip in enumerate(clips, start=1):
        if clip.item_id not in items:
            raise ValueError(f"{clips_path}:{number}: field 'item_id': '{clip.item_id}' is not among the build's items")
        by_group[(items[clip.item_id].task, items[clip.item_id].language)].append(clip)

    checks: list[ClipCheck] = []
    gate_sources: dict[str, str] = {}
    for (task, language), members in sorted(by_group.items()):
        gate, gate_sources[task] = _gate_for(task, gates or {}, recorded)
        verifier = Verifier(asr, gate, language)
        for start in range(0, len(members), BATCH_CLIPS):
            batch = members[start : start + BATCH_CLIPS]
            audios = [audio.load(clip) for clip in batch]
            for clip, check in zip(batch, verifier.check_batch(batch, audios, attempt=1)):
                previous = before.get((clip.item_id, clip.voice, clip.role))
                checks.append(check.model_copy(update={"attempt": previous.attempt}) if previous else check)

    write_records(out_dir / "verification.jsonl", checks)
    transitions = Counter(
        f"{before[key].status}->{check.status}" if (key := (check.item_id, check.voice, check.role)) in before
        else f"none->{check.status}"
        for check in checks
    )
    failing = sorted({BuildRow.make_id(check.item_id, check.voice) for check in checks if check.status == "rejected"})
    report = {
        "build_dir": str(build_dir),
        "asr_model": asr.model_id,
        "clip_store": str(store.root),
        "gates": gate_sources,
        "clips": len(checks),
        "status_changes": dict(sorted(transitions.items())),
        "rows_now_rejected": failing,
        "verification": summarize_checks(checks, items),
    }
    write_json(out_dir / "report.json", report)
    return report
