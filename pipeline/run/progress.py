"""Progress of a long run (a build, an evaluation): units done of the total per part, the rate, and an ETA.

A :class:`Progress` counts; a :class:`ProgressReporter` shows it: a bar on a terminal (tqdm, which hides itself when
the output is not one), a plain line on the ``s2sbench.progress`` logger every ``interval_s`` (the CLI prints that
logger; a log file keeps the lines), and each listener (a flow's Prefect progress artifact) at every tick. The rate
counts only this run's units of the last ten minutes, so a resumed run's ETA is not flattered by what an earlier run
did, nor an hour-old slowdown of the machine still in it.

The build counts from its folder (:class:`BuildProgress`): rows and drops written by its shards, wherever they run,
and the clip attempts of its audit. Its rows differ tenfold in what they cost (a short statement against a clinical
case history), and a source groups them (CMMLU by subject), so a rate in rows swings with the subject; its ETA
follows the work instead: each row weighs the characters it speaks plus :data:`CLIP_WEIGHT_CHARS` per clip.
"""

from __future__ import annotations

import logging
import time
from collections import deque
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path

log = logging.getLogger("s2sbench.progress")

DEFAULT_INTERVAL_S = 30.0
RATE_WINDOW_S = 600.0  # the rate (and so the ETA) is over the last ten minutes
#: what a clip costs beside its characters, in characters: the whole sCMMLU's rows cost about 0.48 CPU s a clip plus
#: 0.062 s a character, averaged over its two voices (docs/whole-sets.md, "What it will cost")
CLIP_WEIGHT_CHARS = 8


@dataclass(frozen=True)
class ProgressSnapshot:
    """The state of a run at one moment."""

    what: str  # "build build/", "score cascade"
    unit: str  # "row"
    parts: dict[str, tuple[int, int]]  # part (a task, a config) -> (done, total)
    done_this_run: int
    elapsed_s: float
    clips: int | None = None  # clip attempts this run (a build)
    # units done in the last ``recent_s`` seconds (at most RATE_WINDOW_S): the rate, so a machine that got busier or
    # quieter an hour ago does not skew the ETA
    recent_done: int = 0
    recent_s: float = 0.0
    # where units differ in size: the work left and the work done in the last ``recent_s`` seconds (the ETA's rate)
    work_left: float | None = None
    recent_work: float = 0.0

    @property
    def done(self) -> int:
        return sum(done for done, _ in self.parts.values())

    @property
    def total(self) -> int:
        return sum(total for _, total in self.parts.values())

    @property
    def fraction(self) -> float:
        return self.done / self.total if self.total else 1.0

    @property
    def per_minute(self) -> float | None:
        return self.recent_done * 60 / self.recent_s if self.recent_s > 0 and self.recent_done else None

    @property
    def eta_s(self) -> float | None:
        if self.work_left is not None:
            return self.work_left * self.recent_s / self.recent_work if self.recent_work > 0 and self.recent_s > 0 else None
        rate = self.per_minute
        return (self.total - self.done) * 60 / rate if rate else None

    def line(self) -> str:
        parts = ", ".join(f"{name} {done:,}/{total:,}" for name, (done, total) in self.parts.items())
        rate = self.per_minute
        speed = f"{rate:.1f} {self.unit}s/min" if rate else f"no {self.unit} finished yet"
        if self.clips is not None and self.elapsed_s > 0:
            speed += f", {self.clips * 60 / self.elapsed_s:.1f} clips/min"
        eta = self.eta_s
        when = "" if eta is None else f", ETA {format_duration(eta)} (at {finish_time(eta)})"
        return (f"{self.what}: {self.done:,}/{self.total:,} {self.unit}s ({self.fraction:.1%}) [{parts}]; {speed}; "
                f"{format_duration(self.elapsed_s)} elapsed{when}")  # fmt: skip


