"""``s2sbench build --dry-run``: what a build would make and what it would cost on this machine, before it runs.

Per task: the items, the clips (items x voices x spoken texts), those the clip store already holds (their keys are
computed exactly as synthesis computes them) and the rows the build folder already holds (a resume), and a projected
wall time, CPU time and disk size. The costs come from the clip store's ledger of earlier builds on this machine
(:class:`~s2sbench.pipeline.machine.costs.CostLedger`), or else from a calibration the plan runs and says it ran: a
real build of a few of the task's items into a temporary folder and store (the first item, to load the engines and
time that; then :data:`CALIBRATION_ITEMS` items spread over the items' lengths, timed per row). Nothing is written
into the build folder or the clip store. A calibration's few rows say little about how often clips are retried (the
whole sCMMLU's plan from 14 rows was 16% short), so a build killed and resumed is planned from its own shards.

The cost model: per voice and stage, seconds = a per clip + b per character spoken (:class:`LengthCost`, fitted on
the measured rows or shards), since a long item costs more than its share of a count (the synthesizer pays per
frame, the gate per second of audio, long clips are retried more). The wall time: synthesis of the clips the store
lacks, the gate and the expected retries for every clip of the rows left, spread over the shards that run at once
(a local Dask cluster's workers; thread workers share one process's cores, so they count as one) but never shorter
than the CPU time over the usable cores, plus the engines' start-up and assembly.
"""

from __future__ import annotations

import json
import math
import os
import tempfile
import time
from collections.abc import Iterable
from contextlib import contextmanager
from dataclasses import dataclass, replace
from pathlib import Path

from s2sbench.pipeline.machine.costs import CostLedger, LedgerEntry, RowCost, Spent, machine
from s2sbench.pipeline.run.progress import format_duration
from s2sbench.pipeline.core.records import BuildRow, Item, Record
from s2sbench.pipeline.items.load import spoken_chars, texts_to_speak
from s2sbench.pipeline.items.sources import LoadResult
from s2sbench.pipeline.items.task_config import TaskConfig

#: a calibration times about this many clips (at least one item, at most CALIBRATION_ITEMS items)
CALIBRATION_CLIPS = 12
CALIBRATION_ITEMS = 6


class LengthCost(Record):
    """Seconds (or bytes) for clips by their length: ``per_clip`` each plus ``per_char`` for each character they
    speak. A row of a long clinical case costs several times a short statement's (a synthesizer pays per frame, the
    gate per second of audio, long clips are retried more), so a plan scales by what its items say, not by their
    count alone."""

    per_clip: float = 0.0
    per_char: float = 0.0

    def of(self, clips: int, chars: int) -> float:
        return self.per_clip * clips + self.per_char * chars

    @classmethod
    def fit(cls, measured: Iterable[tuple[int, int, float]]) -> "LengthCost":
        """Least squares over (clips, chars, seconds) of measured rows or shards, neither term negative; one term
        alone where the lengths do not vary enough to tell the two apart (or the two together would need a
        negative one)."""
        points = [(clips, chars, value) for clips, chars, value in measured if clips]
        if not points:
            return cls()
        cc = sum(clips * clips for clips, _, _ in points)
        ch = sum(clips * chars for clips, chars, _ in points)
        hh = sum(chars * chars for _, chars, _ in points)
        cv = sum(clips * value for clips, _, value in points)
        hv = sum(chars * value for _, chars, value in points)
        det = cc * hh - ch * ch
        if det > 1e-6 * cc * hh:
            per_clip, per_char = (cv * hh - hv * ch) / det, (hv * cc - cv * ch) / det
            if per_clip >= 0 and per_char >= 0:
                return cls(per_clip=per_clip, per_char=per_char)
        alone = [cls(per_clip=max(0.0, cv / cc))] + ([cls(per_char=max(0.0, hv / hh))] if hh else [])
        return min(alone, key=lambda cost: sum((value - cost.of(clips, chars)) ** 2 for clips, chars, value in points))


class StageFit(Record):
    """A stage's wall and CPU seconds by length."""

    wall_s: LengthCost
    cpu_s: LengthCost

    @classmethod
    def of(cls, measured: list[tuple[int, int, Spent]]) -> "StageFit":
        return cls(wall_s=LengthCost.fit((clips, chars, spent.wall_s) for clips, chars, spent in measured),
                   cpu_s=LengthCost.fit((clips, chars, spent.cpu_s) for clips, chars, spent in measured))  # fmt: skip


