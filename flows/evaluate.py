"""The ``evaluate`` flow: score a build with one model in the requested modes, write results."""

from __future__ import annotations

from pathlib import Path

from prefect import flow, task
from prefect.artifacts import create_markdown_artifact


@task(name="evaluate-model")
def evaluate_task(build_dir: Path, model: str, model_options: dict, modes: list[str] | None, out_dir: Path,
                  tasks: list[str] | None = None) -> dict:
    from s2sbench.evaluation.models import get_adapter
    from s2sbench.evaluation.run import EvalOptions, evaluate

    adapter = get_adapter(model, **model_options)
    return evaluate(build_dir, adapter, modes=modes, out_dir=out_dir,
                    options=EvalOptions(select_tasks=tuple(tasks or ()))).data


@flow(name="evaluate")
def evaluate_flow(
    build_dir: str, model: str, out_dir: str, model_options: dict | None = None, modes: list[str] | None = None,
    tasks: list[str] | None = None,
) -> dict:
    """Evaluate the build in ``build_dir`` with ``model`` (a registry name, see ``s2sbench models``); ``tasks``: only
    these tasks of the build (default: all)."""
    from s2sbench.evaluation.report.summary import results_markdown

    results = evaluate_task(Path(build_dir), model, model_options or {}, modes, Path(out_dir), tasks)
    create_markdown_artifact(markdown=results_markdown(results), key="evaluation-results", description="s2sbench results")
    return results
