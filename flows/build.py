"""The ``build`` flow: items -> speak (synthesize + verify) per shard -> assemble. Library code does the work;
this module only maps it over tasks and shards with Prefect (``s2sbench.pipeline.build.run_build`` is the same
without Prefect)."""

from __future__ import annotations

from pathlib import Path

from prefect import flow, get_run_logger
from prefect.artifacts import create_markdown_artifact

from s2sbench.flows.stages import names, stage, whole
from s2sbench.pipeline.assemble import assemble_build
from s2sbench.pipeline.build import DEFAULT_SHARD_SIZE, build_session, prepare_items, shard_items, speak_shard
from s2sbench.pipeline.build_report import BuildReport
from s2sbench.pipeline.tasks import TaskConfig, load_task
from s2sbench.pipeline.verify import gate_warning


def _speak_run_name(parameters: dict) -> str:
    config = parameters["task_config"]
    return f"speak {config.name} shard {parameters['shard']:05d} ({names(config.voices)})"


# Loading items is no task: it takes milliseconds (see s2sbench.flows.stages). A TTS or ASR crash on one clip is
# handled inside the stage (recorded as a rejected attempt); retries here cover a worker dying mid-shard, which the
# resumable shard files make safe to repeat.
@stage("speak-shard", _speak_run_name, retries=2, retry_delay_seconds=[1, 5])
def speak_shard_task(task_config: TaskConfig, items, shard: int, out_dir: Path, store_root: Path | None, seed: int):
    return speak_shard(task_config, items, shard, out_dir, store_root, seed)


@stage("assemble", "assemble {out_dir}")
def assemble_task(tasks: list[TaskConfig], out_dir: Path, shard_size: int, store_root: Path | None):
    return assemble_build(out_dir, tasks, shard_size, store_root)


def report_markdown(report: BuildReport) -> str:
    lines = ["| task | items in | item x voice | kept | dropped | clips unverified |", "|---|---|---|---|---|---|"]
    for name, entry in report.tasks.items():
        lines.append(f"| {name} | {entry.items_in} | {entry.item_voice_pairs_in} | {entry.kept} | {entry.dropped} "
                     f"| {entry.clips_unverified} |")  # fmt: skip
    if report.integrity.clips_remade:
        lines += ["", f"Clips made again (damaged or missing in the store): {len(report.integrity.clips_remade)}"]
    return "\n".join(lines)


@flow(name="build", flow_run_name="build {out_dir}", persist_result=False)
def build_flow(
    tasks: list[str],
    out_dir: str,
    limit: int | None = None,
    shard_size: int = DEFAULT_SHARD_SIZE,
    store_root: str | None = None,
    seed: int = 0,
    rebuild: bool = False,
) -> dict:
    """Build the spoken benchmark for ``tasks`` (registry names or YAML paths) into ``out_dir``; ``rebuild`` discards
    the folder's earlier work when its inputs changed."""
    logger = get_run_logger()
    store = Path(store_root) if store_root else None
    configs = [load_task(name) for name in tasks]
    for config in configs:
        warning = gate_warning(config)
        if warning:
            logger.warning(warning)
    synthesized = remade = 0
    with build_session(Path(out_dir), configs, limit, shard_size, seed, rebuild) as build:
        for config in configs:
            items = prepare_items(config, build.root, limit)
            shards = shard_items(items, shard_size)
            logger.info("task %s: %d items in %d shard(s), voices %s", config.name, len(items), len(shards), config.voices)
            futures = [speak_shard_task.submit(whole(config), whole(shard), index, build.root, store, seed)
                       for index, shard in enumerate(shards)]  # fmt: skip
            for future in futures:
                summary = future.result()
                synthesized += summary.synthesized
                remade += summary.remade
                logger.info("task %s shard %d: %d kept, %d dropped, %d synthesized", summary.task, summary.shard,
                            summary.rows, summary.dropped, summary.synthesized)  # fmt: skip
        report = assemble_task(whole(configs), build.root, shard_size, store)
    create_markdown_artifact(markdown=report_markdown(report), key="build-report", description="s2sbench build report")
    return {**report.model_dump(mode="json"), "this_run": {"clips_synthesized": synthesized, "clips_remade": remade}}