def finish_time(eta_s: float) -> str:
    """The local clock time ``eta_s`` from now, with its date when that is not today (a 28-hour build)."""
    now, then = time.localtime(), time.localtime(time.time() + eta_s)
    return time.strftime("%H:%M" if then[:3] == now[:3] else "%Y-%m-%d %H:%M", then)


def format_duration(seconds: float) -> str:
    seconds = int(round(seconds))
    if seconds < 60:
        return f"{seconds} s"
    if seconds < 3600:
        return f"{seconds // 60} min {seconds % 60:02d} s"
    return f"{seconds // 3600} h {seconds % 3600 // 60:02d} min"


@dataclass
class Progress:
    """Units done per part, against their totals; ``done`` may start above zero (a resumed run)."""

    what: str
    totals: dict[str, int]
    unit: str = "row"
    done: dict[str, int] = field(default_factory=dict)
    clips: int | None = None
    clock: Callable[[], float] = time.monotonic
    # the work of all units and of those done, where units differ in size (a build's rows); else the ETA counts units
    work_total: float | None = None
    work_done: float = 0.0

    def __post_init__(self):
        self.done = {name: self.done.get(name, 0) for name in self.totals}
        self._started_at = self.clock()
        self._done_at_start = sum(self.done.values())
        self._clips_at_start = self.clips
        self._history: deque[tuple[float, int, float]] = deque([(self._started_at, self._done_at_start, self.work_done)])

    def set(self, part: str, done: int) -> None:
        self.done[part] = min(done, self.totals[part])

    def advance(self, part: str, units: int) -> None:
        self.set(part, self.done[part] + units)

    def found_done(self, part: str, units: int) -> None:
        """``units`` that cost this run nothing (a resumed eval's scores in its cache): counted as done at its start,
        so the rate and the ETA are of the work the run does, not inflated by what it only read back."""
        before = self.done[part]
        self.advance(part, units)
        counted = self.done[part] - before
        self._done_at_start += counted
        self._history = deque((at, done + counted, work) for at, done, work in self._history)

    def snapshot(self) -> ProgressSnapshot:
        now, done = self.clock(), sum(self.done.values())
        self._history.append((now, done, self.work_done))
        while len(self._history) > 2 and now - self._history[1][0] >= RATE_WINDOW_S:
            self._history.popleft()
        since, done_then, work_then = self._history[0]
        clips = None if self.clips is None else self.clips - (self._clips_at_start or 0)
        return ProgressSnapshot(
            what=self.what, unit=self.unit, parts={name: (self.done[name], total) for name, total in self.totals.items()},
            done_this_run=done - self._done_at_start, elapsed_s=now - self._started_at, clips=clips,
            recent_done=done - done_then, recent_s=now - since,
            work_left=None if self.work_total is None else max(0.0, self.work_total - self.work_done),
            recent_work=self.work_done - work_then,
        )  # fmt: skip


class ProgressReporter:
    """Shows a :class:`Progress` at each :meth:`tick`: the bar always, the log line every ``interval_s``, the
    listeners every time; :meth:`close` logs the last line."""

    def __init__(self, progress: Progress, interval_s: float = DEFAULT_INTERVAL_S,
                 listeners: list[Callable[[ProgressSnapshot], None]] | None = None):  # fmt: skip
        from tqdm.auto import tqdm

        self.progress = progress
        self.interval_s = interval_s
        self.listeners = list(listeners or [])
        total = sum(progress.totals.values())
        self.bar = tqdm(total=total, initial=sum(progress.done.values()), desc=progress.what, unit=progress.unit,
                        disable=None, leave=False, dynamic_ncols=True)  # fmt: skip
        self._logged_at = progress.clock()
        self._logged_done = sum(progress.done.values())
        log.info(progress.snapshot().line())

    def tick(self) -> ProgressSnapshot:
        snapshot = self.progress.snapshot()
        self.bar.update(snapshot.done - self.bar.n)
        if self.progress.clock() - self._logged_at >= self.interval_s:
            self._log(snapshot)
        for listener in self.listeners:
            listener(snapshot)
        return snapshot

    def _log(self, snapshot: ProgressSnapshot) -> None:
        self._logged_at, self._logged_done = self.progress.clock(), snapshot.done
        log.info(snapshot.line())

    def close(self) -> ProgressSnapshot:
        """The last tick; its line is logged unless the line before already said as much."""
        snapshot = self.tick()
        self.bar.close()
        if snapshot.done != self._logged_done:
            self._log(snapshot)
        return snapshot


