"""The Japanese gate for real: a native Kokoro voice reading through OpenJTalk, heard by the offline Whisper base and
scored by KER over the kana reading; the same sentence read the espeak-ng way (every kanji as "Chinese letter") is
rejected."""

import pytest

from s2sbench.pipeline.catalog.tasks import load_task
from s2sbench.pipeline.catalog.voices import get_voice
from s2sbench.pipeline.gate.asr import get_asr
from s2sbench.pipeline.gate.verify import Verifier
from s2sbench.pipeline.speech.tts.base import with_options
from s2sbench.pipeline.text.normalize import normalize_for_tts

SENTENCE = "駅の近くに新しいパン屋さんができました。"


@pytest.fixture(scope="module")
def ja_gate():
    task = load_task("jcommonsenseqa")
    return task, Verifier(get_asr(task.gate.asr.engine, task.gate.asr.model, **task.gate.asr.options), task.gate, "ja")


def test_a_native_japanese_voice_passes_the_kana_gate(speak_clip, ja_gate):
    task, verifier = ja_gate
    clip, audio = speak_clip(normalize_for_tts(SENTENCE, "ja"), get_voice(task.voices[0]), item_id="ja-gate")
    check = verifier.check_batch([clip], [audio], attempt=1)[0]
    assert check.metric == "ker" and check.status == "passed", (check.transcript, check.error_rate)
    assert check.error_rate <= task.gate.max_error_rate and check.reference.startswith("エキノチカクニ")


def test_japanese_read_the_espeak_way_is_rejected(speak_clip, ja_gate):
    task, verifier = ja_gate
    misread = with_options(get_voice(task.voices[0]), lang="ja")  # espeak-ng's Japanese: "Chinese letter" per kanji
    clip, audio = speak_clip(normalize_for_tts(SENTENCE, "ja"), misread, item_id="ja-misread")
    check = verifier.check_batch([clip], [audio], attempt=1)[0]
    assert check.status == "rejected" and "error_rate" in {reason.code for reason in check.reasons}, check.transcript
