import numpy as np
import pytest
import soundfile

from s2sbench.pipeline.speech.audio import (AudioSettings, ClipStore, decode_audio, integrated_loudness, postprocess, resample,
                                     wav_bytes)
from s2sbench.pipeline.speech.tts.base import SynthesisError, Waveform


def tone(duration_s: float, rate: int, amplitude: float = 0.1, frequency_hz: float = 997.0) -> np.ndarray:
    t = np.arange(int(duration_s * rate)) / rate
    return (amplitude * np.sin(2 * np.pi * frequency_hz * t)).astype(np.float32)


@pytest.mark.parametrize("rate", [16000, 22050, 48000])
def test_loudness_meter_reads_a_997_hz_tone_like_bs1770(rate):
    # BS.1770: a full-scale 997 Hz sine reads -3.01 LUFS, so amplitude 0.1 (-20 dB) reads -23.01.
    assert integrated_loudness(tone(3.0, rate), rate) == pytest.approx(-23.01, abs=0.1)


def test_postprocess_resamples_trims_and_normalizes():
    rate = 22050
    speech = np.concatenate([np.zeros(rate), tone(1.0, rate, amplitude=0.5, frequency_hz=300), np.zeros(rate // 2)])
    out = postprocess(Waveform(speech, rate), AudioSettings(loudness_lufs=-26.0))
    assert out.dtype == np.float32
    assert out.size / 16000 == pytest.approx(1.0 + 2 * 0.1, abs=0.05)  # the tone plus 0.1 s padding each side
    assert integrated_loudness(out, 16000) == pytest.approx(-26.0, abs=0.3)


def test_resampling_is_librosas_soxr_hq_sample_for_sample():
    """The clips' bytes (and so the clip store's keys) stay what librosa.resample made of them."""
    import librosa

    from s2sbench.pipeline.speech.tts import get_engine
    from s2sbench.pipeline.catalog.voices import get_voice

    piper = get_engine("piper").synthesize("The kettle began to boil.", get_voice("piper-en-joe"), 0)
    rng = np.random.default_rng(0)
    signals = [(piper.samples, piper.sample_rate_hz)] + [
        ((0.1 * rng.standard_normal(size)).astype(np.float32), rate)
        for size, rate in [(1, 22050), (3, 24000), (999, 44100), (24001, 24000), (54321, 48000), (8001, 8000)]
    ]
    for samples, rate in signals:
        expected = librosa.resample(samples, orig_sr=rate, target_sr=16000, res_type="soxr_hq").astype(np.float32)
        assert resample(samples, rate, 16000).tobytes() == expected.tobytes(), (samples.size, rate)


def test_peak_ceiling_limits_the_gain():
    click = np.zeros(16000, dtype=np.float32)
    click[8000:8016] = 0.5  # very peaky, very quiet: full loudness gain would push it past full scale
    out = postprocess(Waveform(click, 16000), AudioSettings(loudness_lufs=-10.0, trim=False))
    assert np.max(np.abs(out)) == pytest.approx(10 ** (-1 / 20), rel=1e-3)


@pytest.mark.parametrize("samples, reason", [
    (np.zeros(0, dtype=np.float32), "no samples"),
    (np.zeros(16000, dtype=np.float32), "empty audio"),
    (tone(0.05, 16000), "empty audio"),
    (np.clip(tone(1.0, 16000, amplitude=3.0), -1, 1), "clipped"),
    (np.full(100, np.nan, dtype=np.float32), "NaN"),
])
def test_bad_audio_is_rejected(samples, reason):
    with pytest.raises(SynthesisError, match=reason):
        postprocess(Waveform(samples, 16000), AudioSettings())


def test_store_is_content_addressed_and_round_trips(tmp_path):
    store = ClipStore(tmp_path)
    audio = tone(0.5, 16000)
    first = store.put("a" * 64, audio, 16000, provenance={"voice": "v"})
    second = store.put("b" * 64, audio, 16000, provenance={"voice": "w"})
    assert first.path == second.path and first.audio_sha256 == second.audio_sha256
    assert len(list((tmp_path / "audio").rglob("*.wav"))) == 1
    assert not list(tmp_path.rglob("*.tmp"))
    assert store.lookup("a" * 64) == first
    assert store.lookup("c" * 64) is None
    np.testing.assert_allclose(store.load(first.path), audio, atol=1 / 32767)
    # the samples the gate hears are the ones a user decoding the file (or the dataset's copy) gets, to the bit:
    # Whisper's beam search hears 6% of borderline Mandarin clips differently at a gain of 32767/32768
    assert np.array_equal(store.load(first.path), soundfile.read(store.abspath(first.path), dtype="float32")[0])
    assert np.array_equal(store.load(first.path), decode_audio(store.abspath(first.path).read_bytes(), "clip")[0])
    assert store.abspath(first.path).read_bytes() == wav_bytes(audio, 16000)
    store.abspath(first.path).unlink()
    assert store.lookup("a" * 64) is None  # a key whose audio is gone is a miss, not a broken clip


def test_store_root_is_recorded_absolute(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    assert ClipStore("clips").root == tmp_path / "clips"  # a build report names it; later commands run elsewhere


def test_store_root_defaults_to_the_environment(tmp_path, monkeypatch):
    monkeypatch.setenv("S2SBENCH_CLIP_STORE", str(tmp_path / "shared"))
    assert ClipStore().root == tmp_path / "shared"
