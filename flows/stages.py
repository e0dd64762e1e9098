"""What every s2sbench flow shares: library stages wrapped as lean Prefect tasks, and tables for artifacts.

Resume lives in the build and results folders (shard files, score caches), so Prefect neither hashes task inputs for
a cache nor stores results: a task run then costs about 10-150 ms (bench/bench_flow_overhead.py measures it), small
against any stage worth a task run. Work that takes milliseconds (reading a task file, checking arguments) runs in
the flow's body instead.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from prefect import task
from prefect.cache_policies import NO_CACHE

LEAN = {"cache_policy": NO_CACHE, "persist_result": False}


def stage(name: str, run_name: str | Callable[..., str], **options):
    """A Prefect task around one library stage; ``run_name`` is a ``str.format`` template of its parameters (or
    Prefect's callable) that says what this run works on: task, voice, shard, model, checkpoint."""
    return task(name=name, task_run_name=run_name, **LEAN, **options)


def table(header: Sequence[str], rows: Sequence[Sequence[object]]) -> str:
    """A markdown table artifact's text."""
    from s2sbench.evaluation.report.summary import markdown_table

    return "\n".join(markdown_table(header, rows))


def names(values: Sequence[str] | None, none: str = "all") -> str:
    """A list of names for a run name: ``a, b``, or ``none`` when there are none."""
    return ", ".join(values) if values else none