def count_lines(path: Path) -> int:
    """Whole lines in ``path`` (0 when it is not there yet)."""
    try:
        with open(path, "rb") as handle:
            return sum(chunk.count(b"\n") for chunk in iter(lambda: handle.read(1 << 20), b""))
    except FileNotFoundError:
        return 0


class BuildProgress(Progress):
    """A build's progress, read from its folder: (item, voice) rows kept or dropped per task, and clip attempts;
    the work done (:func:`row_weight`) counts each of a shard's rows at the shard's mean weight."""

    def __init__(self, what: str, shards: dict[str, list], pairs: dict[str, int],
                 shard_work: dict[str, list[tuple[int, float]]] | None = None, **kwargs):  # fmt: skip
        self.shards = shards  # task -> its Shard folders (s2sbench.pipeline.buildfolder.builddir.Shard)
        self.shard_work = shard_work  # task -> (rows, work) of each of its shards, in the order of ``shards``
        self._finished: dict[Path, tuple[int, int]] = {}
        done, clips, work = self._count()
        total = sum(work for task in shard_work.values() for _, work in task) if shard_work else None
        super().__init__(what, pairs, done=done, clips=clips, work_total=total, work_done=work, **kwargs)

    def _count(self) -> tuple[dict[str, int], int, float]:
        done, clips, work = {}, 0, 0.0
        for task, shards in self.shards.items():
            done[task] = 0
            for index, shard in enumerate(shards):
                rows, attempts = self._finished.get(shard.folder) or self._count_shard(shard)
                done[task] += rows
                clips += attempts
                if self.shard_work:
                    shard_rows, shard_work = self.shard_work[task][index]
                    work += shard_work * min(rows, shard_rows) / shard_rows if shard_rows else 0.0
        return done, clips, work

    def _count_shard(self, shard) -> tuple[int, int]:
        finished = shard.done  # read first: a shard marked done has all its lines written
        counts = count_lines(shard.rows_path) + count_lines(shard.drops_path), count_lines(shard.checks_path)
        if finished:
            self._finished[shard.folder] = counts
        return counts

    def refresh(self) -> None:
        done, self.clips, self.work_done = self._count()
        for task, rows in done.items():
            self.set(task, rows)


def row_weight(texts: Iterable[str]) -> float:
    """A build row's work for the ETA: the characters its clips speak, and :data:`CLIP_WEIGHT_CHARS` per clip."""
    return float(sum(len(text) + CLIP_WEIGHT_CHARS for text in texts))


class ConditionProgress(Progress):
    """The condition stage's progress, read from the build folder: kept rows derived under each condition (a part
    per task and condition: ``<task>-<condition>``), the gate's ASR having heard them."""

    def __init__(self, what: str, build, tasks: list, kept: dict[str, int], **kwargs):
        self.folders = {f"{task.name}-{condition.name}": build.condition_dir(task.name, condition.name, condition.parameters())
                        for task in tasks for condition in task.conditions}  # fmt: skip
        totals = {f"{task.name}-{condition.name}": kept[task.name] for task in tasks for condition in task.conditions}
        super().__init__(what, totals, done=self._count(), **kwargs)

    def _count(self) -> dict[str, int]:
        return {part: sum(count_lines(path) for path in folder.glob("shard-*.jsonl")) for part, folder in self.folders.items()}

    def refresh(self) -> None:
        for part, done in self._count().items():
            self.set(part, done)
