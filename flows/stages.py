"""What every s2sbench flow shares: library stages wrapped as lean Prefect tasks, and tables for artifacts.

Resume lives in the build and results folders (shard files, score caches), so Prefect neither hashes task inputs for
a cache nor stores results. A task run still has a fixed cost (creating it, three state changes and their events:
about 10 ms of this process's CPU, bench/bench_flow_overhead.py), small against any stage worth a task run; work
that takes milliseconds (reading a task file, checking arguments) runs in the flow's body instead. Large inputs (task
configs, lists of items or results) go to a stage in :func:`whole`.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence
from typing import Any

from prefect import task
from prefect.cache_policies import NO_CACHE

LEAN = {"cache_policy": NO_CACHE, "persist_result": False}


class Whole:
    """A stage input that Prefect hands over as it is (see :func:`whole`)."""

    __slots__ = ("value",)

    def __init__(self, value: Any):
        self.value = value

    def __repr__(self) -> str:
        return f"whole({self.value!r})"


def whole(value: Any) -> Whole:
    """``value`` for a stage, which gets it unwrapped, without Prefect walking its contents: Prefect walks every
    list, dict, dataclass and pydantic model in a task's inputs looking for futures, twice a task run (about 2 ms for
    a task config, 3 ms for 8 items on a loaded 2-core machine, a third of the run's fixed cost), three times with
    the Dask runner. Prefect's own ``opaque`` comes back from the Dask runner wrapped twice. Never for a future."""
    return Whole(value)


def _unwrapped(value: Any) -> Any:
    return value.value if isinstance(value, Whole) else value


def _run_namer(run_name: str | Callable[..., str]) -> Callable[..., str]:
    def run_name_of(parameters: dict[str, Any]) -> str:
        plain = {key: _unwrapped(value) for key, value in parameters.items()}
        return run_name.format(**plain) if isinstance(run_name, str) else run_name(parameters=plain)

    return run_name_of


def stage(name: str, run_name: str | Callable[..., str], **options):
    """A Prefect task around one library stage; ``run_name`` is a ``str.format`` template of its parameters (or a
    callable of ``parameters``) that says what this run works on: task, voice, shard, model, checkpoint. Inputs given
    in :func:`whole` reach the function and ``run_name`` unwrapped."""

    def decorate(fn: Callable[..., Any]):
        @functools.wraps(fn)
        def unwrapping(*args: Any, **kwargs: Any) -> Any:
            return fn(*map(_unwrapped, args), **{key: _unwrapped(value) for key, value in kwargs.items()})

        unwrapping.__prefect_task_source__ = fn  # Prefect keys the task by fn's code, not this wrapper's
        return task(unwrapping, name=name, task_run_name=_run_namer(run_name), **LEAN, **options)

    return decorate


def table(header: Sequence[str], rows: Sequence[Sequence[object]]) -> str:
    """A markdown table artifact's text."""
    from s2sbench.evaluation.results.summary import markdown_table

    return "\n".join(markdown_table(header, rows))


def names(values: Sequence[str] | None, none: str = "all") -> str:
    """A list of names for a run name: ``a, b``, or ``none`` when there are none."""
    return ", ".join(values) if values else none


def progress_artifact(key: str, interval_s: float) -> Callable:
    """A progress listener (:mod:`s2sbench.pipeline.run.progress`) that keeps a Prefect progress artifact of the current
    run (percent done, the progress line as its description) up to date, at most every ``interval_s``."""
    import time

    from prefect.artifacts import create_progress_artifact, update_progress_artifact

    state = {"id": None, "at": float("-inf")}

    def update(snapshot) -> None:
        now = time.monotonic()
        if state["id"] is not None and now - state["at"] < interval_s and snapshot.done < snapshot.total:
            return
        state["at"] = now
        if state["id"] is None:
            state["id"] = create_progress_artifact(progress=snapshot.fraction * 100, key=key, description=snapshot.line())
        else:
            update_progress_artifact(state["id"], progress=snapshot.fraction * 100, description=snapshot.line())

    return update
