"""Assembly: the shards of a build become its manifests, the audit files, the dataset (a config per task, or per task
and voice, each a ``datasets.DatasetDict`` of the task's split with 16 kHz Audio columns, the audio embedded) and
``build_report.json``.

Every kept clip is checked against its SHA-256 before the dataset embeds it. A damaged or missing clip is made
again (the engines are seeded, so it comes back byte for byte) and the report lists it; audio that comes back
different is an error, since the gate checked the old audio.
"""

from __future__ import annotations

import logging
import platform
from collections import Counter
from importlib import metadata
from pathlib import Path

from s2sbench.pipeline.speech.audio import ClipIntegrityError, ClipStore
from s2sbench.pipeline.buildfolder.build_report import (
    NORMALIZATION_STEPS, BuildReport, ConditionSummary, GroupLoss, Integrity, Normalization, TaskReport, Totals)
from s2sbench.pipeline.buildfolder.builddir import BuildDir, BuildDirError
from s2sbench.pipeline.buildfolder.configs import DEFAULT_SPLIT, config_name
from s2sbench.pipeline.machine.costs import CostLedger, RowCost, Stopwatch, cost_table
from s2sbench.pipeline.buildfolder.dataset import AudioValue, conditioned_dataset_row, dataset_row, make_split
from s2sbench.pipeline.machine.device import devices_named
from s2sbench.pipeline.core.records import BuildRow, ClipCheck, ConditionedRow, Drop, Item, Role
from s2sbench.pipeline.items.sources import LoadReport
from s2sbench.pipeline.items.task_config import TaskConfig
from s2sbench.pipeline.speech.tts.base import Voice

log = logging.getLogger(__name__)

SOFTWARE = ("s2sbench", "datasets", "torch", "piper-tts", "faster-whisper", "jiwer")


def _package_version(name: str) -> str:
    try:
        return metadata.version(name)
    except metadata.PackageNotFoundError:
        return "not installed"


def losses_by_subject(items: list[Item], voices: int, rows: list[BuildRow], drops: list[Drop]) -> dict[str, GroupLoss]:
    """The gate's loss per subject of items that have one (``meta["subject"]``); empty when none has."""
    subject_of = {item.id: item.meta["subject"] for item in items if item.meta.get("subject")}
    if not subject_of:
        return {}
    items_in, kept, dropped = Counter(subject_of.values()), Counter(), {}
    for row in rows:
        kept[subject_of.get(row.item.id, "")] += 1
    for drop in drops:
        reasons = dropped.setdefault(subject_of.get(drop.item_id, ""), Counter())
        reasons[drop.reason.code] += 1
    return {subject: GroupLoss(items=items_in[subject], rows_in=items_in[subject] * voices, kept=kept[subject],
                               dropped=sum(dropped.get(subject, {}).values()), drop_reasons=dict(dropped.get(subject, {})))
            for subject in sorted(items_in)}  # fmt: skip


def task_report(*, config: TaskConfig | None, language: str, version: int, voices: list[str], load: LoadReport | None,
                items: list[Item], load_drops: list[Drop], rows: list[BuildRow], drops: list[Drop],
                pairs_in: int | None = None) -> TaskReport:
    """The counts of one task: what came in (``pairs_in``: item x voice pairs, every item in every voice unless
    given), what was kept, what was dropped and why (by reason code, and per subject where the items have one)."""
    items_in = len(items)
    pairs_in = items_in * len(voices) if pairs_in is None else pairs_in
    return TaskReport(
        config=config, language=language, version=version, voices=voices, items=load,
        source_rows_dropped=len(load_drops), items_in=items_in, item_voice_pairs_in=pairs_in, kept=len(rows),
        dropped=len(drops), drop_reasons=dict(Counter(drop.reason.code for drop in drops)),
        clips_kept=sum(len(row.clips) for row in rows),
        clips_unverified=sum(1 for row in rows for check in row.checks.values() if check.status == "unverified"),
        clips_kept_on_reference=sum(1 for row in rows for check in row.checks.values() if check.kept_on_reference),
        by_subject=losses_by_subject(items, len(voices), rows, drops),
    )  # fmt: skip


