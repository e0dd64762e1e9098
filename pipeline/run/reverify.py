"""Re-verify a finished build with another ASR model (say a larger Whisper) without re-synthesizing anything.

The kept clips of ``<build>/clips.jsonl`` are read back from the clip store, checked by the task's gate with the
given ASR engine, and a new audit is written next to the build (never over it): ``verification.jsonl`` (one
:class:`ClipCheck` per clip, with the attempt number of the check that kept it) and ``report.json`` (the summary,
status changes against the build's own audit, and the rows that the new model would have dropped).
Clips missing from the store (a build copied to another machine) or damaged there (they fail their hash) are read
from the build's ``dataset/``, which embeds every kept clip.
"""

from __future__ import annotations

import logging
import re
from collections import Counter, defaultdict
from collections.abc import Mapping
from pathlib import Path

import numpy as np

from s2sbench.pipeline.gate.asr.base import ASREngine
from s2sbench.pipeline.speech.audio import ClipIntegrityError, ClipStore, decode_audio
from s2sbench.pipeline.buildfolder.build_report import BuildReport, VerificationSummary
from s2sbench.pipeline.buildfolder.builddir import BuildDir, NotABuildError
from s2sbench.pipeline.buildfolder.dataset import DatasetError, undecoded
from s2sbench.pipeline.core.records import BuildRow, Clip, Record, Role
from s2sbench.pipeline.items.task_config import GateConfig, TaskConfigError
from s2sbench.pipeline.catalog.tasks import load_task
from s2sbench.pipeline.gate.verify import SAMPLE_RATE_HZ, Verifier, final_checks, summarize_checks

log = logging.getLogger(__name__)

BATCH_CLIPS = 32  # clips read and checked together; bounds memory, the engine batches within


class ReverifyReport(Record):
    """``report.json`` of a re-verification."""

    build_dir: str
    audit_dir: str  # where this audit is written
    asr_model: str
    clip_store: str
    gates: dict[str, str]  # task -> where its gate came from: given, build_report, registry, default
    clips: int
    status_changes: dict[str, int]  # "passed->rejected": count
    rows_now_rejected: list[str]
    verification: VerificationSummary


def model_slug(asr: ASREngine) -> str:
    return re.sub(r"[^A-Za-z0-9._-]+", "-", asr.model_id).strip("-.") or "asr"


def default_out_dir(build_dir: str | Path | BuildDir, asr: ASREngine) -> Path:
    return BuildDir.of(build_dir).reverify_audit_dir(model_slug(asr))


def _gate_for(task: str, gates: Mapping[str, GateConfig], report: BuildReport | None) -> tuple[GateConfig, str]:
    """The gate to re-verify ``task`` with: given, else the one the build recorded, else the registry's."""
    if task in gates:
        return gates[task], "given"
    recorded = report.task_config(task) if report is not None else None
    if recorded is not None:
        return recorded.gate, "build_report"
    try:
        return load_task(task).gate, "registry"
    except TaskConfigError as error:
        log.warning("task %s: %s; re-verifying with the default gate", task, error)
        return GateConfig(), "default"


class ClipAudio:
    """Clip samples from the clip store (checked by hash), else from the audio embedded in the build's dataset
    (indexed on first need, decoded one clip at a time)."""

    def __init__(self, store: ClipStore, build: BuildDir):
        self.store = store
        self.build = build
        self._index: dict[tuple[str, str, Role], tuple[object, int, str, int | None]] | None = None

    def load(self, clip: Clip) -> np.ndarray:
        what = f"clip {clip.item_id} {clip.role} ({clip.voice})"
        try:
            return self.store.load(self.store.audio_path(clip.audio_sha256), what)
        except ClipIntegrityError as problem:
            where = self._dataset_index().get((clip.item_id, clip.voice, clip.role))
            if where is None:
                raise ClipIntegrityError(f"{problem}, and {self.build.dataset_dir} does not hold it; pass the clip store "
                                         "the build used (--store)") from None  # fmt: skip
        split, row, column, position = where
        value = split[row][column]
        data = (value if position is None else value[position])["bytes"]
        samples, rate = decode_audio(data, f"{self.build.dataset_dir}: {what}")
        if rate != SAMPLE_RATE_HZ:
            raise DatasetError(f"{self.build.dataset_dir}: {what} is {rate} Hz, expected {SAMPLE_RATE_HZ}")
        return samples

    def _dataset_index(self) -> dict:
        if self._index is None:
            self._index = {}
            try:
                configs = self.build.load_dataset()
            except NotABuildError:
                return self._index
            for split in (split for splits in configs.values() for split in splits.values()):
                raw = undecoded(split)
                for number, (item_id, voice, candidates) in enumerate(zip(raw["item_id"], raw["voice"], raw["candidates"])):
                    self._index[(item_id, voice, Role.context())] = (raw, number, "context_audio", None)
                    # candidate_audio holds every candidate in order when candidates are spoken, else nothing
                    for index in range(len(candidates)):
                        self._index[(item_id, voice, Role.of_candidate(index))] = (raw, number, "candidate_audio", index)
        return self._index


