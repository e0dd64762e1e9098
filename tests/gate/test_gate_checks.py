"""The gate's checks one by one, on synthetic signals and hand-made transcripts (no model needed)."""

import numpy as np
import pytest

from s2sbench.pipeline.core.records import Reason
from s2sbench.pipeline.items.task_config import GateConfig, SpeechRate
from s2sbench.pipeline.gate.verify import (
    longest_internal_silence_s,
    longest_repeat,
    score_normalized,
    signal_reasons,
    transcript_reasons,
    voiced_frames,
    voiced_span_s,
)

RATE = 16000


def tone(seconds: float) -> np.ndarray:
    t = np.arange(int(seconds * RATE)) / RATE
    return (0.3 * np.sin(2 * np.pi * 220 * t)).astype(np.float32)


def silence(seconds: float) -> np.ndarray:
    return np.zeros(int(seconds * RATE), dtype=np.float32)


def test_voiced_span_and_internal_silence():
    audio = np.concatenate([silence(0.5), tone(1.0), silence(2.0), tone(1.0), silence(0.3)])
    voiced = voiced_frames(audio, -40.0)
    assert voiced_span_s(voiced) == pytest.approx(4.0, abs=0.05)
    assert longest_internal_silence_s(voiced) == pytest.approx(2.0, abs=0.05)


def test_long_internal_silence_is_rejected_but_edges_are_not():
    gate = GateConfig()
    gapped = np.concatenate([tone(1.5), silence(2.0), tone(1.5)])
    padded = np.concatenate([silence(3.0), tone(3.0), silence(3.0)])
    assert [r.code for r in signal_reasons(gapped, 10, "wer", gate, "en")] == ["long_silence"]
    assert signal_reasons(padded, 10, "wer", gate, "en") == []


def test_speech_rate_bounds_per_language_with_a_default():
    gate = GateConfig(speech_rate={"en": SpeechRate(min_per_s=1.0, max_per_s=5.5)})
    two_seconds = tone(2.0)
    assert signal_reasons(two_seconds, 6, "wer", gate, "en") == []  # 3 words/s
    too_fast = signal_reasons(two_seconds, 20, "wer", gate, "en")  # 10 words/s
    assert too_fast and str(too_fast[0]).startswith("speech_rate: 10.00 words/s")
    assert str(signal_reasons(two_seconds, 1, "wer", gate, "en")[0]).startswith("speech_rate: 0.50 words/s")
    # a language without bounds in the gate falls back to the built-in default bounds
    assert signal_reasons(two_seconds, 8, "cer", gate, "zh") == []


def test_no_speech():
    reasons = signal_reasons(silence(1.0), 5, "wer", GateConfig(), "en")
    assert reasons[0].code == "no_speech"


def test_longest_repeat():
    assert longest_repeat("a b a b a b c".split()) == (3, ("a", "b"))
    assert longest_repeat(list("哈哈哈哈")) == (4, ("哈",))
    assert longest_repeat([]) == (0, ())


def test_looping_transcript_is_a_hallucination_unless_the_reference_loops_too():
    gate = GateConfig(max_error_rate=1.0, max_length_ratio=10)
    loop = score_normalized("thank you for watching", "thank you thank you thank you thank you for watching", "wer")
    reasons = transcript_reasons(loop, gate)
    assert Reason(code="repeated_ngram", detail="'thank you' x4") in reasons
    echo = score_normalized("no no no no no", "no no no no no", "wer")
    assert transcript_reasons(echo, gate) == []


def test_transcript_much_longer_than_the_reference():
    gate = GateConfig(max_error_rate=1.0)
    long = score_normalized("the end", "the end of the story was sad", "wer")
    assert "too_long: transcript 3.50x the reference length > 1.5" in map(str, transcript_reasons(long, gate))


def test_error_rate_threshold_is_strictly_greater():
    gate = GateConfig(max_error_rate=0.25)
    at_limit = score_normalized("a b c d", "a b c x", "wer")
    over = score_normalized("a b c d", "a b x x", "wer")
    assert transcript_reasons(at_limit, gate) == []
    assert transcript_reasons(over, gate) == [Reason(code="error_rate", detail="wer 0.500 > 0.25")]
