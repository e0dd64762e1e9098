"""The build stages as plain functions over a :class:`~s2sbench.pipeline.buildfolder.builddir.BuildDir`; ``s2sbench.flows.build``
maps them over tasks and shards with Prefect, :func:`run_build` runs them in order in this process (a notebook, a
test). Every stage is resumable: see :mod:`s2sbench.pipeline.buildfolder.builddir`.
"""

from __future__ import annotations

import logging
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from tqdm.auto import tqdm

from s2sbench.pipeline.buildfolder.build_report import BuildReport
from s2sbench.pipeline.buildfolder.builddir import BuildDir
from s2sbench.pipeline.machine.costs import CostLedger, RowCost
from s2sbench.pipeline.core.errors import ConfigError
from s2sbench.pipeline.buildfolder.fingerprint import build_inputs
from s2sbench.pipeline.core.records import BuildRow, Drop, Item
from s2sbench.pipeline.items.sources import LoadResult
from s2sbench.pipeline.items.task_config import TaskConfig

log = logging.getLogger(__name__)

DEFAULT_SHARD_SIZE = 8


@dataclass(frozen=True)
class ShardSummary:
    task: str
    shard: int
    items: int
    rows: int
    dropped: int
    checks: int
    synthesized: int
    remade: int = 0  # clips found damaged in the store and made again


@contextmanager
def build_session(out: BuildDir | Path, tasks: list[TaskConfig], limit: int | None, shard_size: int, seed: int,
                  rebuild: bool = False):
    """Hold the folder's lock for a whole build and check (or record) its inputs; yields the :class:`BuildDir`."""
    build = BuildDir.of(out)
    if shard_size < 1:
        raise ConfigError(f"--shard-size must be >= 1, got {shard_size}")
    if limit is not None and limit < 1:
        raise ConfigError(f"--limit must be >= 1, got {limit}")
    inputs = build_inputs(tasks, limit, shard_size, seed)
    with build.lock():
        build.start(inputs, rebuild)
        yield build


def load_build_items(tasks: list[TaskConfig], limit: int | None = None) -> dict[str, LoadResult]:
    """Every task's items (the same path as ``s2sbench items``), checked against what its task file asks of them
    before anything is written: a condition this build could never apply is refused here, in one line naming the
    key, not after the clips are made."""
    from s2sbench.pipeline.items.load import load_task_items
    from s2sbench.pipeline.speech.conditions import check_conditions

    loaded = {}
    for task in tasks:
        loaded[task.name] = load_task_items(task, limit).require_items()
        check_conditions(task, len(loaded[task.name].items))
    return loaded


def refuse_impossible_conditions(tasks: list[TaskConfig], limit: int | None = None) -> None:
    """:func:`load_build_items`' check of the conditions alone, for a caller that loads the items later (the CLI, before
    the orchestrator starts): only tasks with conditions are loaded for it."""
    load_build_items([task for task in tasks if task.conditions], limit)


def reading_changes(build: BuildDir, result: LoadResult) -> str | None:
    """What a resume says when this s2sbench reads some items differently than the start that wrote the build's items
    (a reading of numbers, units or symbols changed in between), before they are written again; None when none is.
    The build goes on: each row keeps what it was made with."""
    path = build.items_path(result.task)
    if not path.exists():
        return None
    before = {item.id: item.spoken for item in build.read_items(result.task)}
    changed = [item.id for item in result.items if before.get(item.id) and before[item.id] != item.spoken]
    if not changed:
        return None
    shown = ", ".join(changed[:3]) + (", ..." if len(changed) > 3 else "")
    return (f"{path}: {len(changed)} item(s) are read differently than when this build wrote them ({shown}): rows "
            "already made keep the clips and readings they were made with, rows made from now on read the new way; "
            "--rebuild makes every row with one reading")


def prepare_items(task: TaskConfig, out: BuildDir | Path, limit: int | None = None,
                  loaded: LoadResult | None = None) -> list[Item]:
    """Write the task's items (``loaded`` by :func:`load_build_items`, else loaded here) to the build's ``items/``."""
    result = loaded or load_build_items([task], limit)[task.name]
    BuildDir.of(out).write_items(result)
    return result.items


def shard_items(items: list[Item], shard_size: int) -> list[list[Item]]:
    if shard_size < 1:
        raise ConfigError(f"shard size must be >= 1, got {shard_size}")
    return [items[start : start + shard_size] for start in range(0, len(items), shard_size)]


def shard_work(task: TaskConfig, shards: list[list[Item]]) -> list[tuple[int, float]]:
    """(rows, work) of each shard in the task's voices, the work by :func:`~s2sbench.pipeline.run.progress.row_weight`:
    what a build's ETA follows."""
    from s2sbench.pipeline.items.load import texts_to_speak
    from s2sbench.pipeline.run.progress import row_weight

    voices = len(task.voices)
    return [(len(shard) * voices, voices * sum(row_weight(texts_to_speak(item, task).values()) for item in shard))
            for shard in shards]  # fmt: skip


