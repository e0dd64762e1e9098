"""How many CPU cores the engines of this process may use.

ONNX Runtime (Piper, Kokoro), CTranslate2 (faster-whisper) and torch each start a thread pool sized to the whole
machine. Several worker processes on one machine then run (cores x processes) threads that fight over the cores
(ONNX Runtime's idle threads spin), and a second worker makes a build slower instead of faster. ``S2SBENCH_ENGINE_CORES``
gives each process its share: a local Dask cluster of N workers sets it to cores // N in every worker (see
``s2sbench.flows.runners``); set it yourself for workers you start (``S2SBENCH_ENGINE_CORES=1 dask worker ...``).
Unset, a process's engines use every core it may run on.

The engines' memory, too: a Whisper encoder pass allocates tens to hundreds of megabytes (attention scores over the
30-second window) and frees them, clip after clip. glibc's malloc hands an allocation above its mmap threshold (or
above 64 MB in a thread's own arena) fresh pages from the kernel, page-faulted in and zeroed on first touch and
returned when freed, so every clip paid again for its buffers: about 90,000 page faults and a fifth of its CPU time
with faster-whisper tiny.en, and nearly twice that in a Dask worker, whose nanny sets ``MALLOC_TRIM_THRESHOLD_=65536``
(which also pins the mmap threshold at 128 KB). :data:`ENGINE_MALLOC_ENV` keeps freed memory for reuse instead: one
arena for every thread, mmap and trim thresholds of 512 MB. A local cluster's workers start with it in their
environment (see ``s2sbench.flows.runners``; put it in the environment of workers you start). :func:`keep_freed_memory`
sets the same in a process that started without it: every ``s2sbench`` command calls it first thing, and an engine
calls it when it loads. The arena count takes only before the process's threads first allocate (glibc fixes its arena
limit when a second thread asks for an arena), so in a library caller whose threads ran already only the thresholds
take; there, set the environment.
"""

from __future__ import annotations

import ctypes
import os
from functools import cache

from s2sbench.pipeline.core.errors import ConfigError

ENGINE_CORES_ENV = "S2SBENCH_ENGINE_CORES"

_KEEP_BYTES = 512 << 20  # above a Whisper batch's largest buffer; freed memory up to this stays in the process
ENGINE_MALLOC_ENV = {"MALLOC_ARENA_MAX": "1", "MALLOC_MMAP_THRESHOLD_": str(_KEEP_BYTES),
                     "MALLOC_TRIM_THRESHOLD_": str(_KEEP_BYTES)}
_M_TRIM_THRESHOLD, _M_MMAP_THRESHOLD, _M_ARENA_MAX = -1, -3, -8  # glibc's mallopt parameters (malloc.h)
_ENGINE_PIDS: set[int] = set()


def register_engine_process(pid: int) -> None:
    """Count a process an engine started (a worker in another environment) as this process's engine work."""
    _ENGINE_PIDS.add(pid)


def engine_processes() -> list[int]:
    """The engine processes this process started (some may have ended)."""
    return sorted(_ENGINE_PIDS)


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
        raise ConfigError(f"{ENGINE_CORES_ENV} must be a whole number of cores >= 1, got {value!r}; set it to one, "
                          "or unset it to let each engine use every core")
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


@cache
def keep_freed_memory() -> bool:
    """Set glibc's arena count, mmap and trim thresholds to :data:`ENGINE_MALLOC_ENV`'s in this process (once), each
    unless the environment sets it; whether the thresholds are this module's. Not glibc (macOS, musl): nothing to do.
    The arena count takes only if no thread has allocated yet (see the module's docstring)."""
    try:
        mallopt = ctypes.CDLL(None).mallopt
    except (OSError, AttributeError, TypeError):  # no libc to open (Windows), or no mallopt in it
        return False
    if "MALLOC_ARENA_MAX" not in os.environ:
        mallopt(_M_ARENA_MAX, int(ENGINE_MALLOC_ENV["MALLOC_ARENA_MAX"]))
    if "MALLOC_MMAP_THRESHOLD_" in os.environ:
        return os.environ["MALLOC_MMAP_THRESHOLD_"] == ENGINE_MALLOC_ENV["MALLOC_MMAP_THRESHOLD_"]
    return bool(mallopt(_M_MMAP_THRESHOLD, _KEEP_BYTES)) and bool(mallopt(_M_TRIM_THRESHOLD, _KEEP_BYTES))
