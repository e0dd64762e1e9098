"""ASR backends for the verification gate, chosen by name through a lazy registry.

``get_asr("faster-whisper", "tiny.en", device="cpu", compute_type="int8")`` returns a loaded engine; the same
arguments return the same instance, so a build loads each model once. Backend modules import only when used, and
third-party backends can register under the ``s2sbench.asr`` entry-point group.
"""

from __future__ import annotations

import importlib
from importlib.metadata import entry_points

from s2sbench.pipeline.asr.base import ASREngine, TranscriptionError

__all__ = ["ASR_ENGINES", "ASREngine", "TranscriptionError", "asr_engine_names", "get_asr"]

# name -> "module:class"
ASR_ENGINES: dict[str, str] = {
    "faster-whisper": "s2sbench.pipeline.asr.faster_whisper:FasterWhisperASR",
    "openai-whisper": "s2sbench.pipeline.asr.openai_whisper:OpenAIWhisperASR",
}

_LOADED: dict[tuple, ASREngine] = {}


def _registry() -> dict[str, str]:
    plugins = {entry.name: entry.value for entry in entry_points(group="s2sbench.asr")}
    return plugins | ASR_ENGINES


def asr_engine_names() -> list[str]:
    return sorted(_registry())


def get_asr(engine: str, model: str, **options: object) -> ASREngine:
    """A loaded ASR engine: ``engine`` by registry name, ``model`` a model name or a local path.

    Options go to the backend (``device``, ``compute_type``, ``batch_size``, ...). Instances are cached per arguments.
    """
    registry = _registry()
    if engine not in registry:
        raise ValueError(f"unknown ASR engine '{engine}' (known: {', '.join(sorted(registry))})")
    key = (engine, model, tuple(sorted((name, repr(value)) for name, value in options.items())))
    if key not in _LOADED:
        module_name, class_name = registry[engine].split(":")
        backend = getattr(importlib.import_module(module_name), class_name)
        _LOADED[key] = backend(model, **options)
    return _LOADED[key]
