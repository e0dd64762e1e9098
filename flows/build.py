"""The ``build`` flow: items -> speak (synthesize + verify) per shard -> assemble. Library code does the work;
this module only maps it over tasks and shards with Prefect (``s2sbench.pipeline.run.build.run_build`` is the same
without Prefect)."""

from __future__ import annotations

from pathlib import Path

from prefect import flow, get_run_logger
from prefect.artifacts import create_markdown_artifact
from prefect.futures import PrefectWrappedFuture

from s2sbench.flows.stages import names, progress_artifact, stage, whole
from s2sbench.pipeline.run.assemble import assemble_build
from s2sbench.pipeline.run.build import (
    DEFAULT_SHARD_SIZE, build_session, condition_shard, kept_rows, load_build_items, prepare_items, reading_changes,
    shard_items, shard_work, speak_shard)
from s2sbench.pipeline.speech.conditions import context_clips
from s2sbench.pipeline.buildfolder.build_report import BuildReport
from s2sbench.pipeline.core.errors import ConfigError
from s2sbench.pipeline.run.progress import DEFAULT_INTERVAL_S, BuildProgress, ConditionProgress, ProgressReporter
from s2sbench.pipeline.items.task_config import TaskConfig, override_source
from s2sbench.pipeline.catalog.tasks import load_task
from s2sbench.pipeline.catalog.voices import check_task_voices
from s2sbench.pipeline.gate.verify import gate_warning


def _speak_run_name(parameters: dict) -> str:
    config = parameters["task_config"]
    return f"speak {config.name} shard {parameters['shard']:05d} ({names(config.voices)})"


# Loading items is no task: it takes milliseconds (see s2sbench.flows.stages). A TTS or ASR crash on one clip is
# handled inside the stage (recorded as a rejected attempt); retries here cover a worker dying mid-shard, which the
# resumable shard files make safe to repeat.
@stage("speak-shard", _speak_run_name, retries=2, retry_delay_seconds=[1, 5])
def speak_shard_task(task_config: TaskConfig, items, shard: int, out_dir: Path, store_root: Path | None, seed: int):
    return speak_shard(task_config, items, shard, out_dir, store_root, seed)


def _condition_run_name(parameters: dict) -> str:
    config = parameters["task_config"]
    return f"conditions {config.name} shard {parameters['shard']:05d} ({names([c.name for c in config.conditions])})"


@stage("condition-shard", _condition_run_name, retries=2, retry_delay_seconds=[1, 5])
def condition_shard_task(task_config: TaskConfig, shard: int, out_dir: Path, pool: list[str], store_root: Path | None):
    return condition_shard(task_config, shard, out_dir, pool, store_root)


@stage("assemble", "assemble {out_dir}")
def assemble_task(tasks: list[TaskConfig], out_dir: Path, shard_size: int, store_root: Path | None):
    return assemble_build(out_dir, tasks, shard_size, store_root)


PROGRESS_POLL_S = 2.0  # how often the bar moves; the log line and the artifact follow progress_interval_s


def still_running(futures: list[PrefectWrappedFuture], seconds: float) -> list[PrefectWrappedFuture]:
    """The futures not done after waiting up to ``seconds`` for the first of them. Not ``prefect.futures.wait(...,
    timeout=)``: it arms SIGALRM, which on an hour-long Dask build fired inside distributed's GC callback and printed
    an ignored ``CancelledError`` traceback into the log every few minutes."""
    if futures:
        futures[0].wait(timeout=seconds)
    return [future for future in futures if not future.wrapped_future.done()]


def wait_reporting(futures: list[PrefectWrappedFuture], progress, artifact_key: str, interval_s: float) -> None:
    """Wait for ``futures``, re-reading ``progress`` from the build folder and reporting it (the log line, the bar,
    the run's ``artifact_key`` artifact) as they go."""
    reporter = ProgressReporter(progress, interval_s, [progress_artifact(artifact_key, interval_s)])
    pending = futures
    while pending:
        pending = still_running(pending, min(PROGRESS_POLL_S, interval_s))
        progress.refresh()
        reporter.tick()
    reporter.close()


def report_markdown(report: BuildReport) -> str:
    lines = ["| task | items in | item x voice | kept | dropped | clips unverified | clips kept on the reference |",
             "|---|---|---|---|---|---|---|"]
    for name, entry in report.tasks.items():
        lines.append(f"| {name} | {entry.items_in} | {entry.item_voice_pairs_in} | {entry.kept} | {entry.dropped} "
                     f"| {entry.clips_unverified} | {entry.clips_kept_on_reference} |")  # fmt: skip
    if report.integrity.clips_remade:
        lines += ["", f"Clips made again (damaged or missing in the store): {len(report.integrity.clips_remade)}"]
    if report.costs is not None:
        lines += ["", "Where the time went:", "", report.costs.markdown()]
    return "\n".join(lines)


