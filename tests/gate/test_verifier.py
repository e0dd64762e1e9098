"""The Verifier on real TTS clips and the real offline Whisper tiny.en."""

import numpy as np
import pytest

from s2sbench.pipeline.items.task_config import GateConfig
from s2sbench.pipeline.gate.verify import Verifier

TEXT = "The old fisherman rowed his boat across the quiet lake at dawn."
OTHER = "My sister bought twelve green apples at the market yesterday."


@pytest.fixture(scope="module")
def spoken(speak_clip, piper_voice):
    return speak_clip(TEXT, piper_voice, item_id="v1")


def test_right_text_is_kept_and_wrong_text_rejected(spoken, fw_asr):
    clip, audio = spoken
    mislabeled = clip.model_copy(update={"role": "candidate:0", "text": OTHER})
    kept, rejected = Verifier(fw_asr, GateConfig(), "en").check_batch([clip, mislabeled], [audio, audio], attempt=1)
    assert (kept.status, kept.passed, kept.reason) == ("passed", True, "")
    assert kept.metric == "wer" and kept.error_rate <= 0.15
    assert kept.reference == "the old fisherman rowed his boat across the quiet lake at dawn"
    assert kept.transcript and kept.asr_model == fw_asr.model_id and kept.clip_key == clip.key
    assert (rejected.status, rejected.passed) == ("rejected", False)
    assert rejected.reason.startswith("error_rate: wer ")
    assert rejected.error_rate > 0.5 and rejected.hypothesis == kept.hypothesis
    n_reference = len(rejected.reference.split())
    assert rejected.error_rate == pytest.approx(
        (rejected.substitutions + rejected.deletions + rejected.insertions) / n_reference
    )


def test_a_long_pause_inside_a_clip_is_rejected(spoken, fw_asr):
    clip, audio = spoken
    half = len(audio) // 2
    paused = np.concatenate([audio[:half], np.zeros(2 * 16000, np.float32), audio[half:]])
    (check,) = Verifier(fw_asr, GateConfig(), "en").check_batch([clip], [paused], attempt=2)
    assert check.status == "rejected" and check.attempt == 2
    assert "long_silence: " in check.reason


def test_a_language_the_model_cannot_transcribe_is_unverified_not_passed(speak_clip, zh_voice, fw_asr):
    clip, audio = speak_clip("我们今天去公园散步。", zh_voice, item_id="z1")
    verifier = Verifier(fw_asr, GateConfig(), "zh")
    assert verifier.metric == "cer"  # the gate says wer (its default): Chinese is scored by CER regardless
    (check,) = verifier.check_batch([clip], [audio], attempt=1)
    assert (check.status, check.passed, check.metric, check.error_rate) == ("unverified", False, "none", None)
    assert "cannot transcribe 'zh'" in check.reason and check.reference == "我们今天去公园散步"


def test_without_asr_only_signal_checks_run(spoken):
    clip, audio = spoken
    verifier = Verifier(None, GateConfig(), "en")
    good, silent = verifier.check_batch([clip, clip], [audio, np.zeros(16000, np.float32)], attempt=1)
    assert good.status == "unverified" and good.asr_model == "none"
    assert silent.status == "rejected" and silent.reason.startswith("no_speech")


def test_batch_errors_name_the_problem(spoken):
    clip, audio = spoken
    verifier = Verifier(None, GateConfig(), "en")
    with pytest.raises(ValueError, match="2 clips but 1 audio"):
        verifier.check_batch([clip, clip], [audio], attempt=1)
    with pytest.raises(ValueError, match="sample rate 22050 Hz"):
        verifier.check_batch([clip.model_copy(update={"sample_rate_hz": 22050})], [audio], attempt=1)
