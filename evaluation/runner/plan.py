"""An evaluation checked before its model loads: the model's options against its declared ones, the modes against
what it scores, the data (read, its columns checked, the selection made) and the tasks' settings.

:func:`plan_evaluation` raises on the first problem (a ``ValueError`` naming the argument and what it accepts), so a
typo in ``--model-arg`` or a mode a text LM cannot score stops the run in seconds, not after the weights load;
:func:`run_plan` then builds the adapter and evaluates.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from s2sbench.evaluation.models import check_model_options, declared_modes, get_adapter
from s2sbench.evaluation.models.base import ModelAdapter
from s2sbench.evaluation.protocol.modes import requested_modes
from s2sbench.evaluation.runner.run import EvalOptions, Results, check_speech_continuations, evaluate, task_configs
from s2sbench.evaluation.data.selection import SelectedRows, select_rows
from s2sbench.evaluation.data.sources import EvalDataset, open_dataset
from s2sbench.pipeline.core.errors import ConfigError


@dataclass(frozen=True)
class EvalPlan:
    model: str | ModelAdapter  # a registry name, or an adapter already built
    model_args: dict[str, Any]  # checked against the adapter's options
    modes: tuple[str, ...] | None  # None: every mode the model declares
    data: EvalDataset
    selected: SelectedRows
    options: EvalOptions


def plan_evaluation(model: str | ModelAdapter, dataset: object, modes: Sequence[str] | None = None,
                    model_args: Mapping[str, Any] | None = None, options: EvalOptions = EvalOptions()) -> EvalPlan:  # fmt: skip
    """Check an evaluation without loading the model (see the module docstring)."""
    if isinstance(model, ModelAdapter):
        if model_args:
            raise ConfigError("model arguments go to a model named by its registry name, not to an adapter already built")
        name, declared, args = model.name, model.modes, {}
    else:
        name, args = model, check_model_options(model, dict(model_args or {}))
        declared = declared_modes(model)
    chosen = requested_modes(name, declared, modes) if declared or modes is not None else None
    data = open_dataset(dataset, split=options.split, tasks=options.select_tasks, voices=options.voices)
    selected = select_rows(data, options.selection)
    if chosen is not None:
        check_speech_continuations(chosen, selected.tasks, explicit=modes is not None)
    task_configs(selected.tasks, data, options.tasks)
    return EvalPlan(model, args, tuple(modes) if modes is not None else None, data, selected, options)


def load_model(plan: EvalPlan) -> ModelAdapter:
    """The plan's adapter, built now (the model loads here)."""
    return plan.model if isinstance(plan.model, ModelAdapter) else get_adapter(plan.model, **plan.model_args)


def score_plan(plan: EvalPlan, adapter: ModelAdapter, out_dir: str | Path, on_progress: Sequence = ()) -> Results:
    """Evaluate the planned data with ``adapter`` into ``out_dir`` (``on_progress``: see :func:`evaluate`)."""
    return evaluate(plan.data, adapter, plan.modes, out_dir, replace(plan.options, model_args=plan.model_args),
                    on_progress)


def run_plan(plan: EvalPlan, out_dir: str | Path) -> Results:
    """Build the adapter and evaluate the planned data into ``out_dir``."""
    return score_plan(plan, load_model(plan), out_dir)