def restore_clips(rows: list[BuildRow], store: ClipStore) -> Integrity:
    """Check every kept clip in the store by its hash; make damaged or missing ones again, identical or an error."""
    from s2sbench.pipeline.speech.synthesize import Synthesizer
    from s2sbench.pipeline.catalog.voices import get_voice

    synthesizer, voices, remade = None, {}, []
    for row in rows:
        for role, clip in row.clips.items():
            if store.intact(clip.audio_sha256):
                continue
            problem = "damaged" if store.abspath(store.audio_path(clip.audio_sha256)).exists() else "missing"
            synthesizer = synthesizer or Synthesizer(store)
            if clip.voice not in voices:
                voices[clip.voice] = get_voice(clip.voice)
            again = synthesizer.make_clip(clip.item_id, role, clip.text, voices[clip.voice], clip.seed)
            if again.audio_sha256 != clip.audio_sha256:
                raise ClipIntegrityError(
                    f"row {row.id} {role}: the clip store's copy is {problem} and making it again gave other audio "
                    f"({again.audio_sha256[:12]} instead of {clip.audio_sha256[:12]}), which the gate never checked; "
                    "build again with --rebuild"
                )
            remade.append(f"{row.id} {role}: {problem} in the store, made again")
            log.warning("clip %s of row %s was %s in the clip store %s; made it again", role, row.id, problem, store.root)
    return Integrity(clips_checked=sum(len(row.clips) for row in rows), clips_remade=remade)


def restore_condition_clips(task: TaskConfig, rows: list[BuildRow], conditioned: list[ConditionedRow],
                            store: ClipStore) -> list[str]:  # fmt: skip
    """Check every condition clip of ``task`` in the store by its hash; derive damaged or missing ones again from their
    (restored) clean clips: the same bytes, or an error. Returns what was made again."""
    from s2sbench.pipeline.speech.conditions import ConditionMaker, context_clips

    by_id = {row.id: row for row in rows}
    by_name = {condition.name: condition for condition in task.conditions}
    maker, remade = None, []
    for entry in conditioned:
        for role, clip in entry.clips.items():
            if store.intact(clip.audio_sha256):
                continue
            maker = maker or ConditionMaker(task, store, context_clips(rows))
            again = maker.derive(by_id[entry.id].clips[role], by_name[entry.condition])
            if again.audio_sha256 != clip.audio_sha256:
                raise ClipIntegrityError(f"row {entry.id} {role} under '{entry.condition}': the clip store's copy is gone "
                                         f"and deriving it again gave other audio ({again.audio_sha256[:12]} instead of "
                                         f"{clip.audio_sha256[:12]}); build again with --rebuild")  # fmt: skip
            remade.append(f"{entry.id} {role} ({entry.condition}): missing or damaged in the store, derived again")
            log.warning("condition clip %s of row %s (%s) was missing or damaged in the clip store %s; derived it again",
                        role, entry.id, entry.condition, store.root)  # fmt: skip
    return remade


def make_dataset(rows_by_task: dict[str, list[BuildRow]], store: ClipStore, configs: dict[str, TaskConfig | None],
                 conditioned: list[ConditionedRow] = ()):  # fmt: skip
    """The configs of the kept rows (name -> ``DatasetDict`` of the task's split), in task order: one per task, or
    per voice when its task file sets ``config_per_voice``, then the same under each of the task's conditions; the
    audio is the store's (checked) files, embedded."""
    import datasets

    def audio_of(clip) -> AudioValue:
        return AudioValue(path=str(store.abspath(store.audio_path(clip.audio_sha256))))

    out = {}
    for task, rows in rows_by_task.items():
        if not rows:  # every item dropped: the build report says why; a config of no rows cannot be loaded back
            continue
        config = configs.get(task)
        split = (config.source.split if config else None) or DEFAULT_SPLIT
        per_voice = bool(config and config.config_per_voice)
        under = {}
        for entry in conditioned:
            if entry.task == task:
                under.setdefault(entry.condition, {})[entry.id] = entry
        for condition in [None, *under]:
            for voice in list(dict.fromkeys(row.voice for row in rows)) if per_voice else [None]:
                chosen = [row for row in rows if voice is None or row.voice == voice]
                made = [dataset_row(row, audio_of) if condition is None else
                        conditioned_dataset_row(row, under[condition][row.id], audio_of) for row in chosen]  # fmt: skip
                out[config_name(task, voice, condition)] = datasets.DatasetDict({split: make_split(made)})
    return out


