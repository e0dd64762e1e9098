"""The ASR engine interface used by the verification gate and the cascade baseline."""

from __future__ import annotations

import abc
from collections.abc import Sequence

import numpy as np

from s2sbench.pipeline.core.errors import BackendError


class TranscriptionError(BackendError):
    """One clip could not be transcribed."""


class ASREngine(abc.ABC):
    """Transcribes 16 kHz float32 mono audio; the language is forced by the caller."""

    name: str = ""
    model_id: str = ""  # what to record in audits: model name or path, and revision where known
    device: str = "cpu"  # where it decodes

    @abc.abstractmethod
    def languages(self) -> set[str] | None:
        """The languages the model can transcribe, or None for any (multilingual)."""

    @abc.abstractmethod
    def transcribe(self, clips: Sequence[np.ndarray], language: str) -> list[str]:
        """Transcribe each clip (greedy decoding); the result has one string per clip."""

    def score_texts(self, clip: np.ndarray, texts: Sequence[str], language: str) -> list[float] | None:
        """log P(text | clip) for each text: the model made to read it, summed over its tokens; None when this engine
        cannot score a given text (or this clip)."""
        return None

    def supports(self, language: str) -> bool:
        known = self.languages()
        return known is None or language in known
