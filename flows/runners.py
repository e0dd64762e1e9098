"""Task runners: threads on one machine by default, or an existing Dask cluster (prefect-dask)."""

from __future__ import annotations

import argparse

from s2sbench.flows.commands import positive_int
from s2sbench.pipeline.errors import ConfigError


def add_runner_arguments(parser: argparse.ArgumentParser) -> None:
    group = parser.add_argument_group("execution")
    group.add_argument("--runner", choices=["threads", "dask"], default="threads", help="task runner (default: threads)")
    group.add_argument("--workers", type=positive_int, default=1, help="threads, or local Dask workers when no --address is given")
    group.add_argument("--address", help="scheduler address of an existing Dask cluster, e.g. tcp://10.0.0.5:8786")


def make_task_runner(runner: str, workers: int = 1, address: str | None = None):
    if runner == "threads":
        if address:
            raise ConfigError("--address needs --runner dask")
        from prefect.task_runners import ThreadPoolTaskRunner

        return ThreadPoolTaskRunner(max_workers=workers)
    if runner == "dask":
        from prefect_dask import DaskTaskRunner

        if address:
            return DaskTaskRunner(address=address)
        return DaskTaskRunner(cluster_kwargs={"n_workers": workers, "threads_per_worker": 1, "processes": True})
    raise ConfigError(f"unknown runner '{runner}' (known: threads, dask)")