def read_conditioned(build: BuildDir, task: TaskConfig, rows: list[BuildRow]) -> list[ConditionedRow]:
    """Every kept row of ``task`` under each of its conditions, from the condition stage's files; a row missing
    there means that stage has not finished."""
    found = []
    for condition in task.conditions:
        by_row = {entry.id: entry for entry in build.read_condition_rows(task.name, condition.name, condition.parameters())}
        missing = [row.id for row in rows if row.id not in by_row]
        if missing:
            raise BuildDirError(f"{build.condition_dir(task.name, condition.name, condition.parameters())}: condition "
                                f"'{condition.name}' lacks {len(missing)} of {len(rows)} kept rows (first: {missing[0]}); "
                                "run the build again to make them")  # fmt: skip
        found.extend(by_row[row.id] for row in rows)
    return found


def condition_summaries(task: TaskConfig, rows: list[BuildRow], conditioned: list[ConditionedRow]) -> dict[str, ConditionSummary]:
    """Per condition of ``task``: its parameters, its clips and the gate ASR's mean error rate on its context clips
    beside the clean clips' on the same rows."""
    context = Role.context()
    clean = [row.checks[context].error_rate for row in rows if context in row.checks]
    summaries = {}
    for condition in task.conditions:
        entries = [entry for entry in conditioned if entry.condition == condition.name]
        heard = [entry.checks[context] for entry in entries if context in entry.checks]
        rates = [check.error_rate for check in heard if check.error_rate is not None]
        summaries[condition.name] = ConditionSummary(
            parameters=condition.parameters(), rows=len(entries), clips=sum(len(entry.clips) for entry in entries),
            metric=heard[0].metric if heard else "none", asr_model=heard[0].asr_model if heard else "none",
            error_rate=sum(rates) / len(rates) if rates else None,
            clean_error_rate=sum(clean) / len(clean) if clean and None not in clean else None,
        )  # fmt: skip
    return summaries


def finish_build(build: BuildDir, tasks: dict[str, TaskReport], rows_by_task: dict[str, list[BuildRow]],
                 checks: list[ClipCheck], drops: list[Drop], items_by_id: dict[str, Item], store: ClipStore,
                 integrity: Integrity, voices: dict[str, Voice], *, origin: str = "build",
                 imported_from: list[str] | None = None, row_costs: list[RowCost] | None = None,
                 started: Stopwatch | None = None, conditioned: list[ConditionedRow] = ()) -> BuildReport:
    """Write the manifests, the audit, the dataset and the report of kept ``rows_by_task``; returns the report. A
    build passes the costs its shards measured and the ``started`` watch of its assembly, for the cost table."""
    from s2sbench.pipeline.gate.verify import summarize_checks

    every_row = [row for rows in rows_by_task.values() for row in rows]
    build.write_manifests(every_row, checks, drops, conditioned)
    build.save_dataset(make_dataset(rows_by_task, store, {task: entry.config for task, entry in tasks.items()}, conditioned))
    costs = None
    if started is not None:
        assembly = started.spent(clips=sum(len(row.clips) for row in every_row))
        costs = cost_table(row_costs or [], assembly)
        CostLedger(store.root).append_assembly(list(tasks), assembly)
    engines = sorted({f"{clip.engine} {clip.model_version}" for row in every_row for clip in row.clips.values()})
    asr_models = sorted({check.asr_model for check in checks})
    report = BuildReport(
        origin=origin, imported_from=imported_from or [], tasks=tasks,
        totals=Totals(
            items_in=sum(entry.items_in for entry in tasks.values()),
            item_voice_pairs_in=sum(entry.item_voice_pairs_in for entry in tasks.values()),
            kept=sum(entry.kept for entry in tasks.values()), dropped=sum(entry.dropped for entry in tasks.values()),
            distinct_clips=len({check.clip_key for check in checks if check.clip_key}), clip_attempts=len(checks),
            clips_rejected=sum(1 for check in checks if check.status == "rejected"),
        ),
        verification=summarize_checks(checks, items_by_id), integrity=integrity, voices=voices,
        normalization=Normalization(**NORMALIZATION_STEPS, languages=sorted({entry.language for entry in tasks.values()})),
        clip_store=str(store.root),
        engines=engines, asr_models=asr_models, devices=devices_named(engines + asr_models) or ["cpu"],
        software={"python": platform.python_version(), **{name: _package_version(name) for name in SOFTWARE}},
        costs=costs,
    )  # fmt: skip
    build.write_report(report)
    return report


