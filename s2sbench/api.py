"""The Python API: :func:`build` a spoken benchmark, :func:`evaluate` a model on one.

Both take what the command line takes (``s2sbench build``, ``s2sbench eval``) and return typed records; both check
their arguments before any work starts (an unknown task, model option or mode is a ``ValueError`` naming it).
Heavy libraries load on the first call, not on ``import s2sbench``.
"""

from __future__ import annotations

import tempfile
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any


def build(tasks: Sequence[str | Path], out: str | Path, *, limit: int | None = None, shard_size: int = 8,
          store: str | Path | None = None, seed: int = 0, rebuild: bool = False):
    """Build ``tasks`` (registry names such as ``"demo-stories-en"``, or task YAML paths) into the build folder
    ``out`` in this process: items, synthesis, the ASR gate, the dataset. Resumes a killed build of the same inputs;
    ``rebuild`` starts a folder built from other inputs over. Returns the
    :class:`~s2sbench.pipeline.buildfolder.build_report.BuildReport`."""
    from s2sbench.pipeline.run.build import run_build
    from s2sbench.pipeline.catalog.tasks import load_task

    if isinstance(tasks, (str, Path)):
        tasks = [tasks]
    configs = [load_task(task) for task in tasks]
    return run_build(configs, Path(out), limit=limit, shard_size=shard_size, store_root=Path(store) if store else None,
                     seed=seed, rebuild=rebuild)  # fmt: skip


def evaluate(model: Any, dataset: Any, modes: Sequence[str] | None = None, *, out: str | Path | None = None,
             model_args: Mapping[str, Any] | None = None, tasks: Sequence[str] = (), voices: Sequence[str] = (),
             limit: int | None = None, split: str | None = None, task_files: Sequence[str | Path] = (),
             bootstrap: int = 2000, seed: int | None = None):
    """Score ``model`` on ``dataset`` in ``modes`` (default: every mode the model declares).

    - ``model``: a registry name (``"smollm2"``, ``"cascade"``, ``"hf-causal"``; ``s2sbench models`` lists them)
      with ``model_args`` (checked against the adapter's options), or a built
      :class:`~s2sbench.evaluation.models.base.ModelAdapter`;
    - ``dataset``: a build folder, a Hub dataset id ``"org/name[@revision]"``, a folder saved with ``datasets``, or a
      ``datasets.Dataset``/``DatasetDict``;
    - ``tasks``, ``voices``, ``limit`` (first N items per task), ``split``: what to score; ``task_files``: YAMLs
      of tasks that are neither in the registry nor recorded with the data;
    - ``out``: the results folder (results.json, results_lm_eval.json, results.md/.csv, samples.jsonl, original/,
      the score cache); None: a temporary folder, removed after the run.

    Returns :class:`~s2sbench.evaluation.runner.run.Results`: ``results.accuracy(task, mode)``, ``results.file`` (the typed
    results.json), ``results.skipped``. Everything is checked before the model loads."""
    from s2sbench.evaluation.runner.plan import plan_evaluation, run_plan
    from s2sbench.evaluation.runner.run import EvalOptions
    from s2sbench.evaluation.protocol.stats import BootstrapOptions
    from s2sbench.pipeline.catalog.tasks import load_task

    def names(value: str | Sequence[str]) -> tuple[str, ...]:
        return (value,) if isinstance(value, str) else tuple(value)

    given = {task.name: task for task in (load_task(path) for path in names(task_files))}
    options = EvalOptions(
        bootstrap=BootstrapOptions(n_resamples=bootstrap, **({"seed": seed} if seed is not None else {})),
        tasks=given or None, select_tasks=names(tasks), voices=names(voices), limit=limit, split=split,
    )  # fmt: skip
    plan = plan_evaluation(model, dataset, modes, model_args, options)
    if out is not None:
        return run_plan(plan, out)
    with tempfile.TemporaryDirectory(prefix="s2sbench-eval-") as scratch:
        return run_plan(plan, scratch)