def speak_shard(
    task: TaskConfig, items: list[Item], shard: int, out: BuildDir | Path, store_root: Path | None = None, seed: int = 0
) -> ShardSummary:
    """Synthesize and verify one shard of items in every voice of the task; resumable and idempotent."""
    from s2sbench.pipeline.gate.asr import get_asr
    from s2sbench.pipeline.speech.audio import ClipStore
    from s2sbench.pipeline.speech.speak import Speaker
    from s2sbench.pipeline.speech.synthesize import Synthesizer
    from s2sbench.pipeline.catalog.voices import get_voice
    from s2sbench.pipeline.gate.verify import Verifier

    folder = BuildDir.of(out).shard(task.name, shard)
    if folder.done:
        rows, drops, checks = folder.read_rows(), folder.read_drops(), folder.read_checks()
        return ShardSummary(task.name, shard, len(items), len(rows), len(drops), len(checks), 0)
    store = ClipStore(store_root)
    synthesizer = Synthesizer(store)
    asr = get_asr(task.gate.asr.engine, task.gate.asr.model, **task.gate.asr.options)
    speaker = Speaker(task, synthesizer, Verifier(asr, task.gate, task.language), store, base_seed=seed)
    voices = [get_voice(voice_id) for voice_id in task.voices]
    measured: list[RowCost] = []
    with folder.writers() as (rows, checks, drops, costs):
        progress = tqdm(items, desc=f"speak {task.name} shard {shard}", unit="item", disable=None, leave=False)
        for item in progress:
            for voice in voices:
                row_id = BuildRow.make_id(item.id, voice.id)
                if row_id in rows or row_id in drops:
                    continue
                outcome = speaker.speak(item, voice)
                # the audit first: a row is never written without the checks that admitted it
                for check in outcome.checks:
                    checks.write(check)
                costs.write(outcome.cost)
                measured.append(outcome.cost)
                if outcome.row is not None:
                    rows.write(outcome.row)
                else:
                    drops.write(Drop(id=row_id, task=task.name, item_id=item.id, voice=voice.id, stage="speak",
                                     reason=outcome.dropped_reason))  # fmt: skip
        summary = ShardSummary(task.name, shard, len(items), len(rows.seen), len(drops.seen), len(checks.seen),
                               synthesizer.calls, synthesizer.remade)  # fmt: skip
    folder.mark_done()
    CostLedger(store.root).append(measured, task.language)
    return summary


def kept_rows(build: BuildDir, task: TaskConfig, shard_size: int) -> list[BuildRow]:
    """Every kept row of ``task``, from its finished shards."""
    return [row for shard in build.shards(task.name, len(build.read_items(task.name)), shard_size) for row in shard.read_rows()]


def condition_shard(task: TaskConfig, shard: int, out: BuildDir | Path, pool: list[str],
                    store_root: Path | None = None) -> int:  # fmt: skip
    """Derive the kept rows of one finished shard under each of the task's conditions; resumable. ``pool``: the
    context clips of the whole task (:func:`~s2sbench.pipeline.speech.conditions.context_clips` of :func:`kept_rows`, read
    once, after every shard is spoken), what a babble condition mixes from. Returns the clips derived in this call."""
    from s2sbench.pipeline.gate.asr import get_asr
    from s2sbench.pipeline.speech.audio import ClipStore
    from s2sbench.pipeline.speech.conditions import ConditionMaker
    from s2sbench.pipeline.gate.verify import Verifier

    build = BuildDir.of(out)
    rows = build.shard(task.name, shard).read_rows()
    verifier = Verifier(get_asr(task.gate.asr.engine, task.gate.asr.model, **task.gate.asr.options), task.gate, task.language)
    maker = ConditionMaker(task, ClipStore(store_root), pool, verifier)
    for condition in task.conditions:
        with build.condition_writer(task.name, condition.name, condition.parameters(), shard) as written:
            for entry in maker.condition_rows([row for row in rows if row.id not in written], condition):
                written.write(entry)
    return maker.made


def run_build(tasks: list[TaskConfig], out: BuildDir | Path, *, limit: int | None = None,
              shard_size: int = DEFAULT_SHARD_SIZE, store_root: Path | None = None, seed: int = 0,
              rebuild: bool = False, loaded: dict[str, LoadResult] | None = None) -> BuildReport:
    """Build ``tasks`` into ``out`` here, one shard after the other (the build flow runs the same stages with
    Prefect, shards in parallel); resumes a killed build of the same inputs. ``loaded``: the tasks' items, where the
    caller chose them (a plan's calibration times a sample spread over the items' lengths)."""
    from s2sbench.pipeline.catalog.voices import check_task_voices
    from s2sbench.pipeline.run.assemble import assemble_build
    from s2sbench.pipeline.speech.conditions import context_clips

    for task in tasks:
        check_task_voices(task)
    loaded = loaded or load_build_items(tasks, limit)
    with build_session(out, tasks, limit, shard_size, seed, rebuild) as build:
        for task in tasks:
            if change := reading_changes(build, loaded[task.name]):
                log.warning("%s", change)
            shards = shard_items(prepare_items(task, build, limit, loaded[task.name]), shard_size)
            for index, shard in enumerate(shards):
                summary = speak_shard(task, shard, index, build, store_root, seed)
                log.info("task %s shard %d: %d kept, %d dropped", task.name, index, summary.rows, summary.dropped)
            if task.conditions:
                pool = context_clips(kept_rows(build, task, shard_size))
                for index in range(len(shards)):
                    condition_shard(task, index, build, pool, store_root)
        return assemble_build(build, tasks, shard_size, store_root)