class VoiceCosts(Record):
    """One voice's stages by length: synthesis over the rows whose clips were all made (none from the store), the
    gate over first attempts, and retries over every row, so that they carry how often a clip needs one."""

    synthesis: StageFit
    gate: StageFit
    retries: StageFit
    audio_bytes: LengthCost  # of a first attempt's clip

    @classmethod
    def of(cls, measured: list[RowCost | LedgerEntry]) -> "VoiceCosts":
        made = [entry for entry in measured if not entry.cached]
        return cls(synthesis=StageFit.of([(entry.clips, entry.chars, entry.synthesis) for entry in made]),
                   gate=StageFit.of([(entry.clips, entry.chars, entry.gate) for entry in measured]),
                   retries=StageFit.of([(entry.clips, entry.chars, entry.retries) for entry in measured]),
                   audio_bytes=LengthCost.fit((entry.clips, entry.chars, entry.audio_bytes) for entry in measured))  # fmt: skip


class ClipCosts(Record):
    """Costs by length for one task's voices on this machine, and where they come from."""

    source: str  # "ledger: ..." or "calibration: ..."
    voices: dict[str, VoiceCosts]
    clips: int  # clips behind retry_share
    retried_clips: int
    assembly: Spent  # over kept clips
    startup_s: float  # loading the engines, once per worker

    @property
    def retry_share(self) -> float:
        return self.retried_clips / self.clips if self.clips else 0.0

    @classmethod
    def of(cls, measured: list[RowCost | LedgerEntry], assemblies: list[LedgerEntry], source: str) -> "ClipCosts":
        by_voice: dict[str, list[RowCost | LedgerEntry]] = {}
        for entry in measured:
            by_voice.setdefault(entry.voice, []).append(entry)
        return cls(source=source, voices={voice: VoiceCosts.of(entries) for voice, entries in by_voice.items()},
                   clips=sum(entry.clips for entry in measured),
                   retried_clips=sum(entry.retried_clips for entry in measured),
                   assembly=sum((entry.assembly for entry in assemblies), Spent()), startup_s=0.0)  # fmt: skip


def _per(spent: Spent, attribute: str) -> float:
    return getattr(spent, attribute) / spent.clips if spent.clips else 0.0


class TaskPlan(Record):
    task: str
    items: int
    voices: list[str]
    spoken: list[str]  # context, candidates
    clips: int
    rows_done: int  # (item, voice) rows the build folder already holds
    clips_in_store: int  # of the rows still to make
    clips_to_make: int
    shards_to_run: int
    costs_from: str
    wall_s: float
    cpu_s: float
    store_bytes: int
    dataset_bytes: int


class BuildPlan(Record):
    folder: str
    folder_state: str
    runner: str
    workers: int
    parallel: int  # shards at once
    machine: str
    tasks: list[TaskPlan]
    startup_s: float
    wall_s: float
    cpu_s: float
    store_bytes: int
    dataset_bytes: int
    planned_in_s: float

    def text(self) -> str:
        lines = [f"plan for {self.folder} ({self.folder_state}); runner {self.runner}, {self.workers} worker(s), "
                 f"{self.parallel} shard(s) at once; machine: {self.machine}", "",
                 "| task | items | voices | clips | rows done | clips in store | clips to make | wall | CPU | disk | costs from |",
                 "|---|---|---|---|---|---|---|---|---|---|---|"]  # fmt: skip
        for task in self.tasks:
            lines.append(
                f"| {task.task} | {task.items:,} | {', '.join(task.voices)} | {task.clips:,} ({' + '.join(task.spoken)}) "
                f"| {task.rows_done:,} | {task.clips_in_store:,} | {task.clips_to_make:,} | {format_duration(task.wall_s)} "
                f"| {format_duration(task.cpu_s)} | {format_bytes(task.store_bytes + task.dataset_bytes)} | {task.costs_from} |"
            )  # fmt: skip
        lines += ["", f"projected: wall {format_duration(self.wall_s)} (start-up {format_duration(self.startup_s)} "
                      f"included), CPU {format_duration(self.cpu_s)}, disk {format_bytes(self.store_bytes)} new in the clip "
                      f"store + {format_bytes(self.dataset_bytes)} in the build folder's dataset",
                  f"(planned in {self.planned_in_s:.1f} s; nothing was written into {self.folder})"]  # fmt: skip
        return "\n".join(lines)


