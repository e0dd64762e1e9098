"""The ``evaluate`` flow (load a model, score a build with it, write results) and the ``sweep`` flow (one evaluation
task run per checkpoint of a training run, then the trajectory). The stages are ``s2sbench.evaluation``'s; this
module names their runs and publishes the tables as artifacts."""

from __future__ import annotations

from pathlib import Path

from prefect import flow
from prefect.artifacts import create_markdown_artifact

from s2sbench.evaluation.results.folder import RESULTS_FILE
from s2sbench.flows.stages import names, progress_artifact, stage, table
from s2sbench.pipeline.core.errors import ConfigError


def eval_options(tasks: list[str] | None, voices: list[str] | None, limit: int | None, split: str | None,
                 task_files: list[str] | None, bootstrap: int, seed: int | None, requests_per_call: int,
                 results_file: str = RESULTS_FILE):  # fmt: skip
    """The library's options from the flows' plain parameters (what a deployment or the CLI passes)."""
    from s2sbench.evaluation.runner.run import EvalOptions
    from s2sbench.evaluation.protocol.stats import BootstrapOptions
    from s2sbench.pipeline.catalog.tasks import load_task

    given = {config.name: config for config in (load_task(path) for path in task_files or ())}
    boot = BootstrapOptions(n_resamples=bootstrap, **({"seed": seed} if seed is not None else {}))
    return EvalOptions(bootstrap=boot, requests_per_call=requests_per_call, tasks=given or None,
                       select_tasks=tuple(tasks or ()), voices=tuple(voices or ()), limit=limit, split=split,
                       results_file=results_file)  # fmt: skip


# Checking the plan opens the data (a Hub dataset downloads here) and checks the model's options and the modes, all
# before any model loads: a typo stops the run in seconds.
@stage("check", "check {model} on {dataset}")
def plan_task(model: str, dataset: str, modes: list[str] | None, model_options: dict, options):
    from s2sbench.evaluation.runner.plan import plan_evaluation

    return plan_evaluation(model, dataset, modes, model_options, options)


@stage("load-model", "load {plan.model}")
def load_model_task(plan):
    from s2sbench.evaluation.runner.plan import load_model

    return load_model(plan)


def _score_run_name(parameters: dict) -> str:
    plan = parameters["plan"]
    voices = f" ({names(plan.options.voices)})" if plan.options.voices else ""
    return f"score {parameters['adapter'].name} on {names(list(plan.selected.tasks))}{voices}"


@stage("score", _score_run_name)
def score_task(plan, adapter, out_dir: str):
    from s2sbench.evaluation.runner.plan import score_plan

    return score_plan(plan, adapter, out_dir, [progress_artifact("score-progress", plan.options.progress_interval_s)])


@flow(name="evaluate", flow_run_name="evaluate {model} on {dataset}", persist_result=False)
def evaluate_flow(
    dataset: str,
    model: str,
    out_dir: str,
    model_options: dict | None = None,
    modes: list[str] | None = None,
    tasks: list[str] | None = None,
    voices: list[str] | None = None,
    limit: int | None = None,
    split: str | None = None,
    task_files: list[str] | None = None,
    bootstrap: int = 2000,
    seed: int | None = None,
    requests_per_call: int = 64,
    results_file: str = RESULTS_FILE,
) -> dict:
    """Evaluate ``dataset`` (a build folder, a Hub dataset ``ORG/NAME[@REV]`` or a saved datasets folder) with
    ``model`` (a registry name, see ``s2sbench models``, built with ``model_options``) in ``modes`` (default: all it
    declares); ``tasks``, ``voices``, ``limit`` (first N items per task), ``split``: what to score; ``task_files``:
    YAMLs of tasks outside the registry. Writes ``out_dir/results_file`` (and the tables beside it) and returns
    its content."""
    from s2sbench.evaluation.results.summary import results_markdown

    options = eval_options(tasks, voices, limit, split, task_files, bootstrap, seed, requests_per_call, results_file)
    plan = plan_task(model, dataset, modes, model_options or {}, options)
    results = score_task(plan, load_model_task(plan), out_dir).data
    create_markdown_artifact(markdown=results_markdown(results), key="evaluation-results",
                             description=f"{model} on {dataset}")  # fmt: skip
    return results


