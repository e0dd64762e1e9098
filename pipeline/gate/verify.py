"""The ASR gate: normalize, score a transcript against the text it should say, and decide whether a clip is kept.

- Normalization: English through Whisper's English normalizer (numbers, spelling variants, contractions); Japanese
  into its kana reading (OpenJTalk, :mod:`s2sbench.pipeline.text.japanese`); Chinese (and other languages written
  without spaces) by removing punctuation and spaces, after converting traditional to simplified characters (OpenCC)
  and writing Latin letters as their Chinese names for Chinese; every other language through Whisper's basic
  normalizer.
- Scoring: CER for languages written without spaces, WER elsewhere, all through jiwer, keeping the substitutions,
  deletions and insertions. Mandarin may instead be scored by SER, the error rate over tonal pinyin syllables: what
  a listener hears, so a judge that writes a homophone (李华 -> 立滑, 一只 -> 一支) is not taken for a voice that said
  the wrong thing, while a wrong syllable or tone still counts. Japanese is scored by KER, the error rate over the
  morae of the kana reading: a kanji or kana spelling the judge chooses for a word it heard is the same reading.
- Gate: the error-rate threshold, the speech rate over the voiced span, the longest internal silence, and two
  hallucination checks (an n-gram looping, a transcript much longer than the reference). A clip whose language the
  ASR model cannot transcribe is ``unverified``, never silently passed.

The per-attempt records (:class:`ClipCheck`) are the audit; :func:`summarize_checks` condenses them for the build
report. Re-verifying an existing build lives in :mod:`s2sbench.pipeline.run.reverify`.
"""

from __future__ import annotations

import functools
import logging
import re
import unicodedata
from collections import Counter, defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from s2sbench.pipeline.gate.asr.base import ASREngine, TranscriptionError
from s2sbench.pipeline.core.errors import ConfigError, EnvironmentFault
from s2sbench.pipeline.text.languages import CHINESE_SCRIPT_LANGUAGES, base_language, error_metric, gate_metric, is_unspaced
from s2sbench.pipeline.text.japanese import kana_reading, morae
from s2sbench.pipeline.text.normalize import chinese_for_cer
from s2sbench.pipeline.core.records import Clip, ClipCheck, Item, Reason
from s2sbench.pipeline.items.task_config import GateConfig, SpeechRate, TaskConfig
from s2sbench.pipeline.text.zh_script import spell_latin

log = logging.getLogger(__name__)

SAMPLE_RATE_HZ = 16000
FRAME_S = 0.02  # analysis frame for the silence and speech-rate checks
MAX_NGRAM = 4
HISTOGRAM_EDGES = (0.0, 0.05, 0.1, 0.15, 0.2, 0.3, 0.5, 1.0)


@functools.cache
def _whisper_normalizers():
    """openai-whisper's ``whisper.normalizers`` package, loaded from its files under a name of its own: importing it
    as ``whisper.normalizers`` runs ``whisper/__init__.py`` first, which imports torch (3-5 s of CPU in every process
    that checks a transcript) for modules that need only ``regex``."""
    import importlib.util
    import sys

    package = importlib.util.find_spec("whisper")  # finding a top-level package runs none of it
    if package is None or not package.submodule_search_locations:
        raise EnvironmentFault("openai-whisper is not installed: its text normalizers score every transcript")
    folder = Path(package.submodule_search_locations[0]) / "normalizers"
    name = "s2sbench.pipeline.gate._whisper_normalizers"  # its own relative imports resolve under this name
    spec = importlib.util.spec_from_file_location(name, folder / "__init__.py", submodule_search_locations=[str(folder)])
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


@functools.cache
def _english_normalizer():
    return _whisper_normalizers().EnglishTextNormalizer()


@functools.cache
def _basic_normalizer():
    return _whisper_normalizers().BasicTextNormalizer()