def format_bytes(size: float) -> str:
    for unit in ("B", "kB", "MB", "GB"):
        if size < 1000 or unit == "GB":
            return f"{size:.0f} {unit}" if unit == "B" else f"{size:.1f} {unit}"
        size /= 1000
    raise AssertionError("unreachable")


def _done_rows(out: Path, task: str) -> set[str]:
    """The ids of the rows (kept or dropped) a killed build of ``task`` wrote into ``out``."""
    from s2sbench.pipeline.buildfolder.builddir import BuildDir

    done: set[str] = set()
    task_dir = BuildDir(out).work_dir / task
    for path in sorted(task_dir.glob("shard-*/rows.jsonl")) + sorted(task_dir.glob("shard-*/drops.jsonl")):
        for line in path.read_text(encoding="utf-8").splitlines():
            try:
                done.add(str(json.loads(line)["id"]))
            except (ValueError, KeyError, TypeError):  # a line torn by the kill: the build redoes that row
                continue
    return done


def folder_state(out: Path, inputs) -> str:
    """What a build of ``inputs`` would find in ``out``, read without taking its lock (which would write a file)."""
    from s2sbench.pipeline.buildfolder.builddir import BuildDir, BuildInputsChangedError

    build = BuildDir(out)
    if not build.has_build_files():
        return "new folder"
    try:
        build.check_inputs(inputs)
    except BuildInputsChangedError as error:
        return f"built from other inputs: a build would refuse it without --rebuild ({str(error).splitlines()[1].strip()})"
    return "finished build of the same inputs" if build.report_path.exists() else "resumes a build of the same inputs"


@contextmanager
def _quiet_datasets():
    """No 'Saving the dataset' bars from the calibration's assemblies in the middle of a plan."""
    import datasets

    shown = datasets.is_progress_bar_enabled()
    datasets.disable_progress_bars()
    try:
        yield
    finally:
        if shown:
            datasets.enable_progress_bars()


@contextmanager
def _engine_cores(cores: int | None):
    from s2sbench.pipeline.machine.cpu import ENGINE_CORES_ENV

    before = os.environ.get(ENGINE_CORES_ENV)
    if cores is not None and before is None:
        os.environ[ENGINE_CORES_ENV] = str(cores)
    try:
        yield
    finally:
        if before is None:
            os.environ.pop(ENGINE_CORES_ENV, None)


