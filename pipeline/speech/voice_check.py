"""Whether a voice reads its language, in a minute: a few sentences spoken, heard back by a judge, scored.

:func:`check_voice` speaks the :data:`CHECK_SENTENCES` of the voice's language (each with a number, a date or a word
that trips a wrong reading), post-processes them as a build does and, with a judge, transcribes each clip and scores
it by the gate's metric for the language (WER, Mandarin SER, Japanese KER). A voice that reads another language's
way (espeak-ng saying "Chinese letter" for every kanji) shows at once in what the judge heard.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field

import numpy as np

from s2sbench.pipeline.gate.asr import get_asr
from s2sbench.pipeline.gate.asr.base import ASREngine, TranscriptionError
from s2sbench.pipeline.gate.verify import error_rate, units
from s2sbench.pipeline.speech.audio import AudioSettings, postprocess
from s2sbench.pipeline.speech.tts import get_engine
from s2sbench.pipeline.speech.tts.base import Voice
from s2sbench.pipeline.text.languages import base_language, gate_metric
from s2sbench.pipeline.text.normalize import normalize_for_tts

CHECK_SENTENCES = {
    "en": ["On 3 May 2024, the quick brown fox paid $5 to jump over the lazy dog.",
           "The children walked to the park after school and played until dinner.",
           "She opened the window because the room was too warm."],
    "zh": ["2024年5月3日，小明花了5元买了2个苹果。", "今天天气很好，我们一起去公园散步吧。", "他每天早上七点起床，然后去学校上课。"],
    "ja": ["2024年5月3日に、私は3本のペンを買いました。", "砂漠で生きるために必要なものは何ですか？",
           "駅の近くに新しいパン屋さんができました。", "明日は雨が降るので、傘を持って行きましょう。"],
    "es": ["El 3 de mayo de 2024 compré dos libros en la tienda.", "Los niños jugaron en el parque hasta la noche."],
}
FALLBACK_SENTENCES = ["1, 2, 3."]
# the metric a language's shipped tasks are gated by, where it is not the language's default
GATE_METRIC = {"zh": "ser"}
PASS_RATE = 0.15  # the shipped gates' threshold: a sentence at or under it would be kept


def default_judge(language: str) -> tuple[str, str]:
    """(ASR engine, model) that hears ``language`` offline: Whisper tiny.en for English, the multilingual Whisper base
    (installed by `make setup`) for every other language."""
    return ("faster-whisper", "tiny.en") if base_language(language) == "en" else ("faster-whisper", "base")


@dataclass(frozen=True)
class HeardSentence:
    text: str  # as the voice read it (normalized)
    transcript: str
    error_rate: float
    errors: int
    reference_units: int


@dataclass
class VoiceCheck:
    voice: str
    speech_s: float
    real_time_factor: float
    metric: str = ""
    judge: str = ""  # "engine model", or "" when not judged
    heard: list[HeardSentence] = field(default_factory=list)
    clips: list[np.ndarray] = field(default_factory=list, repr=False)  # 16 kHz, one per sentence

    @property
    def overall_error_rate(self) -> float | None:
        """Errors over reference units, all sentences pooled (a long sentence weighs more)."""
        total = sum(sentence.reference_units for sentence in self.heard)
        return sum(sentence.errors for sentence in self.heard) / total if total else None

    @property
    def sentences_passed(self) -> int:
        return sum(sentence.error_rate <= PASS_RATE for sentence in self.heard)


def check_sentences(language: str) -> list[str]:
    return CHECK_SENTENCES.get(base_language(language), FALLBACK_SENTENCES)


def judge_for(language: str, engine: str | None = None, model: str | None = None) -> ASREngine:
    default_engine, default_model = default_judge(language)
    engine, model = engine or default_engine, model or default_model
    options = {"beam_size": 5} if engine == "faster-whisper" else {}
    return get_asr(engine, model, **options)


def check_voice(voice: Voice, judge: ASREngine | None = None) -> VoiceCheck:
    """Speak the check sentences of ``voice``'s language; with a ``judge``, transcribe and score each one. A voice
    that cannot synthesize raises the engine's :class:`SynthesisError`; a judge that fails raises
    :class:`TranscriptionError`."""
    engine = get_engine(voice.engine)
    settings = AudioSettings()
    texts = [normalize_for_tts(sentence, voice.language) for sentence in check_sentences(voice.language)]
    clips, engine_s, raw_s = [], 0.0, 0.0
    for text in texts:
        started = time.perf_counter()
        wave = engine.synthesize(text, voice, seed=0)
        engine_s += time.perf_counter() - started
        raw_s += wave.samples.size / wave.sample_rate_hz
        clips.append(postprocess(wave, settings))
    check = VoiceCheck(voice=voice.id, speech_s=sum(clip.size for clip in clips) / settings.sample_rate_hz,
                       real_time_factor=engine_s / raw_s if raw_s else float("nan"), clips=clips)
    if judge is None:
        return check
    code = base_language(voice.language)
    check.metric = gate_metric(GATE_METRIC.get(code, "wer"), voice.language)
    check.judge = judge.model_id
    transcripts = judge.transcribe(clips, voice.language)
    for text, transcript in zip(texts, transcripts):
        if isinstance(transcript, TranscriptionError):
            raise transcript
        score = error_rate(text, transcript, voice.language, check.metric)
        check.heard.append(HeardSentence(text, transcript, score.rate, score.substitutions + score.deletions
                                         + score.insertions, len(units(score.reference, check.metric))))
    return check