def reverify_build(
    build_dir: str | Path | BuildDir,
    asr: ASREngine,
    out_dir: str | Path | None = None,
    *,
    clip_store: str | Path | None = None,
    gates: Mapping[str, GateConfig] | None = None,
) -> ReverifyReport:
    """Check every kept clip of ``build_dir`` again with ``asr``; write and return the new audit's report.

    ``gates`` maps task name -> gate; tasks not in it use their registry config (or the default gate, with a warning).
    ``clip_store`` is the store the build wrote its clips to (default: the build report's, else the usual default).
    The build folder's lock is held throughout (a build in progress there is refused).
    """
    build = BuildDir.of(build_dir)
    if not build.root.is_dir():  # said before locking, which would make the folder
        raise NotABuildError(f"{build.root}: no such folder; pass a build directory made by `s2sbench build`")
    with build.lock():  # a build writing the folder meanwhile would change what is checked
        return _reverify(build, asr, out_dir, clip_store, gates)


def _reverify(build: BuildDir, asr: ASREngine, out_dir: str | Path | None, clip_store: str | Path | None,
              gates: Mapping[str, GateConfig] | None) -> ReverifyReport:
    clips = build.read_clips()
    items = build.read_all_items()
    earlier = final_checks(build.read_verification()) if build.verification_path.is_file() else []
    before = {(check.item_id, check.voice, check.role): check for check in earlier}
    recorded = build.read_report() if build.report_path.is_file() else None
    store = ClipStore(clip_store if clip_store is not None else (recorded.clip_store if recorded else None))
    audio = ClipAudio(store, build)
    out_dir = Path(out_dir) if out_dir is not None else default_out_dir(build, asr)

    by_group: dict[tuple[str, str], list[Clip]] = defaultdict(list)
    for number, clip in enumerate(clips, start=1):
        if clip.item_id not in items:
            raise DatasetError(f"{build.clips_path}:{number}: field 'item_id': '{clip.item_id}' is not among the build's items")
        by_group[(items[clip.item_id].task, items[clip.item_id].language)].append(clip)

    checks = []
    gate_sources: dict[str, str] = {}
    for (task, language), members in sorted(by_group.items()):
        gate, gate_sources[task] = _gate_for(task, gates or {}, recorded)
        verifier = Verifier(asr, gate, language)
        for start in range(0, len(members), BATCH_CLIPS):
            batch = members[start : start + BATCH_CLIPS]
            audios = [audio.load(clip) for clip in batch]
            for clip, clip_audio, check in zip(batch, audios, verifier.check_batch(batch, audios, attempt=1)):
                check = verifier.with_margin(check, clip_audio)  # one attempt per clip here: its last
                check = verifier.on_reference(check) or check
                previous = before.get((clip.item_id, clip.voice, clip.role))
                checks.append(check.model_copy(update={"attempt": previous.attempt}) if previous else check)

    transitions = Counter(
        f"{before[key].status}->{check.status}" if (key := (check.item_id, check.voice, check.role)) in before
        else f"none->{check.status}"
        for check in checks
    )
    failing = sorted({BuildRow.make_id(check.item_id, check.voice) for check in checks if check.status == "rejected"})
    report = ReverifyReport(
        build_dir=str(build.root), audit_dir=str(out_dir), asr_model=asr.model_id, clip_store=str(store.root), gates=gate_sources,
        clips=len(checks), status_changes=dict(sorted(transitions.items())), rows_now_rejected=failing,
        verification=summarize_checks(checks, items),
    )  # fmt: skip
    build.write_reverify_audit(out_dir, checks, report)
    return report
