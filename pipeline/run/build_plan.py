"""``s2sbench build --dry-run``: what a build would make and what it would cost on this machine, before it runs.

Per task: the items, the clips (items x voices x spoken texts), those the clip store already holds (their keys are
computed exactly as synthesis computes them) and the rows the build folder already holds (a resume), and a projected
wall time, CPU time and disk size. The costs per clip come from the clip store's ledger of earlier builds on this
machine (:class:`~s2sbench.pipeline.machine.costs.CostLedger`), or else from a calibration the plan runs and says it ran: a
real build of a few items of the task into a temporary folder and store (one item first, to load the engines and
time that; then :data:`CALIBRATION_ITEMS` items, timed per stage). Nothing is written into the build folder or the
clip store.

The wall-time model: the clips' wall seconds (synthesis where the store lacks the clip, the gate for every clip, the
retry share's extra attempts) spread over the shards that run at once (a local Dask cluster's workers; thread
workers share one process's cores, so they count as one), plus the engines' start-up and assembly.
"""

from __future__ import annotations

import json
import os
import tempfile
import time
from contextlib import contextmanager
from pathlib import Path

from s2sbench.pipeline.machine.costs import CostLedger, LedgerEntry, Spent, machine
from s2sbench.pipeline.run.progress import format_duration
from s2sbench.pipeline.core.records import BuildRow, Record
from s2sbench.pipeline.items.task_config import TaskConfig

#: a calibration times about this many clips (at least one item, at most CALIBRATION_ITEMS items)
CALIBRATION_CLIPS = 12
CALIBRATION_ITEMS = 4


class ClipCosts(Record):
    """Seconds per clip for one task on this machine, and where they come from."""

    source: str  # "ledger: ..." or "calibration: ..."
    synthesis: dict[str, Spent]  # voice -> seconds over engine calls
    gate: Spent
    retries: Spent  # extra attempts, over the clips that needed one
    clips: int  # clips behind retry_share
    retried_clips: int
    audio_bytes: int
    audio_clips: int  # clips behind audio_bytes
    assembly: Spent  # over kept clips
    startup_s: float  # loading the engines, once per worker

    @property
    def retry_share(self) -> float:
        return self.retried_clips / self.clips if self.clips else 0.0

    def bytes_per_clip(self) -> float:
        return self.audio_bytes / self.audio_clips if self.audio_clips else 0.0


def _per(spent: Spent, attribute: str, clips: int | None = None) -> float:
    count = spent.clips if clips is None else clips
    return getattr(spent, attribute) / count if count else 0.0


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


def calibrate(task: TaskConfig, items: int | None = None, seed: int = 0) -> ClipCosts:
    """Costs per clip from a real build of ``items`` items of ``task`` (default :func:`calibration_items`; after one
    item that loads the engines), in temporary folders: the user's clip store and build folder are not touched."""
    from s2sbench.pipeline.run.build import run_build

    items = items or calibration_items(task)
    task = task.model_copy(update={"conditions": []})  # the plan counts no condition cost: none is made
    with _quiet_datasets(), tempfile.TemporaryDirectory(prefix="s2sbench-calibration-") as scratch:
        store = Path(scratch) / "store"
        ledger = CostLedger(store)
        started = time.perf_counter()
        run_build([task], Path(scratch) / "warm", limit=1, store_root=store, seed=seed)
        warm_s = time.perf_counter() - started
        before = len(ledger.entries())
        timed_at = time.perf_counter()
        # other seeds, so that no clip of the warm-up is found in the store
        report = run_build([task], Path(scratch) / "timed", limit=items, store_root=store, seed=seed + 1000)
        timed_s = time.perf_counter() - timed_at
        entries = ledger.entries()[before:]
    rows = report.totals.item_voice_pairs_in
    costs = _costs_of([entry for entry in entries if entry.kind == "shard"],
                      [entry for entry in entries if entry.kind == "assembly"], "")  # fmt: skip
    return costs.model_copy(update={
        "source": f"calibration: {rows + len(task.voices)} rows built here in {time.perf_counter() - started:.0f} s",
        # the warm-up built one item per voice: what it took beyond the timed build's cost of that is start-up
        "startup_s": round(max(0.0, warm_s - timed_s * len(task.voices) / max(rows, 1)), 2),
    })  # fmt: skip


def _costs_of(shards: list[LedgerEntry], assemblies: list[LedgerEntry], source: str) -> ClipCosts:
    synthesis: dict[str, Spent] = {}
    for entry in shards:
        synthesis[entry.voice] = synthesis.get(entry.voice, Spent()) + entry.synthesis
    return ClipCosts(
        source=source, synthesis=synthesis, gate=sum((entry.gate for entry in shards), Spent()),
        retries=sum((entry.retries for entry in shards), Spent()), clips=sum(entry.clips for entry in shards),
        retried_clips=sum(entry.retried_clips for entry in shards), audio_bytes=sum(e.audio_bytes for e in shards),
        audio_clips=sum(entry.clips for entry in shards),
        assembly=sum((entry.assembly for entry in assemblies), Spent()), startup_s=0.0,
    )  # fmt: skip


