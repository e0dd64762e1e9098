"""What a report shows of a build: its counts, every verification attempt, why clips and items were dropped, and a
bounded sample of kept and rejected clips with their audio.

The audio of a clip, kept or rejected, is found in the build's own clip store (the one given, else the one the build
report names) by the attempt's ``clip_key``, and read only from the store's ``audio/`` folder after its hash is
checked: a clip whose audio is missing or damaged is listed without a player, never embedded. The sample is
deterministic: clips are ordered by a hash of their attempt id and taken in turn from each group (task and voice
for kept clips, the first reject reason for rejected ones), so every group shows up before any shows twice.
"""

from __future__ import annotations

import base64
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from s2sbench.pipeline.speech.audio import ClipIntegrityError, ClipStore
from s2sbench.pipeline.buildfolder.build_report import BuildReport
from s2sbench.pipeline.buildfolder.builddir import BuildDir
from s2sbench.pipeline.core.manifest import stable_hash
from s2sbench.pipeline.core.records import ClipCheck, Drop, Item


@dataclass(frozen=True)
class SampleOptions:
    clips_per_status: int = 6  # kept and rejected clips shown, each
    max_audio_bytes: int = 6_000_000  # WAV bytes embedded in all; clips past it are listed without a player


@dataclass(frozen=True)
class ClipSample:
    status: str  # passed | unverified (kept) or rejected
    task: str
    language: str
    voice: str
    item_id: str
    role: str
    attempt: int
    text: str  # what was to be spoken (the item's context or candidate)
    transcript: str
    metric: str
    error_rate: float | None
    reason: str
    audio_wav: bytes | None  # None: not found in the store, or over the byte budget (see ``missing``)
    missing: str = ""

    @property
    def audio_uri(self) -> str | None:
        if self.audio_wav is None:
            return None
        return "data:audio/wav;base64," + base64.b64encode(self.audio_wav).decode("ascii")


@dataclass(frozen=True)
class BuildAudit:
    build_dir: Path
    report: BuildReport
    checks: object  # pandas DataFrame, one row per attempt (ClipCheck fields + task, language)
    drop_counts: dict[str, dict[str, int]]  # kind -> reason -> count
    samples: tuple[ClipSample, ...] = field(default=())
    store_root: Path | None = None
    n_kept_clips: int = 0  # clips of kept rows (the sample's population), and rejected attempts
    n_rejected_attempts: int = 0
    gate_drops: tuple[Drop, ...] = ()  # the item x voice rows the gate dropped, each with every attempt's verdict


def _interleave(checks: Sequence[ClipCheck], group_of, limit: int) -> list[ClipCheck]:
    groups: dict[str, list[ClipCheck]] = {}
    for check in sorted(checks, key=lambda c: stable_hash(c.id)):
        groups.setdefault(group_of(check), []).append(check)
    chosen: list[ClipCheck] = []
    queues = [groups[name] for name in sorted(groups)]
    while len(chosen) < limit and any(queues):
        for queue in queues:
            if queue and len(chosen) < limit:
                chosen.append(queue.pop(0))
    return chosen


def _sample(check: ClipCheck, item: Item | None, store: ClipStore, budget: list[int]) -> ClipSample:
    audio, missing = None, ""
    stored = store.lookup(check.clip_key) if check.clip_key else None
    if stored is None:
        missing = f"clip {check.clip_key[:12] or '(none)'} is not in the clip store {store.root} (or is damaged there)"
    else:
        try:
            data = store.read_bytes(stored.path, f"clip {check.clip_key[:12]}")
        except ClipIntegrityError as error:
            data, missing = None, str(error)
        if data is not None and len(data) > budget[0]:
            missing = "not embedded: the report's audio budget is spent"
        elif data is not None:
            budget[0] -= len(data)
            audio = data
    return ClipSample(
        status=check.status, task=item.task if item else "", language=item.language if item else "",
        voice=check.voice, item_id=check.item_id, role=check.role, attempt=check.attempt,
        text=check.role.text_of(item) if item else "", transcript=check.transcript, metric=check.metric,
        error_rate=check.error_rate, reason=check.reason, audio_wav=audio, missing=missing,
    )  # fmt: skip


def load_build(
    build_dir: str | Path | BuildDir, store_root: str | Path | None = None, options: SampleOptions = SampleOptions()
) -> BuildAudit:
    """Read a build directory (report, audit, manifest, drops, items) and sample clips from its clip store."""
    import pandas as pd

    build = BuildDir.of(build_dir)
    report = build.read_report()
    items = build.read_all_items()
    checks = build.read_verification()
    rows = build.read_manifest()
    drops = build.read_drops()

    frame = pd.DataFrame(
        [{**check.model_dump(exclude={"reasons"}), "reason": check.reason,
          "task": items[check.item_id].task if check.item_id in items else "",
          "language": items[check.item_id].language if check.item_id in items else ""} for check in checks],
        columns=[*(name for name in ClipCheck.model_fields if name != "reasons"), "reason", "task", "language"],
    )  # fmt: skip
    rejected = [check for check in checks if check.status == "rejected"]
    drop_counts = {
        "rejected clip attempts": dict(Counter(reason.code for check in rejected for reason in check.reasons)),
        "dropped items (by stage)": dict(Counter(f"{drop.stage}: {drop.reason.code}" for drop in drops)),
    }

    store = ClipStore(Path(store_root) if store_root is not None else Path(report.clip_store))
    kept = [check for row in rows for check in row.checks.values()]
    budget = [options.max_audio_bytes]
    chosen = _interleave(kept, lambda c: f"{items[c.item_id].task if c.item_id in items else ''} {c.voice}",
                         options.clips_per_status)  # fmt: skip
    chosen += _interleave(rejected, lambda c: c.reasons[0].code if c.reasons else "", options.clips_per_status)
    samples = tuple(_sample(check, items.get(check.item_id), store, budget) for check in chosen)
    gate_drops = tuple(drop for drop in drops if drop.stage == "speak")
    return BuildAudit(build.root, report, frame, drop_counts, samples, store.root, len(kept), len(rejected), gate_drops)
