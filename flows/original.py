"""The ``export-original`` and ``import-original`` flows: a build in the JSONL + wav layout of the original S2SBench
release, and that layout read back into a build folder s2sbench can evaluate; artifacts: the sets written or read."""

from __future__ import annotations

from pathlib import Path

from prefect import flow
from prefect.artifacts import create_markdown_artifact

from s2sbench.flows.stages import names, stage, table


@stage("export-original", "export {build_dir}")
def export_task(build_dir: Path, out_dir: Path):
    from s2sbench.pipeline.publish.original import export_original

    return export_original(build_dir, out_dir)


def _import_run_name(parameters: dict) -> str:
    return "import " + names(sorted({spec.task for spec in parameters["sets"]}), "nothing")


@stage("import-original", _import_run_name)
def import_task(sets: list, out_dir: Path) -> dict[str, int]:
    from s2sbench.pipeline.publish.original import import_original

    return import_original(sets, out_dir)


@flow(name="export-original", flow_run_name="export-original {build_dir}", persist_result=False)
def export_original_flow(build_dir: str, out_dir: str) -> list:
    """Write every config of the build in ``build_dir`` to ``out_dir`` as ``<config>.jsonl`` and
    ``<config>/<uttid>.wav``, with the config files the original code reads. Returns the exported sets."""
    exported = export_task(Path(build_dir), Path(out_dir))
    rows = [[entry.name, entry.task, entry.voice, entry.format, entry.items, entry.rows, entry.config_file,
             entry.original_name] for entry in exported]  # fmt: skip
    header = ["set", "task", "voice", "format", "items", "rows", "config file", "name in the original code"]
    create_markdown_artifact(markdown=table(header, rows),
                             key="export-original", description=str(out_dir))  # fmt: skip
    return exported


@flow(name="import-original", flow_run_name="import-original {source}", persist_result=False)
def import_original_flow(source: str, out_dir: str, audio_dir: str | None = None, task: str | None = None,
                         language: str | None = None) -> dict[str, int]:  # fmt: skip
    """Read the original-layout sets at ``source`` (an export folder, a folder with ``eval_s2t.yaml``, or one JSONL
    file with its ``audio_dir``, ``task`` and ``language``) into a build folder ``out_dir`` (items and dataset, the
    audio marked unverified). Returns the rows imported per task."""
    from s2sbench.pipeline.publish.original import find_sets

    sets = find_sets(source, task=task, language=language, audio_dir=audio_dir)
    counts = import_task(sets, Path(out_dir))
    create_markdown_artifact(markdown=table(["task", "rows"], list(counts.items())), key="import-original",
                             description=f"{source} -> {out_dir}")  # fmt: skip
    return counts
