"""Task runners: threads in this process (the default), a local Dask cluster of worker processes, or an existing
Dask cluster reached by its scheduler's address (prefect-dask).

Each Dask worker process loads a task's TTS and ASR models once, on its first work unit, and keeps them for every
later one (``get_engine`` and ``get_asr`` cache them per process). A local cluster of N workers gives each worker
cores // N for its engines' thread pools (``S2SBENCH_ENGINE_CORES``, :mod:`s2sbench.pipeline.machine.cpu`), one task at a
time per worker: N workers then keep N cores busy instead of fighting over them. Its workers start with the engines'
allocator settings (``ENGINE_MALLOC_ENV``, in place of the nanny's ``MALLOC_TRIM_THRESHOLD_``), and the cluster's
diagnostics sample less often (:data:`QUIETER_DIAGNOSTICS`): at Dask's defaults they cost an idle worker 5% of a
core, and the scheduler and nannies in this process as much again, which on a machine the workers fill comes out of
their work.
"""

from __future__ import annotations

import os

from s2sbench.pipeline.machine.cpu import ENGINE_CORES_ENV, ENGINE_MALLOC_ENV, cores_per_worker
from s2sbench.pipeline.core.errors import ConfigError, EnvironmentFault

RUNNERS = ("threads", "dask")


def local_cluster_kwargs(workers: int) -> dict:
    """A LocalCluster of ``workers`` processes, one task each at a time, each with its share of the cores (or the
    share already set in ``S2SBENCH_ENGINE_CORES``)."""
    engine_cores = os.environ.get(ENGINE_CORES_ENV) or str(cores_per_worker(workers))
    return {"n_workers": workers, "threads_per_worker": 1, "processes": True, "env": {ENGINE_CORES_ENV: engine_cores}}


# Dask's defaults in parentheses; none of these changes what runs where. Together they take an idle 2-worker cluster
# from 2.3 to 1.4 s of CPU per 30 s on this machine (scheduler and nannies 1.3 -> 0.75 s, each worker 0.5 -> 0.3 s).
QUIETER_DIAGNOSTICS = {
    "distributed.worker.profile.interval": "100ms",  # (10 ms) the profiler's stack samples
    "distributed.admin.tick.interval": "100ms",  # (20 ms) the event-loop blocking monitor
    "distributed.admin.system-monitor.interval": "2s",  # (500 ms) CPU, memory, disk and network for the dashboard
    "distributed.worker.memory.monitor-interval": "500ms",  # (100 ms) the nanny's memory limit check
}


def local_cluster_config() -> dict:
    """The Dask settings a local cluster's processes start with (``dask.config.set`` keys)."""
    return {**QUIETER_DIAGNOSTICS, **{f"distributed.nanny.pre-spawn-environ.{name}": value
                                      for name, value in ENGINE_MALLOC_ENV.items()}}


def start_local_cluster(**kwargs):
    """A ``LocalCluster(**kwargs)`` with :func:`local_cluster_config` (its nannies and workers read Dask's settings
    when they start, so they keep them for the cluster's life)."""
    import dask
    from distributed import LocalCluster

    with dask.config.set(local_cluster_config()):
        return LocalCluster(**kwargs)


def make_task_runner(runner: str | None, workers: int = 1, address: str | None = None):
    runner = runner or ("dask" if address else "threads")
    if workers < 1:
        raise ConfigError(f"--workers must be >= 1, got {workers}")
    if runner == "threads":
        if address:
            raise ConfigError("--address needs --runner dask")
        from prefect.task_runners import ThreadPoolTaskRunner

        return ThreadPoolTaskRunner(max_workers=workers)
    if runner == "dask":
        from prefect_dask import DaskTaskRunner

        if address:
            return DaskTaskRunner(address=address)
        return DaskTaskRunner(cluster_class=start_local_cluster, cluster_kwargs=local_cluster_kwargs(workers))
    raise ConfigError(f"unknown runner '{runner}' (known: {', '.join(RUNNERS)})")


def check_scheduler(address: str, timeout_s: float = 10) -> None:
    """Fail before the flow starts when no Dask scheduler answers at ``address`` (Prefect would fail inside the flow
    run with whatever the bytes at that address decode to)."""
    import socket
    from urllib.parse import urlsplit

    from distributed import Client

    where = urlsplit(address if "://" in address else f"tcp://{address}")
    try:
        # a refused or unroutable address fails here at once; Client would retry it for the whole timeout
        socket.create_connection((where.hostname, where.port or 8786), timeout=timeout_s).close()
        with Client(address, timeout=timeout_s):
            pass
    except Exception as error:  # refused, timed out, or something that is not a Dask scheduler answered
        raise EnvironmentFault(
            f"--address {address}: no Dask scheduler answers there ({type(error).__name__}: {error}); start one "
            f"with `dask scheduler` and its workers with `dask worker {address}` (docs/orchestration.md)"
        ) from error