@functools.cache
def _to_simplified():
    from opencc import OpenCC

    return OpenCC("t2s").convert


def _strip_punctuation(text: str) -> str:
    # Unicode punctuation (P*) and symbols (S*) go; letters, digits and marks stay
    return "".join(char for char in text if not unicodedata.category(char).startswith(("P", "S")))


def written_form(text: str) -> str:
    """A text as the judge writes it, for the reference margin: NFKC, without punctuation, symbols or spaces (the
    transcript has none of the question's ？, and each would cost nats that say nothing of the words)."""
    return re.sub(r"\s+", "", _strip_punctuation(unicodedata.normalize("NFKC", text)))


def normalize(text: str, language: str) -> str:
    """The text as scored: for CER languages a string without spaces, otherwise words separated by one space."""
    code = base_language(language)
    if code == "ja":
        return kana_reading(text)
    if is_unspaced(code):
        if code == "zh":  # numbers, dates and currency read out on both sides, as the TTS read them: 3个 == 三个
            text = chinese_for_cer(text)
        text = unicodedata.normalize("NFKC", text)
        if code == "zh":  # a letter read as its Chinese name and written as the letter (西 / C) is the same letter;
            # before lower case, which a genotype's reading keeps (Aa: 大诶小诶)
            text = spell_latin(text)
        text = text.lower()
        if code in CHINESE_SCRIPT_LANGUAGES:
            text = _to_simplified()(text)
        return re.sub(r"\s+", "", _strip_punctuation(text))
    normalizer = _english_normalizer() if code == "en" else _basic_normalizer()
    return " ".join(normalizer(text).split())


METRICS = ("wer", "cer", "ser", "ker")
UNIT_NAMES = {"wer": "words", "cer": "chars", "ser": "syllables", "ker": "morae"}


@functools.cache
def _tonal_syllables():
    from pypinyin import Style, lazy_pinyin

    # a character with no reading (a digit or letter the normalization left) counts as one unit of its own
    return functools.partial(lazy_pinyin, style=Style.TONE3, neutral_tone_with_five=True, errors=list)


def units(normalized: str, metric: str) -> list[str]:
    """What the metric counts: words for WER, characters (spaces excluded) for CER, tonal pinyin syllables (``hua2``)
    for SER, the morae of a kana reading (``キャ``, ``ッ``) for KER."""
    if metric == "cer":
        return list(normalized.replace(" ", ""))
    if metric == "ser":
        return _tonal_syllables()(normalized.replace(" ", ""))
    if metric == "ker":
        return morae(normalized)
    return normalized.split()


@dataclass(frozen=True)
class ErrorRate:
    metric: str  # "wer" | "cer" | "ser" | "ker"
    rate: float  # (S + D + I) / reference length, a fraction (can exceed 1 with many insertions)
    substitutions: int
    deletions: int
    insertions: int
    reference: str  # normalized
    hypothesis: str  # normalized


def score_normalized(reference: str, hypothesis: str, metric: str) -> ErrorRate:
    """WER, CER or SER of already-normalized strings through jiwer."""
    import jiwer

    if metric not in METRICS:
        raise ValueError(f"unknown metric '{metric}' (known: {', '.join(sorted(METRICS))})")
    if not units(reference, metric):
        # jiwer has no answer for an empty reference: nothing to say, so any word heard is an error
        inserted = len(units(hypothesis, metric))
        return ErrorRate(metric, float(inserted > 0), 0, 0, inserted, reference, hypothesis)
    if metric == "cer":
        out = jiwer.process_characters(reference, hypothesis)
        rate = out.cer
    else:
        out = jiwer.process_words(" ".join(units(reference, metric)), " ".join(units(hypothesis, metric)))
        rate = out.wer
    return ErrorRate(metric, float(rate), out.substitutions, out.deletions, out.insertions, reference, hypothesis)


