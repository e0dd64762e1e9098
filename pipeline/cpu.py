"""How many CPU cores the engines of this process may use.

ONNX Runtime (Piper, Kokoro), CTranslate2 (faster-whisper) and torch each start a thread pool sized to the whole
machine. Several worker processes on one machine then run (cores x processes) threads that fight over the cores
(ONNX Runtime's idle threads spin), and a second worker makes a build slower instead of faster. ``S2SBENCH_ENGINE_CORES``
gives each process its share: a local Dask cluster of N workers sets it to cores // N in every worker (see
``s2sbench.flows.runners``); set it yourself for workers you start (``S2SBENCH_ENGINE_CORES=1 dask worker ...``).
Unset, a process's engines use every core it may run on.
"""

from __future__ import annotations

import os

ENGINE_CORES_ENV = "S2SBENCH_ENGINE_CORES"


def usable_cores() -> int:
    """Cores this process may run on (its CPU affinity on Linux)."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not on Linux
        return os.cpu_count() or 1


def engine_cores() -> int:
    """The cores one engine of this process may keep busy: ``S2SBENCH_ENGINE_CORES``, else every usable core."""
    value = os.environ.get(ENGINE_CORES_ENV, "").strip()
    if not value:
        return usable_cores()
    if not value.isdigit() or int(value) < 1:
        raise ValueError(f"{ENGINE_CORES_ENV} must be a whole number of cores >= 1, got {value!r}")
    return int(value)


def cores_per_worker(workers: int) -> int:
    """Each worker's share when ``workers`` processes run on this machine (at least one core each)."""
    if workers < 1:
        raise ValueError(f"--workers must be >= 1, got {workers}")
    return max(1, usable_cores() // workers)


def limit_torch_threads() -> None:
    """torch's intra-op pool to this process's share (torch's threads are process-wide: set once, on load)."""
    import torch

    torch.set_num_threads(engine_cores())
