"""What the two Whisper backends share: language codes, the 30-second window, batching and option checks.

Clips up to 30 s (almost every benchmark clip) are zero-padded to one Whisper window (faster-whisper's
``window_pad_s`` cuts it to the clip and some silence) and decoded in batches with one greedy pass (or a beam search,
``beam_size``), no timestamps and no temperature fallback, so both backends decode the same way. Longer clips go through
the backend's own long-form transcription, one at a time.
"""

from __future__ import annotations

import abc
from collections.abc import Sequence

import numpy as np

from s2sbench.pipeline.gate.asr.base import ASREngine, TranscriptionError
from s2sbench.pipeline.core.errors import ConfigError
from s2sbench.pipeline.text.languages import base_language

SAMPLE_RATE_HZ = 16000
WINDOW_SAMPLES = 30 * SAMPLE_RATE_HZ
MAX_NEW_TOKENS = 224  # openai-whisper's default sample_len (n_text_ctx // 2); both backends use it

ENGLISH_ONLY = {"en"}  # what ``*.en`` models transcribe


def whisper_language(language: str) -> str:
    """A task language (``en``, ``zh-CN``, ``ZH``) as a Whisper language code (``en``, ``zh``)."""
    return base_language(language)


def pad_to_window(clip: np.ndarray) -> np.ndarray:
    padded = np.zeros(WINDOW_SAMPLES, dtype=np.float32)
    padded[: len(clip)] = clip
    return padded


def check_clip(clip: np.ndarray, index: int) -> np.ndarray:
    clip = np.asarray(clip, dtype=np.float32)
    if clip.ndim != 1:
        raise TranscriptionError(f"clip {index}: expected mono audio (1-D), got shape {clip.shape}")
    if clip.size == 0:
        raise TranscriptionError(f"clip {index}: no samples")
    if not np.isfinite(clip).all():
        raise TranscriptionError(f"clip {index}: audio has NaN or infinite samples")
    return clip


class WhisperASR(ASREngine):
    """A Whisper backend: subclasses load the model and implement the two decoding hooks."""

    def __init__(self, model: str, device: str, compute_type: str, batch_size: int, english_only: bool, beam_size: int = 1):
        if batch_size < 1:
            raise ConfigError(f"{self.name}: batch_size must be >= 1, got {batch_size}")
        if beam_size < 1:
            raise ConfigError(f"{self.name}: beam_size must be >= 1, got {beam_size}")
        self.beam_size = beam_size
        self.model_name = model
        self.device = device
        self.compute_type = compute_type
        self.batch_size = batch_size
        self.english_only = english_only

    @property
    def beam_suffix(self) -> str:
        """What a beam search adds to the model id (nothing for greedy decoding)."""
        return f":beam{self.beam_size}" if self.beam_size > 1 else ""

    def languages(self) -> set[str] | None:
        return set(ENGLISH_ONLY) if self.english_only else self.multilingual_languages()

    @abc.abstractmethod
    def multilingual_languages(self) -> set[str]:
        """The language codes of a multilingual model of this backend."""

    def supports(self, language: str) -> bool:
        return super().supports(whisper_language(language))

    @abc.abstractmethod
    def _decode_window(self, clips: Sequence[np.ndarray], language: str) -> list[str]:
        """Greedy-decode clips that fit one 30-second window, as one batch."""

    def _decode_short(self, clips: Sequence[np.ndarray], language: str) -> list[str]:
        """Greedy-decode clips of at most 30 s each: ``batch_size`` clips to a window batch."""
        return [text for start in range(0, len(clips), self.batch_size)
                for text in self._decode_window(clips[start : start + self.batch_size], language)]

    @abc.abstractmethod
    def _transcribe_long(self, clip: np.ndarray, language: str) -> str:
        """Transcribe one clip longer than the window."""

    @abc.abstractmethod
    def _score_window(self, clip: np.ndarray, texts: Sequence[str], language: str) -> list[float]:
        """log P(text | clip) of each text, teacher-forced after the transcription prompt (language, no timestamps),
        summed over the text's tokens (not the end of text, which CTranslate2's aligner does not score)."""

    def score_texts(self, clip: np.ndarray, texts: Sequence[str], language: str) -> list[float] | None:
        """None for a clip longer than the window: a text cannot be forced across windows."""
        clip = check_clip(clip, 0)
        if len(clip) > WINDOW_SAMPLES:
            return None
        try:
            return self._score_window(clip, texts, whisper_language(language))
        except RuntimeError as error:
            raise TranscriptionError(f"{self.model_id} failed to score texts: {error}") from error

    def transcribe(self, clips: Sequence[np.ndarray], language: str) -> list[str]:
        code = whisper_language(language)
        if not self.supports(code):
            raise ConfigError(
                f"{self.model_id} cannot transcribe '{language}' (it knows: {', '.join(sorted(self.languages() or []))})"
            )
        checked = [check_clip(clip, index) for index, clip in enumerate(clips)]
        texts: list[str | None] = [None] * len(checked)
        short = [index for index, clip in enumerate(checked) if len(clip) <= WINDOW_SAMPLES]
        try:
            for index, text in zip(short, self._decode_short([checked[i] for i in short], code)):
                texts[index] = text
            for index, clip in enumerate(checked):
                if texts[index] is None:
                    texts[index] = self._transcribe_long(clip, code)
        except RuntimeError as error:  # the backend's own failure (CTranslate2, torch): this batch, not the build
            raise TranscriptionError(f"{self.model_id} failed: {error}") from error
        return [text.strip() for text in texts]