@stage("evaluate-checkpoint", "evaluate {checkpoint.path.name} (step {checkpoint.step})")
def checkpoint_task(plan, index: int, checkpoint, checkpoint_arg: str, out):
    from s2sbench.evaluation.models import get_adapter
    from s2sbench.evaluation.runner.sweep import evaluate_checkpoint

    adapter = get_adapter(plan.model, **{**plan.model_args, checkpoint_arg: str(checkpoint.path)})
    return evaluate_checkpoint(plan.data, index, checkpoint, adapter, plan.modes, out, plan.options)


@stage("trajectory", "trajectory of {out.root.name}")
def trajectory_task(out, checkpoints: list, results: list):
    from s2sbench.evaluation.runner.sweep import write_trajectory

    return write_trajectory(out, checkpoints, results)


def trajectory_markdown(trajectory, normalization: str = "token") -> str:
    """Accuracy per checkpoint, task and mode under each task's own rule (the first of its rules)."""
    from s2sbench.evaluation.results.summary import percent

    first_rule: dict[str, str] = {}
    rows = []
    for row in trajectory.rows:
        rule = first_rule.setdefault(row["task"], row["rule"])
        if row["normalization"] == normalization and row["rule"] == rule:
            rows.append([row["step"], row["checkpoint"], row["task"], row["mode"], rule,
                         f"{percent(row['accuracy'])} [{percent(row['ci_low'])}, {percent(row['ci_high'])}]"])  # fmt: skip
    return table(["step", "checkpoint", "task", "mode", "rule", f"accuracy % ({normalization}, 95% CI)"], rows)


@flow(name="sweep", flow_run_name="sweep {model} over {model_glob}", persist_result=False)
def sweep_flow(
    dataset: str,
    model: str,
    model_glob: str,
    out_dir: str,
    step_pattern: str | None = None,
    checkpoint_arg: str = "model",
    model_options: dict | None = None,
    modes: list[str] | None = None,
    tasks: list[str] | None = None,
    voices: list[str] | None = None,
    limit: int | None = None,
    split: str | None = None,
    task_files: list[str] | None = None,
    bootstrap: int = 2000,
    seed: int | None = None,
    requests_per_call: int = 64,
):
    """Evaluate every checkpoint matching ``model_glob`` (each passed to the adapter as its ``checkpoint_arg``
    option; the step read with ``step_pattern``, default the last number of its name) into
    ``out_dir/checkpoints/<name>/``, then write ``out_dir/trajectory.csv`` and the plots; the other parameters as
    for the evaluate flow. Returns the :class:`~s2sbench.evaluation.runner.sweep.Trajectory`."""
    from dataclasses import replace

    from s2sbench.evaluation.results.folder import ResultsDir
    from s2sbench.evaluation.runner.sweep import DEFAULT_STEP_PATTERN, find_checkpoints

    model_options = model_options or {}
    if checkpoint_arg in model_options:
        raise ConfigError(f"model option {checkpoint_arg!r} (--model-arg {checkpoint_arg}=...) conflicts with the sweep: it "
                         "sets that option to each checkpoint")  # fmt: skip
    options = eval_options(tasks, voices, limit, split, task_files, bootstrap, seed, requests_per_call)
    checkpoints = find_checkpoints(model_glob, step_pattern or DEFAULT_STEP_PATTERN)
    # checked with the first checkpoint; results.json records the options without the checkpoint's path
    plan = plan_task(model, dataset, modes, {**model_options, checkpoint_arg: str(checkpoints[0].path)}, options)
    plan = replace(plan, options=replace(plan.options, model_args=model_options))
    out = ResultsDir(out_dir)
    with out.lock():
        results = [checkpoint_task(plan, index, checkpoint, checkpoint_arg, out)
                   for index, checkpoint in enumerate(checkpoints)]  # fmt: skip
        trajectory = trajectory_task(out, checkpoints, results)
    create_markdown_artifact(markdown=trajectory_markdown(trajectory), key="sweep-trajectory",
                             description=f"{model} over {model_glob}: {Path(trajectory.table)}")  # fmt: skip
    return trajectory