def error_rate(reference: str, hypothesis: str, language: str, metric: str | None = None) -> ErrorRate:
    """Normalize both texts for ``language`` and score them: KER for ja, CER for zh and other unspaced scripts, else
    WER."""
    metric = metric or error_metric(language)
    return score_normalized(normalize(reference, language), normalize(hypothesis, language), metric)


# --- signal checks -------------------------------------------------------------------------------------------------


def voiced_frames(audio: np.ndarray, threshold_db: float) -> np.ndarray:
    """One flag per 20 ms frame: louder than ``threshold_db`` below the loudest frame."""
    size = int(FRAME_S * SAMPLE_RATE_HZ)
    count = len(audio) // size
    if count == 0:
        return np.zeros(0, dtype=bool)
    rms = np.sqrt(np.mean(np.square(audio[: count * size].reshape(count, size), dtype=np.float64), axis=1))
    peak = rms.max()
    if peak <= 0:
        return np.zeros(count, dtype=bool)
    return 20 * np.log10(np.maximum(rms, 1e-12) / peak) > threshold_db


def voiced_span_s(voiced: np.ndarray) -> float:
    """Seconds from the first voiced frame to the last."""
    indices = np.flatnonzero(voiced)
    return 0.0 if indices.size == 0 else float(indices[-1] - indices[0] + 1) * FRAME_S


def longest_internal_silence_s(voiced: np.ndarray) -> float:
    """The longest run of silent frames between the first and the last voiced frame, in seconds."""
    indices = np.flatnonzero(voiced)
    if indices.size < 2:
        return 0.0
    return float(np.diff(indices).max() - 1) * FRAME_S


def longest_repeat(tokens: Sequence[str]) -> tuple[int, tuple[str, ...]]:
    """The most back-to-back copies of any n-gram (n <= 4) and that n-gram: ``a b a b a b`` -> (3, ('a', 'b'))."""
    best: tuple[int, tuple[str, ...]] = (1 if tokens else 0, tuple(tokens[:1]))
    for size in range(1, MAX_NGRAM + 1):
        for start in range(len(tokens) - 2 * size + 1):
            gram = tuple(tokens[start : start + size])
            copies, position = 1, start + size
            while tuple(tokens[position : position + size]) == gram:
                copies, position = copies + 1, position + size
            if copies > best[0]:
                best = (copies, gram)
    return best


def speech_rate_bounds(gate: GateConfig, language: str) -> SpeechRate:
    code = base_language(language)
    return gate.speech_rate.get(code) or gate.speech_rate.get("default") or SpeechRate(min_per_s=0.7, max_per_s=9.0)


def signal_reasons(audio: np.ndarray, reference_units: int, metric: str, gate: GateConfig, language: str) -> list[Reason]:
    """Reasons a clip fails the checks that need no ASR: no speech, speech rate, long internal silence."""
    voiced = voiced_frames(audio, gate.silence_threshold_db)
    span_s = voiced_span_s(voiced)
    if span_s == 0:
        return [Reason(code="no_speech",
                       detail=f"nothing above {gate.silence_threshold_db:g} dB in {len(audio) / SAMPLE_RATE_HZ:.2f} s")]
    reasons = []
    bounds = speech_rate_bounds(gate, language)
    rate = reference_units / span_s
    if not bounds.min_per_s <= rate <= bounds.max_per_s:
        reasons.append(Reason(code="speech_rate", detail=f"{rate:.2f} {UNIT_NAMES[metric]}/s over {span_s:.2f} s voiced, outside "
                                                         f"[{bounds.min_per_s:g}, {bounds.max_per_s:g}]"))
    silence_s = longest_internal_silence_s(voiced)
    if silence_s > gate.max_internal_silence_s:
        reasons.append(Reason(code="long_silence", detail=f"{silence_s:.2f} s > {gate.max_internal_silence_s:g} s"))
    return reasons


