"""The task registry: one YAML file per task in ``data/tasks/`` (or any path a user passes, or a package's entry
point), and :func:`load_task`, which reads a task file into a :class:`~s2sbench.pipeline.items.task_config.TaskConfig` and
checks the loader, candidate builder and ASR engine it names against what each declares.

Adding a task or a language is a YAML file, not code.
"""

from __future__ import annotations

from pathlib import Path

from s2sbench.data import DATA_DIR
from s2sbench.pipeline.core.manifest import load_yaml
from s2sbench.pipeline.core.registry import Registry, UnknownNameError
from s2sbench.pipeline.core.schema import validate
from s2sbench.pipeline.items.task_config import TaskConfig, TaskConfigError

TASKS_DIR = DATA_DIR / "tasks"


def _registry() -> dict[str, Path]:
    return {path.stem: path for path in sorted(TASKS_DIR.glob("*.yaml"))}


#: task name -> its YAML file: the shipped ``data/tasks/*.yaml`` and files packages register under ``s2sbench.tasks``
TASKS: Registry[Path] = Registry("task", _registry, group="s2sbench.tasks")


def load_task(name_or_path: str | Path) -> TaskConfig:
    """Load a task by registry name (``demo-stories-en``) or by YAML path; every key is checked (unknown keys,
    exact types, ranges, the loader's and the candidate builder's options)."""
    path = Path(name_or_path)
    if not path.suffix:
        try:
            path = Path(TASKS.get(str(name_or_path), hint="; or pass the path of a task YAML file"))
        except UnknownNameError as error:
            raise TaskConfigError(str(error)) from None
    raw = load_yaml(path, TaskConfigError)
    if not isinstance(raw, dict):
        raise TaskConfigError(f"{path}: expected a mapping at the top level, got {type(raw).__name__}")
    task = validate(TaskConfig, raw, str(path), TaskConfigError).model_copy(update={"path": path.resolve()})
    check_components(task)
    return task


def check_components(task: TaskConfig) -> None:
    """The names and options a task gives its loader, candidate builder and ASR engine, checked against what each
    one declares (so a misspelt option fails when the task is read, not an hour into a build)."""
    from s2sbench.pipeline.gate.asr import ASR_ENGINES, check_asr_options
    from s2sbench.pipeline.items.candidates import BUILDERS
    from s2sbench.pipeline.items.sources import LOADERS

    where = str(task.path)
    loader = LOADERS.get(task.source.loader, f"{where}: key 'source.loader'")
    if getattr(loader, "options", None) is not None:
        validate(loader.options, task.source.options, where, TaskConfigError, prefix="source.options")
    builder = BUILDERS.get(task.candidates.construction, f"{where}: key 'candidates.construction'")
    validate(builder.Options, task.candidates.options, where, TaskConfigError, prefix="candidates.options")
    asr = task.gate.asr
    ASR_ENGINES.check(asr.engine, f"{where}: key 'gate.asr.engine'")
    check_asr_options(asr.engine, asr.options, f"{where}: key 'gate.asr.options'")


def task_names() -> list[str]:
    return TASKS.names()