def load_build_tasks(tasks: list[str], source_path: str | None = None) -> list[TaskConfig]:
    """The tasks (registry names or YAML paths), the one task's source replaced by ``source_path`` if given; each
    task's voices checked to speak its language (:func:`check_task_voices`), before a build or its plan starts."""
    if source_path and len(tasks) != 1:
        raise ConfigError(f"--source-path is for one task, got {len(tasks)}: {', '.join(tasks)}")
    configs = [override_source(load_task(name), path=source_path) for name in tasks]
    for config in configs:
        check_task_voices(config)
    return configs


@flow(name="build", flow_run_name="build {out_dir}", persist_result=False)
def build_flow(
    tasks: list[str],
    out_dir: str,
    limit: int | None = None,
    shard_size: int = DEFAULT_SHARD_SIZE,
    store_root: str | None = None,
    seed: int = 0,
    rebuild: bool = False,
    source_path: str | None = None,
    progress_interval_s: float = DEFAULT_INTERVAL_S,
) -> dict:
    """Build the spoken benchmark for ``tasks`` (registry names or YAML paths) into ``out_dir``; ``rebuild`` discards
    the folder's earlier work when its inputs changed; ``source_path`` replaces the (one) task's source.path.
    Progress (rows done per task, clips per minute, ETA) is logged every ``progress_interval_s`` and kept on the run
    as the ``build-progress`` artifact."""
    logger = get_run_logger()
    store = Path(store_root) if store_root else None
    configs = load_build_tasks(tasks, source_path)
    for config in configs:
        warning = gate_warning(config)
        if warning:
            logger.warning(warning)
    synthesized = remade = 0
    loaded = load_build_items(configs, limit)  # checked before the folder is touched
    with build_session(Path(out_dir), configs, limit, shard_size, seed, rebuild) as build:
        chunks, shards, pairs, work = {}, {}, {}, {}
        for config in configs:
            if change := reading_changes(build, loaded[config.name]):
                logger.warning(change)
            items = prepare_items(config, build.root, limit, loaded[config.name])
            chunks[config.name] = shard_items(items, shard_size)
            logger.info("task %s: %d items in %d shard(s), voices %s", config.name, len(items), len(chunks[config.name]),
                        config.voices)  # fmt: skip
            shards[config.name] = build.shards(config.name, len(items), shard_size)
            pairs[config.name] = len(items) * len(config.voices)
            work[config.name] = shard_work(config, chunks[config.name])
        progress = BuildProgress(f"build {out_dir}", shards, pairs, work)  # before the shards start: this run's rate
        futures = [speak_shard_task.submit(whole(config), whole(chunk), index, build.root, store, seed)
                   for config in configs for index, chunk in enumerate(chunks[config.name])]  # fmt: skip
        wait_reporting(futures, progress, "build-progress", progress_interval_s)
        for future in futures:
            summary = future.result()
            synthesized += summary.synthesized
            remade += summary.remade
        # after every shard is spoken: a babble condition mixes clips of the whole task
        with_conditions = [config for config in configs if config.conditions]
        rows = {config.name: kept_rows(build, config, shard_size) for config in with_conditions}
        pools = {name: whole(context_clips(kept)) for name, kept in rows.items()}  # read once, not once per shard
        derived = [condition_shard_task.submit(whole(config), index, build.root, pools[config.name], store)
                   for config in with_conditions for index in range(len(chunks[config.name]))]  # fmt: skip
        if derived:
            deriving = ConditionProgress(f"conditions {out_dir}", build, with_conditions,
                                         {name: len(kept) for name, kept in rows.items()})  # fmt: skip
            wait_reporting(derived, deriving, "condition-progress", progress_interval_s)
        conditioned = sum(future.result() for future in derived)
        report = assemble_task(whole(configs), build.root, shard_size, store)
    for warning in report.low_yield_warnings():
        logger.warning(warning)
    create_markdown_artifact(markdown=report_markdown(report), key="build-report", description="s2sbench build report")
    return {**report.model_dump(mode="json"), "this_run": {"clips_synthesized": synthesized, "clips_remade": remade,
                                                          "condition_clips_derived": conditioned}}