def transcript_reasons(score: ErrorRate, gate: GateConfig) -> list[Reason]:
    """Reasons a transcript fails: error rate over the threshold, a looping n-gram, a transcript far too long."""
    reasons = []
    if score.rate > gate.max_error_rate:
        reasons.append(Reason(code="error_rate", detail=f"{score.metric} {score.rate:.3f} > {gate.max_error_rate:g}"))
    reference, hypothesis = units(score.reference, score.metric), units(score.hypothesis, score.metric)
    copies, gram = longest_repeat(hypothesis)
    if copies > gate.max_ngram_repeats and copies > longest_repeat(reference)[0]:
        joiner = " " if score.metric in ("wer", "ser") else ""
        reasons.append(Reason(code="repeated_ngram", detail=f"'{joiner.join(gram)}' x{copies}"))
    ratio = len(hypothesis) / max(len(reference), 1)
    if ratio > gate.max_length_ratio:
        reasons.append(Reason(code="too_long",
                              detail=f"transcript {ratio:.2f}x the reference length > {gate.max_length_ratio:g}"))
    return reasons


# --- the gate ------------------------------------------------------------------------------------------------------


def unverified_reason(asr: ASREngine | None, language: str) -> Reason | None:
    """Why clips of ``language`` checked with ``asr`` can only be ``unverified``, or None when the model hears them."""
    if asr is None:
        return Reason(code="unverified", detail="no ASR model configured; signal checks only")
    if not asr.supports(base_language(language)):
        known = ", ".join(sorted(asr.languages() or []))
        return Reason(code="unverified", detail=f"ASR model {asr.model_id} cannot transcribe '{language}' (it knows: "
                                                f"{known}); signal checks only")  # fmt: skip
    return None


def gate_warning(task: TaskConfig) -> str:
    """Said before a build starts: why ``task``'s clips would be kept ``unverified`` (loads its gate's ASR), or ""."""
    from s2sbench.pipeline.gate.asr import get_asr

    asr = get_asr(task.gate.asr.engine, task.gate.asr.model, **task.gate.asr.options)
    reason = unverified_reason(asr, task.language)
    return f"task {task.name} (language {task.language}): every clip will be {reason}" if reason else ""


def asks_margin(gate: GateConfig, check: ClipCheck) -> bool:
    """Whether ``gate`` asks the judge for ``check``'s reference margin: the gate keeps clips on the reference, and
    the clip failed on its error rate alone and has no margin yet."""
    return (gate.reference_margin_nats is not None and check.status == "rejected" and check.reference_margin is None
            and all(reason.code == "error_rate" for reason in check.reasons))


