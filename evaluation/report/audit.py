"""What a report shows of a build: its counts, every verification attempt, why clips and items were dropped, and a
bounded sample of kept and rejected clips with their audio.

The audio of a clip, kept or rejected, is found in the clip store by the attempt's ``clip_key`` (the store the build
report names, else the one given, else the usual default). The sample is deterministic: clips are ordered by a hash
of their attempt id and taken in turn from each group (task and voice for kept clips, the first reject reason for
rejected ones), so every group shows up before any shows twice.
"""

from __future__ import annotations

import base64
import json
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from s2sbench.pipeline.audio import ClipStore
from s2sbench.pipeline.manifest import read_records, stable_hash
from s2sbench.pipeline.records import BuildRow, ClipCheck, Drop, Item
from s2sbench.pipeline.reverify import read_build_items


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
    report: dict  # build_report.json
    checks: object  # pandas DataFrame, one row per attempt (ClipCheck fields + task, language)
    drop_counts: dict[str, dict[str, int]]  # kind -> reason -> count
    samples: tuple[ClipSample, ...] = field(default=())
    store_root: Path | None = None
    n_kept_clips: int = 0  # clips of kept rows (the sample's population), and rejected attempts
    n_rejected_attempts: int = 0


def reason_kinds(reason: str) -> list[str]:
    """``"error_rate: wer 0.300 > 0.15; too_long: ..."`` -> ``["error_rate", "too_long"]``."""
    return [part.split(":")[0].strip() for part in reason.split(";") if part.strip()]


def _text_of(item: Item | None, role: str) -> str:
    if item is None:
        return ""
    if role == "context":
        return item.context
    index = int(role.split(":")[1]) if role.startswith("candidate:") else -1
    return item.candidates[index] if 0 <= index < len(item.candidates) else ""


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
        missing = f"clip {check.clip_key[:12] or '(none)'} not in the clip store {store.root}"
    else:
        data = store.abspath(stored.path).read_bytes()
        if len(data) > budget[0]:
            missing = "not embedded: the report's audio budget is spent"
        else:
            budget[0] -= len(data)
            audio = data
    return ClipSample(
        status=check.status, task=item.task if item else "", language=item.language if item else "",
        voice=check.voice, item_id=check.item_id, role=check.role, attempt=check.attempt,
        text=_text_of(item, check.role), transcript=check.transcript, metric=check.metric,
        error_rate=check.error_rate, reason=check.reason, audio_wav=audio, missing=missing,
    )  # fmt: skip


def load_build(
    build_dir: str | Path, store_root: str | Path | None = None, options: SampleOptions = SampleOptions()
) -> BuildAudit:
    """Read a build directory (``build_report.json``, ``verification.jsonl``, ``manifest.jsonl``, ``drops.jsonl``,
    ``items/``) and sample clips from its clip store."""
    import pandas as pd

    build_dir = Path(build_dir)
    report_path = build_dir / "build_report.json"
    if not report_path.is_file():
        raise FileNotFoundError(f"{report_path}: not found; pass a directory made by `s2sbench build`")
    report = json.loads(report_path.read_text(encoding="utf-8"))
    items = read_build_items(build_dir)
    checks = read_records(build_dir / "verification.jsonl", ClipCheck)
    rows = read_records(build_dir / "manifest.jsonl", BuildRow)
    drops_path = build_dir / "drops.jsonl"
    drops = read_records(drops_path, Drop) if drops_path.is_file() else []

    frame = pd.DataFrame(
        [{**check.model_dump(), "task": items[check.item_id].task if check.item_id in items else "",
          "language": items[check.item_id].language if check.item_id in items else ""} for check in checks],
        columns=[*ClipCheck.model_fields, "task", "language"],
    )  # fmt: skip
    rejected = [check for check in checks if check.status == "rejected"]
    drop_counts = {
        "rejected clip attempts": dict(Counter(kind for check in rejected for kind in reason_kinds(check.reason))),
        "dropped items (by stage)": dict(Counter(f"{drop.stage}: {reason_kinds(drop.reason)[0]}" for drop in drops
                                                 if drop.reason)),  # fmt: skip
    }

    root = store_root if store_root is not None else report.get("clip_store")
    store = ClipStore(Path(root) if root else None)
    kept = [check for row in rows for check in row.checks.values()]
    budget = [options.max_audio_bytes]
    chosen = _interleave(kept, lambda c: f"{items[c.item_id].task if c.item_id in items else ''} {c.voice}",
                         options.clips_per_status)  # fmt: skip
    chosen += _interleave(rejected, lambda c: reason_kinds(c.reason)[0] if c.reason else "", options.clips_per_status)
    samples = tuple(_sample(check, items.get(check.item_id), store, budget) for check in chosen)
    return BuildAudit(build_dir, report, frame, drop_counts, samples, store.root, len(kept), len(rejected))
