"""ASR backends for the verification gate, chosen by name through a lazy registry.

``get_asr("faster-whisper", "tiny.en", device="cpu", compute_type="int8")`` returns a loaded engine; the same
arguments return the same instance, so a build loads each model once. Backend modules import only when used, and
third-party backends can register under the ``s2sbench.asr`` entry-point group.
"""

from __future__ import annotations

import inspect
import typing
from typing import Any

from s2sbench.pipeline.gate.asr.base import ASREngine, TranscriptionError
from s2sbench.pipeline.machine.cpu import keep_freed_memory
from s2sbench.pipeline.machine.device import engine_device
from s2sbench.pipeline.core.errors import BackendError, ConfigError, S2SBenchError, unknown_name
from s2sbench.pipeline.core.registry import Registry

__all__ = ["ASR_ENGINES", "ASREngine", "ASRLoadError", "TranscriptionError", "asr_engine_names", "check_asr_options",
           "get_asr"]

#: name -> engine class
ASR_ENGINES: Registry[type[ASREngine]] = Registry("ASR engine", {
    "faster-whisper": "s2sbench.pipeline.gate.asr.faster_whisper:FasterWhisperASR",
    "openai-whisper": "s2sbench.pipeline.gate.asr.openai_whisper:OpenAIWhisperASR",
}, group="s2sbench.asr")

_LOADED: dict[tuple, ASREngine] = {}


class ASRLoadError(BackendError):
    """An ASR model that cannot be loaded (an unknown model name, a broken checkpoint, a download that failed)."""


def asr_engine_names() -> list[str]:
    return ASR_ENGINES.names()


def check_asr_options(engine: str, options: dict[str, Any], where: str = "") -> type[ASREngine]:
    """The engine class, after checking ``options`` against the keyword arguments its constructor takes: their
    names, and their values against the annotations (exact types: ``"yes"`` is not ``true``)."""
    from pydantic import ConfigDict, TypeAdapter, ValidationError

    backend = ASR_ENGINES.get(engine, where)
    prefix = f"{where}: ASR engine {engine}: " if where else f"ASR engine {engine}: "
    parameters = inspect.signature(backend.__init__).parameters
    if any(p.kind is inspect.Parameter.VAR_KEYWORD for p in parameters.values()):
        return backend
    known = [name for name, p in parameters.items() if name not in ("self", "model") and p.kind is not p.VAR_POSITIONAL]
    try:
        hints = typing.get_type_hints(backend.__init__)
    except (NameError, TypeError):  # a third-party annotation that does not resolve at run time: names checked only
        hints = {}
    for name, value in options.items():
        if name not in known:
            raise ConfigError(prefix + unknown_name("option", name, known))
        if name in hints:
            try:
                TypeAdapter(hints[name], config=ConfigDict(strict=True)).validate_python(value)
            except ValidationError as error:
                raise ConfigError(f"{prefix}option '{name}': {error.errors()[0]['msg']}, got {value!r}") from None
    return backend


def get_asr(engine: str, model: str, **options: object) -> ASREngine:
    """A loaded ASR engine: ``engine`` by registry name, ``model`` a model name or a local path.

    Options go to the backend (``device``, ``compute_type``, ``batch_size``, ...). Instances are cached per arguments.
    A model that cannot load is an :class:`ASRLoadError` naming the engine and the model.
    """
    where = options.get("device") or engine_device()  # a process's engines follow --device (S2SBENCH_DEVICE)
    key = (engine, model, where, tuple(sorted((name, repr(value)) for name, value in options.items())))
    if key not in _LOADED:
        backend = check_asr_options(engine, options)  # a cached instance's arguments were checked when it loaded
        keep_freed_memory()  # an encoder pass allocates and frees large buffers clip after clip
        try:
            _LOADED[key] = backend(model, **options)
        except S2SBenchError:
            raise
        except (ValueError, OSError, RuntimeError) as error:  # what the Whisper libraries raise for a bad model
            raise ASRLoadError(f"{engine} cannot load ASR model '{model}': {error}") from error
    return _LOADED[key]