class Verifier:
    """Checks clips of one language against one gate; ``asr`` None (or a model without the language) checks only
    the signal and marks passing clips ``unverified``."""

    def __init__(self, asr: ASREngine | None, gate: GateConfig, language: str):
        self.asr = asr
        self.gate = gate
        self.language = language
        self.metric = gate_metric(gate.metric, language)
        if self.metric != gate.metric:
            log.warning("gate metric %s ignored for language %s: scored by %s", gate.metric, language, self.metric.upper())
        self.unverified_reason = unverified_reason(asr, language)  # why passing clips are only "unverified"
        if gate.reference_margin_nats is not None and asr is not None and type(asr).score_texts is ASREngine.score_texts:
            raise ConfigError(f"gate.reference_margin_nats needs an ASR engine that can score a given text "
                              f"(faster-whisper, openai-whisper); {asr.model_id} cannot")
        if self.unverified_reason is not None:
            log.warning("%s", self.unverified_reason)

    @property
    def asr_model(self) -> str:
        return self.asr.model_id if self.asr is not None else "none"

    def check_batch(self, clips: Sequence[Clip], audios: Sequence[np.ndarray], attempt: int) -> list[ClipCheck]:
        """One :class:`ClipCheck` per clip; ``audios`` are the clips' samples as float32 mono at 16 kHz."""
        if len(clips) != len(audios):
            raise ValueError(f"check_batch: {len(clips)} clips but {len(audios)} audio arrays")
        for clip in clips:
            if clip.sample_rate_hz != SAMPLE_RATE_HZ:
                raise ValueError(
                    f"clip {clip.item_id} {clip.role}: sample rate {clip.sample_rate_hz} Hz, the gate needs {SAMPLE_RATE_HZ}"
                )
        audios = [np.asarray(audio, dtype=np.float32).reshape(-1) for audio in audios]
        references = [normalize(clip.text, self.language) for clip in clips]
        reasons = [
            signal_reasons(audio, len(units(reference, self.metric)), self.metric, self.gate, self.language)
            if np.isfinite(audio).all()
            else [Reason(code="no_speech", detail="audio has NaN or infinite samples")]
            for audio, reference in zip(audios, references)
        ]
        heard = [index for index, found in enumerate(reasons) if not any(r.code == "no_speech" for r in found)]
        transcripts = self._transcribe([audios[index] for index in heard]) if self.unverified_reason is None else []
        by_index = dict(zip(heard, transcripts))
        return [self._check(clip, attempt, references[index], reasons[index], by_index.get(index))
                for index, clip in enumerate(clips)]

    def on_reference(self, check: ClipCheck) -> ClipCheck | None:
        """``check`` passed on its reference margin, or None when the gate keeps no clip that way or the judge found
        the reference too unlikely. The speak stage asks this only after every attempt of the clip failed."""
        limit = self.gate.reference_margin_nats
        if limit is None or check.reference_margin is None or check.reference_margin < -limit:
            return None
        return check.model_copy(update={"passed": True, "status": "passed", "reasons": (), "kept_on_reference": True})

    def with_margin(self, check: ClipCheck, audio: np.ndarray) -> ClipCheck:
        """``check`` with the judge's reference margin when the gate asks for it and the error rate alone failed the
        clip (a clip with no speech, a loop or a transcript far too long is never kept on it). It costs the judge
        another pass over the clip, so it is asked only of clips whose every attempt failed, and once."""
        if not asks_margin(self.gate, check):
            return check
        # in the judge's own script: Japanese is normalized into kana readings, which Whisper never writes, and scored so
        # every reading came out likelier than the transcript (8 of 8 clips on the validation split, up to +39 nats)
        texts = ([written_form(check.written), written_form(check.transcript)] if check.written
                 else [check.reference, check.hypothesis])
        try:
            scores = self.asr.score_texts(audio, texts, self.language)
        except TranscriptionError as error:
            log.warning("clip %s: no reference margin: %s", check.id, error)
            return check
        return check if scores is None else check.model_copy(update={"reference_margin": round(scores[0] - scores[1], 3)})

    def _transcribe(self, audios: list[np.ndarray]) -> list[str | TranscriptionError]:
        """Transcripts in one batch; if the batch fails, clip by clip, so one bad clip only fails itself."""
        if not audios:
            return []
        try:
            return list(self.asr.transcribe(audios, self.language))
        except TranscriptionError:
            results: list[str | TranscriptionError] = []
            for audio in audios:
                try:
                    results.append(self.asr.transcribe([audio], self.language)[0])
                except TranscriptionError as error:
                    results.append(error)
            return results

    def _check(
        self, clip: Clip, attempt: int, reference: str, reasons: list[Reason], transcript: str | TranscriptionError | None
    ) -> ClipCheck:
        fields = dict(
            item_id=clip.item_id, role=clip.role, attempt=attempt, clip_key=clip.key, voice=clip.voice, seed=clip.seed,
            asr_model=self.asr_model, reference=reference, metric="none", hypothesis="", transcript="", error_rate=None,
            written=clip.text if self.metric == "ker" else "",
        )
        reasons = list(reasons)
        if isinstance(transcript, TranscriptionError):
            reasons.append(Reason(code="transcription_failed", detail=str(transcript)))
        elif transcript is not None:
            score = score_normalized(reference, normalize(transcript, self.language), self.metric)
            reasons.extend(transcript_reasons(score, self.gate))
            fields |= dict(
                metric=score.metric, hypothesis=score.hypothesis, transcript=transcript, error_rate=score.rate,
                substitutions=score.substitutions, deletions=score.deletions, insertions=score.insertions,
            )
        if reasons:
            status, found = "rejected", reasons
        elif self.unverified_reason is not None:
            status, found = "unverified", [self.unverified_reason]
        else:
            status, found = "passed", []
        return ClipCheck(**fields, passed=status == "passed", status=status, reasons=found)