def assemble_build(out: BuildDir | Path, tasks: list[TaskConfig], shard_size: int, store_root: Path | None = None) -> BuildReport:
    """Merge the shards of every task, check the clips, save the dataset and write the build report."""
    from s2sbench.pipeline.catalog.voices import get_voice

    started = Stopwatch()
    build = BuildDir.of(out)
    store = ClipStore(store_root)
    rows_by_task: dict[str, list[BuildRow]] = {}
    reports: dict[str, TaskReport] = {}
    all_checks: list[ClipCheck] = []
    all_drops: list[Drop] = []
    row_costs: list[RowCost] = []
    items_by_id: dict[str, Item] = {}
    conditioned: list[ConditionedRow] = []
    for task in tasks:
        items = build.read_items(task.name)
        items_by_id.update((item.id, item) for item in items)
        load_drops = build.read_item_drops(task.name)
        shards = build.shards(task.name, len(items), shard_size)
        rows = [row for shard in shards for row in shard.read_rows()]
        drops = [drop for shard in shards for drop in shard.read_drops()]
        order = {item.id: index for index, item in enumerate(items)}
        rows.sort(key=lambda row: (order[row.item.id], task.voices.index(row.voice)))
        pairs_in = len(items) * len(task.voices)
        if len(rows) + len(drops) != pairs_in:
            raise BuildDirError(f"{build.work_dir / task.name}: {len(rows)} kept + {len(drops)} dropped != {pairs_in} "
                                "item x voice pairs in; the shards are from another build: add --rebuild")  # fmt: skip
        rows_by_task[task.name] = rows
        all_checks.extend(check for shard in shards for check in shard.read_checks())
        row_costs.extend(cost for shard in shards for cost in shard.read_costs())
        all_drops.extend(load_drops + drops)
        under = read_conditioned(build, task, rows)
        conditioned.extend(under)
        reports[task.name] = task_report(
            config=task, language=task.language, version=task.version, voices=task.voices,
            load=build.read_load_report(task.name), items=items, load_drops=load_drops, rows=rows, drops=drops,
        ).model_copy(update={"conditions": condition_summaries(task, rows, under)})  # fmt: skip
    integrity = restore_clips([row for rows in rows_by_task.values() for row in rows], store)
    remade = [line for task in tasks if task.conditions for line in
              restore_condition_clips(task, rows_by_task[task.name], [e for e in conditioned if e.task == task.name], store)]
    integrity = integrity.model_copy(update={"clips_checked": integrity.clips_checked + sum(len(e.clips) for e in conditioned),
                                             "clips_remade": integrity.clips_remade + remade})  # fmt: skip
    voices = {voice: get_voice(voice) for voice in sorted({v for task in tasks for v in task.voices})}
    return finish_build(build, reports, rows_by_task, all_checks, all_drops, items_by_id, store, integrity, voices,
                        row_costs=row_costs, started=started, conditioned=conditioned)
