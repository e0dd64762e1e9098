"""Engine processes keep the large buffers they free for the next clip instead of page-faulting fresh ones in."""

from __future__ import annotations

import json
import os
import subprocess
import sys

from s2sbench.pipeline.machine.cpu import ENGINE_MALLOC_ENV, keep_freed_memory

# Allocates a buffer of MB megabytes with malloc, touches every page and frees it, ROUNDS times, on a thread of its own
# as an engine's C++ worker thread does (numpy is no probe: it asks the kernel for huge pages); prints the minor page
# faults per round after the first. MODE first: plain (nothing), keep (keep_freed_memory), late (keep_freed_memory
# after a thread has allocated), command (a CLI command).
PROBE = r"""
import ctypes, json, resource, sys, threading
megabytes, rounds, mode = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3]
libc = ctypes.CDLL(None)
libc.malloc.restype, libc.malloc.argtypes, libc.free.argtypes = ctypes.c_void_p, [ctypes.c_size_t], [ctypes.c_void_p]
if mode == "late":  # a thread has allocated before: its arena exists, and glibc's arena limit is fixed
    early = threading.Thread(target=lambda: libc.free(libc.malloc(1024)))
    early.start(), early.join()
if mode in ("keep", "late"):
    from s2sbench.pipeline.machine.cpu import keep_freed_memory
    assert keep_freed_memory()
if mode == "command":
    from s2sbench.flows.cli import main
    main(["--version"])
def buffer():
    pointer = libc.malloc(megabytes << 20)
    ctypes.memset(pointer, 1, megabytes << 20)
    libc.free(pointer)
def work():
    buffer()
    before = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
    for _ in range(rounds):
        buffer()
    faults.append((resource.getrusage(resource.RUSAGE_SELF).ru_minflt - before) / rounds)
faults = []
thread = threading.Thread(target=work)
thread.start()
thread.join()
print(json.dumps(faults[0]))
"""
PAGES_PER_MB = 256


def _faults_per_round(megabytes: int, mode: str, env: dict[str, str]) -> float:
    clean = {name: value for name, value in os.environ.items() if not name.startswith("MALLOC_")}
    result = subprocess.run([sys.executable, "-c", PROBE, str(megabytes), "8", mode],
                            env={**clean, **env}, capture_output=True, text=True, check=True)
    return json.loads(result.stdout.strip().splitlines()[-1])  # a command prints its version first


def test_a_dask_nanny_setting_no_longer_makes_every_buffer_fault_in_again():
    """A Dask nanny starts its worker with MALLOC_TRIM_THRESHOLD_=65536, which pins glibc's mmap threshold at 128 KB:
    each 8 MB buffer then comes fresh from the kernel, until the engine sets its thresholds when it loads."""
    nanny = {"MALLOC_TRIM_THRESHOLD_": "65536"}
    assert _faults_per_round(8, "plain", env=nanny) > 0.9 * 8 * PAGES_PER_MB
    assert _faults_per_round(8, "keep", env=nanny) < 0.1 * 8 * PAGES_PER_MB


def test_the_engine_environment_reuses_buffers_larger_than_a_thread_arena():
    """A 100 MB buffer (a Whisper batch's attention scores) on a thread: glibc's per-thread arenas hold at most 64 MB,
    so it faults in every time whatever the thresholds, unless the threads share one arena: from the environment at
    start, or from keep_freed_memory before any thread allocates (as every command calls it), not after."""
    assert _faults_per_round(100, "plain", env={}) > 0.9 * 100 * PAGES_PER_MB
    assert _faults_per_round(100, "plain", env=ENGINE_MALLOC_ENV) < 0.1 * 100 * PAGES_PER_MB
    assert _faults_per_round(100, "keep", env={}) < 0.1 * 100 * PAGES_PER_MB
    assert _faults_per_round(100, "late", env={}) > 0.9 * 100 * PAGES_PER_MB


def test_a_command_gives_its_threads_one_arena_before_they_run():
    """The CLI sets the allocator first thing: a command's engine threads reuse their buffers."""
    assert _faults_per_round(100, "command", env={}) < 0.1 * 100 * PAGES_PER_MB


def test_keeping_freed_memory_leaves_a_threshold_the_user_set_alone(monkeypatch):
    keep_freed_memory.cache_clear()
    monkeypatch.setenv("MALLOC_MMAP_THRESHOLD_", "1048576")
    try:
        assert keep_freed_memory() is False
    finally:
        keep_freed_memory.cache_clear()