# --- the audit summary ---------------------------------------------------------------------------------------------


def distribution(rates: Sequence[float]) -> dict:
    """Summary statistics and a histogram of error rates (rates above 1 fall in the last bin)."""
    if not rates:
        return {"n": 0}
    values = np.asarray(rates, dtype=np.float64)
    counts, _ = np.histogram(np.clip(values, 0.0, 1.0), bins=HISTOGRAM_EDGES)
    return {
        "n": int(values.size),
        "mean": float(values.mean()),
        "median": float(np.median(values)),
        "p90": float(np.quantile(values, 0.9)),
        "p95": float(np.quantile(values, 0.95)),
        "max": float(values.max()),
        "zero_fraction": float((values == 0).mean()),
        "histogram": {"edges": list(HISTOGRAM_EDGES), "counts": counts.tolist()},
    }


def final_checks(checks: Iterable[ClipCheck]) -> list[ClipCheck]:
    """What decided whether each clip (item, voice, role) was kept: its attempt kept on the reference's likelihood, else
    its last attempt."""
    last: dict[tuple[str, str, str], ClipCheck] = {}
    for check in checks:
        key = (check.item_id, check.voice, check.role)
        if key not in last or (check.kept_on_reference, check.attempt) >= (last[key].kept_on_reference, last[key].attempt):
            last[key] = check
    return list(last.values())


def _reason_counts(checks: Iterable[ClipCheck]) -> dict[str, int]:
    return dict(Counter(reason.code for check in checks if check.status == "rejected" for reason in check.reasons))


def _group_summary(checks: list[ClipCheck]) -> dict:
    final = final_checks(checks)
    return {
        "attempts": len(checks),
        "clips": len(final),
        "status": dict(Counter(check.status for check in checks)),
        "final_status": dict(Counter(check.status for check in final)),
        "metrics": sorted({check.metric for check in checks}),
        "error_rate": distribution([check.error_rate for check in checks if check.error_rate is not None]),
        "final_error_rate": distribution([check.error_rate for check in final if check.error_rate is not None]),
        "reject_reasons": _reason_counts(checks),
        "final_reject_reasons": _reason_counts(final),
        "retried_clips": sum(1 for check in final if check.attempt > 1),
        "kept_on_reference": sum(check.kept_on_reference for check in final),
    }


def summarize_checks(checks: Iterable[ClipCheck], items_by_id: Mapping[str, Item]) -> dict:
    """The verification part of ``build_report.json``: overall and per (task, language, voice) counts, error-rate
    distributions over every attempt and over each clip's final attempt, and the reject reasons."""
    checks = list(checks)
    groups: dict[tuple[str, str, str], list[ClipCheck]] = defaultdict(list)
    for check in checks:
        item = items_by_id.get(check.item_id)
        if item is None:
            raise ValueError(f"verification check {check.id}: item '{check.item_id}' is not among the build's items")
        groups[(item.task, item.language, check.voice)].append(check)
    return {
        "asr_models": sorted({check.asr_model for check in checks}),
        "overall": _group_summary(checks),
        "groups": [
            {"task": task, "language": language, "voice": voice, **_group_summary(members)}
            for (task, language, voice), members in sorted(groups.items())
        ],
    }