def calibration_items(task: TaskConfig) -> int:
    """Items enough for about :data:`CALIBRATION_CLIPS` clips in the task's voices and spoken texts."""
    per_item = len(task.voices) * (1 + ("candidates" in task.speak))  # a story's two endings, roughly
    return max(1, min(CALIBRATION_ITEMS, -(-CALIBRATION_CLIPS // per_item)))


def spread_by_length(items: list[Item], task: TaskConfig, count: int) -> list[Item]:
    """``count`` of ``items``, one from the middle of each of ``count`` equal slices of the items sorted by the length
    the task speaks: a calibration then times short and long items as the set has them, not the source's first few
    (the first CMMLU subjects are short statements; clinical case histories come later)."""
    by_length = sorted(items, key=lambda item: spoken_chars(item, task))
    if len(by_length) <= count:
        return by_length
    return [by_length[(2 * part + 1) * len(by_length) // (2 * count)] for part in range(count)]


def calibrate(task: TaskConfig, loaded: LoadResult, count: int | None = None, seed: int = 0) -> ClipCosts:
    """Costs by length from a real build of ``count`` of the ``loaded`` items (default :func:`calibration_items`,
    spread over their lengths; after the first item alone, which loads the engines), in temporary folders: the
    user's clip store and build folder are not touched."""
    from s2sbench.pipeline.buildfolder.builddir import BuildDir
    from s2sbench.pipeline.run.build import run_build

    items = loaded.items
    sample = spread_by_length(items, task, count or calibration_items(task))
    task = task.model_copy(update={"conditions": []})  # the plan counts no condition cost: none is made
    with _quiet_datasets(), tempfile.TemporaryDirectory(prefix="s2sbench-calibration-") as scratch:
        store = Path(scratch) / "store"
        started = time.perf_counter()
        run_build([task], Path(scratch) / "warm", store_root=store, seed=seed,
                  loaded={task.name: replace(loaded, items=items[:1], drops=[], rows_in=1)})  # fmt: skip
        warm_s = time.perf_counter() - started
        # other seeds, so that no clip of the warm-up is found in the store
        timed = Path(scratch) / "timed"
        run_build([task], timed, store_root=store, seed=seed + 1000,
                  loaded={task.name: replace(loaded, items=sample, drops=[], rows_in=len(sample))})  # fmt: skip
        rows = [cost for shard in BuildDir(timed).finished_shards(task.name) for cost in shard.read_costs()]
        assemblies = [entry for entry in CostLedger(store).entries() if entry.kind == "assembly"][-1:]
    costs = ClipCosts.of(rows, assemblies, f"calibration: {len(rows) + len(task.voices)} rows ({len(sample)} items "
                                           f"of {spoken_chars(sample[0], task)}-{spoken_chars(sample[-1], task)} "
                                           f"characters) built here in {time.perf_counter() - started:.0f} s")  # fmt: skip
    # what the warm-up took beyond what its one item costs a running build is start-up
    first = Lengths()
    first.add(texts_to_speak(items[0], task).values())
    warm_item = sum(_seconds(voice, "wall_s", first, first) for voice in costs.voices.values())
    return costs.model_copy(update={"startup_s": round(max(0.0, warm_s - warm_item), 2)})


@dataclass
class Lengths:
    """How many clips, and how many characters they speak."""

    clips: int = 0
    chars: int = 0

    def add(self, texts: Iterable[str]) -> None:
        for text in texts:
            self.clips += 1
            self.chars += len(text)


def _seconds(voice: VoiceCosts, attribute: str, checked: Lengths, made: Lengths) -> float:
    """A voice's ``attribute`` seconds for clips ``made`` (synthesis) and ``checked`` (the gate and retries)."""
    return (getattr(voice.synthesis, attribute).of(made.clips, made.chars)
            + getattr(voice.gate, attribute).of(checked.clips, checked.chars)
            + getattr(voice.retries, attribute).of(checked.clips, checked.chars))  # fmt: skip


def _bytes(costs: ClipCosts, clips: dict[str, Lengths]) -> float:
    return sum(costs.voices[voice].audio_bytes.of(lengths.clips, lengths.chars) for voice, lengths in clips.items())


def ledger_costs(task: TaskConfig, asr_model: str, store_root: Path, here: str) -> ClipCosts | None:
    """Costs from the store's ledger: every shard of this machine with the task's voices and ASR model that recorded
    its lengths, and its assemblies; None when a voice has no shard whose clips it made (then :func:`calibrate`).
    A build killed before its first assembly has shards but no assembly: its shards are still the better measure
    (a resumed whole sCMMLU had 3,347 rows in its ledger, where a calibration times 14), and an assembly costs about
    a thousandth of a row, so the plan counts none and says so."""
    entries = [entry for entry in CostLedger(store_root).entries() if entry.machine == here]
    shards = [entry for entry in entries if entry.kind == "shard" and entry.voice in task.voices and entry.chars
              and entry.asr_model == asr_model and entry.language == task.language]  # fmt: skip
    assemblies = [entry for entry in entries if entry.kind == "assembly" and entry.assembly.clips]
    made = {entry.voice for entry in shards if not entry.cached and entry.synthesis.clips}
    if set(task.voices) - made:
        return None
    return ClipCosts.of(shards, assemblies, f"ledger: {sum(e.clips for e in shards):,} clips built here before"
                                            + ("" if assemblies else " (no assembly yet: not counted)"))


def plan_build(tasks: list[TaskConfig], out: Path, *, limit: int | None = None, shard_size: int = 8, seed: int = 0,
               store_root: Path | None = None, runner: str = "threads", workers: int = 1,
               calibrate_items: int | None = None) -> BuildPlan:
    """The plan of ``s2sbench build`` with these arguments (see the module docstring)."""
    from s2sbench.pipeline.gate.asr import get_asr
    from s2sbench.pipeline.speech.audio import ClipStore
    from s2sbench.pipeline.machine.cpu import cores_per_worker, usable_cores
    from s2sbench.pipeline.buildfolder.fingerprint import build_inputs
    from s2sbench.pipeline.text.normalize import normalize_for_tts
    from s2sbench.pipeline.items.load import load_task_items
    from s2sbench.pipeline.speech.conditions import check_conditions
    from s2sbench.pipeline.speech.synthesize import Synthesizer, clip_key
    from s2sbench.pipeline.catalog.voices import get_voice

    started = time.perf_counter()
    state = folder_state(Path(out), build_inputs(tasks, limit, shard_size, seed))
    store = ClipStore(store_root)
    synthesizer = Synthesizer(store)
    here = machine()
    parallel = workers if runner == "dask" else 1
    plans: list[TaskPlan] = []
    startup = 0.0
    with _engine_cores(cores_per_worker(workers) if runner == "dask" else None):
        for task in tasks:
            loaded = load_task_items(task, limit).require_items()
            items = loaded.items
            check_conditions(task, len(items))  # before a calibration makes any clip
            voices = [get_voice(voice) for voice in task.voices]
            done = _done_rows(Path(out), task.name) if state.startswith(("resumes", "finished")) else set()
            # per voice: (clips, characters) of every row, of the rows left, and of the clips left to make
            every, left, to_make = ({voice.id: Lengths() for voice in voices} for _ in range(3))
            in_store = rows_left = 0
            for voice in voices:
                version = synthesizer.model_version(voice)
                for item in items:
                    texts = texts_to_speak(item, task)
                    every[voice.id].add(texts.values())
                    if BuildRow.make_id(item.id, voice.id) in done:
                        continue
                    rows_left += 1
                    left[voice.id].add(texts.values())
                    for text in texts.values():
                        key = clip_key(normalize_for_tts(text, voice.language), voice, version, seed, synthesizer.settings)
                        if store.lookup(key) is None:
                            to_make[voice.id].add([text])
                        else:
                            in_store += 1
            gate = task.gate.asr
            asr_model = get_asr(gate.engine, gate.model, **gate.options).model_id
            costs = ledger_costs(task, asr_model, store.root, here) or calibrate(task, loaded, calibrate_items, seed)
            startup = max(startup, costs.startup_s)
            clips = sum(lengths.clips for lengths in every.values())
            wall_s, cpu_s = (sum(_seconds(costs.voices[voice], attribute, left[voice], to_make[voice]) for voice in left)
                             + _per(costs.assembly, attribute) * clips for attribute in ("wall_s", "cpu_s"))  # fmt: skip
            shards_left = -(-rows_left // (shard_size * len(voices))) if rows_left else 0
            at_once = max(1, min(parallel, shards_left))
            # shards at once share the machine's cores: a calibration timed alone (its engines' threads running
            # beside one another) would otherwise project more CPU into each hour than the machine has. Both figures
            # are shown to a tenth of a second, and the wall shown is never under the CPU shown over the cores
            cpu_s = round(cpu_s, 1)
            wall_s = max(round(wall_s / at_once, 1), math.ceil(round(cpu_s / usable_cores() * 10, 6)) / 10)
            plans.append(TaskPlan(
                task=task.name, items=len(items), voices=task.voices, spoken=task.speak, clips=clips,
                rows_done=len(done), clips_in_store=in_store, clips_to_make=sum(lengths.clips for lengths in to_make.values()), shards_to_run=shards_left,
                costs_from=costs.source, wall_s=wall_s, cpu_s=cpu_s,
                store_bytes=int(_bytes(costs, to_make) * (1 + costs.retry_share)), dataset_bytes=int(_bytes(costs, every)),
            ))  # fmt: skip
    return BuildPlan(
        folder=str(out), folder_state=state, runner=runner, workers=workers, parallel=parallel, machine=here,
        tasks=plans, startup_s=round(startup, 1), wall_s=round(startup + sum(p.wall_s for p in plans), 1),
        cpu_s=round(sum(p.cpu_s for p in plans), 1), store_bytes=sum(p.store_bytes for p in plans),
        dataset_bytes=sum(p.dataset_bytes for p in plans), planned_in_s=round(time.perf_counter() - started, 1),
    )  # fmt: skip