def ledger_costs(task: TaskConfig, asr_model: str, store_root: Path, here: str) -> ClipCosts | None:
    """Costs from the store's ledger: every shard of this machine with the task's voices and ASR model, and its
    assemblies; None when a voice, the ASR model or an assembly has no entry (then :func:`calibrate`)."""
    entries = [entry for entry in CostLedger(store_root).entries() if entry.machine == here]
    shards = [entry for entry in entries if entry.kind == "shard" and entry.voice in task.voices
              and entry.asr_model == asr_model and entry.language == task.language]  # fmt: skip
    assemblies = [entry for entry in entries if entry.kind == "assembly" and entry.assembly.clips]
    measured = {entry.voice for entry in shards if entry.synthesis.clips}
    if set(task.voices) - measured or not any(entry.gate.clips for entry in shards) or not assemblies:
        return None
    costs = _costs_of(shards, assemblies, "")
    return costs.model_copy(update={"source": f"ledger: {sum(e.clips for e in shards):,} clips built here before",
                                    "startup_s": 0.0})  # fmt: skip


def plan_build(tasks: list[TaskConfig], out: Path, *, limit: int | None = None, shard_size: int = 8, seed: int = 0,
               store_root: Path | None = None, runner: str = "threads", workers: int = 1,
               calibrate_items: int | None = None) -> BuildPlan:
    """The plan of ``s2sbench build`` with these arguments (see the module docstring)."""
    from s2sbench.pipeline.gate.asr import get_asr
    from s2sbench.pipeline.speech.audio import ClipStore
    from s2sbench.pipeline.machine.cpu import cores_per_worker
    from s2sbench.pipeline.buildfolder.fingerprint import build_inputs
    from s2sbench.pipeline.text.normalize import normalize_for_tts
    from s2sbench.pipeline.items.load import load_task_items
    from s2sbench.pipeline.speech.conditions import check_conditions
    from s2sbench.pipeline.items.load import texts_to_speak
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
            items = load_task_items(task, limit).require_items().items
            check_conditions(task, len(items))  # before a calibration makes any clip
            voices = [get_voice(voice) for voice in task.voices]
            done = _done_rows(Path(out), task.name) if state.startswith(("resumes", "finished")) else set()
            clips = in_store = to_make = 0
            to_make_by_voice: dict[str, int] = {}
            rows_left = 0
            for voice in voices:
                version = synthesizer.model_version(voice)
                for item in items:
                    texts = texts_to_speak(item, task)
                    clips += len(texts)
                    if BuildRow.make_id(item.id, voice.id) in done:
                        continue
                    rows_left += 1
                    for text in texts.values():
                        key = clip_key(normalize_for_tts(text, voice.language), voice, version, seed, synthesizer.settings)
                        if store.lookup(key) is None:
                            to_make += 1
                            to_make_by_voice[voice.id] = to_make_by_voice.get(voice.id, 0) + 1
                        else:
                            in_store += 1
            gate = task.gate.asr
            asr_model = get_asr(gate.engine, gate.model, **gate.options).model_id
            costs = ledger_costs(task, asr_model, store.root, here) or calibrate(task, calibrate_items, seed)
            startup = max(startup, costs.startup_s)
            clips_left = to_make + in_store
            wall = cpu = 0.0
            for attribute in ("wall_s", "cpu_s"):
                seconds = sum(_per(costs.synthesis.get(voice, Spent()), attribute) * count
                              for voice, count in to_make_by_voice.items())  # fmt: skip
                seconds += _per(costs.gate, attribute) * clips_left
                seconds += _per(costs.retries, attribute, costs.retried_clips) * costs.retry_share * clips_left
                seconds += _per(costs.assembly, attribute) * clips
                if attribute == "wall_s":
                    wall = seconds
                else:
                    cpu = seconds
            shards_left = -(-rows_left // (shard_size * len(voices))) if rows_left else 0
            at_once = max(1, min(parallel, shards_left))
            plans.append(TaskPlan(
                task=task.name, items=len(items), voices=task.voices, spoken=task.speak, clips=clips,
                rows_done=len(done), clips_in_store=in_store, clips_to_make=to_make, shards_to_run=shards_left,
                costs_from=costs.source, wall_s=round(wall / at_once, 1), cpu_s=round(cpu, 1),
                store_bytes=int(costs.bytes_per_clip() * to_make * (1 + costs.retry_share)),
                dataset_bytes=int(costs.bytes_per_clip() * clips),
            ))  # fmt: skip
    return BuildPlan(
        folder=str(out), folder_state=state, runner=runner, workers=workers, parallel=parallel, machine=here,
        tasks=plans, startup_s=round(startup, 1), wall_s=round(startup + sum(p.wall_s for p in plans), 1),
        cpu_s=round(sum(p.cpu_s for p in plans), 1), store_bytes=sum(p.store_bytes for p in plans),
        dataset_bytes=sum(p.dataset_bytes for p in plans), planned_in_s=round(time.perf_counter() - started, 1),
    )  # fmt: skip
