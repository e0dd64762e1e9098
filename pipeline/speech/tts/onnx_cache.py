"""What s2sbench derives from a voice's ONNX model file, made once per model and reused by every later process.

Piper's graph is rewritten so that its noise is seeded (:mod:`s2sbench.pipeline.speech.tts.seeded_noise`), and Kokoro's
graph is checked for random ops that nothing seeds. Both parse the model with the ``onnx`` package, whose import
alone costs about 1.5 s of CPU, and the parse and rewrite of a 60-90 MB model about as much again: paid by every
process that loads a voice (each build command, each Dask worker) when done on every load. So the result is kept in
``~/.cache/s2sbench/onnx`` (``S2SBENCH_ONNX_CACHE`` moves it), named by the model file's SHA-256 and the
derivation's version, written atomically, and read back only when its own SHA-256 (recorded beside it) still
matches: a damaged copy is derived again, never used.
"""

from __future__ import annotations

import json
import logging
import os
from collections.abc import Callable
from pathlib import Path

from s2sbench.pipeline.core.manifest import atomic_write_bytes, atomic_write_text, sha256_bytes

log = logging.getLogger(__name__)

CACHE_ENV = "S2SBENCH_ONNX_CACHE"


def onnx_cache_dir() -> Path:
    return Path(os.environ.get(CACHE_ENV) or "~/.cache/s2sbench/onnx").expanduser()


def derived_bytes(model_sha256: str, derivation: str, derive: Callable[[], bytes]) -> bytes:
    """The bytes ``derive()`` makes of the model whose file hashes to ``model_sha256``; ``derivation`` names what
    it makes and its version (change it when ``derive`` would make other bytes)."""
    return _derived(model_sha256, derivation, derive)[1]


def derived_file(model_sha256: str, derivation: str, derive: Callable[[], bytes]) -> Path | None:
    """As :func:`derived_bytes`, for a reader that wants a file (onnxruntime loading a model by its path): the cached
    file, checked, or None where the cache cannot be written."""
    return _derived(model_sha256, derivation, derive)[0]


def _derived(model_sha256: str, derivation: str, derive: Callable[[], bytes]) -> tuple[Path | None, bytes]:
    stem = f"{model_sha256[:32]}-{derivation}"  # appended to, not with_suffix: a version may hold a dot ("v1.2")
    data_path, record_path = onnx_cache_dir() / f"{stem}.bin", onnx_cache_dir() / f"{stem}.json"
    try:
        recorded = json.loads(record_path.read_text(encoding="utf-8"))["sha256"]
        data = data_path.read_bytes()
        if sha256_bytes(data) == recorded:
            return data_path, data
    except (OSError, ValueError, KeyError, TypeError):
        pass  # not made yet, or damaged: made again below
    data = derive()
    try:
        atomic_write_bytes(data_path, data)
        atomic_write_text(record_path, json.dumps({"sha256": sha256_bytes(data), "model_sha256": model_sha256}) + "\n")
    except OSError as error:  # a cache that cannot be written only costs the next process the derivation again
        log.warning("could not keep %s in the ONNX cache %s (%s); set %s to a writable folder", derivation,
                    onnx_cache_dir(), error, CACHE_ENV)
        return None, data
    return data_path, data
