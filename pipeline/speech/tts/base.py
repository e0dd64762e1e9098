"""The TTS engine interface and the voice record.

An engine turns normalized text into a float32 mono waveform at its native rate; post-processing to 16 kHz lives
in :mod:`s2sbench.pipeline.speech.audio`, so every engine stays small. A failure on one text raises
:class:`SynthesisError`, which the synthesis stage records per clip: one bad clip never fails a build.
"""

from __future__ import annotations

import abc
from dataclasses import dataclass
from typing import ClassVar, Literal

import numpy as np
from pydantic import BaseModel, ConfigDict, Field

from s2sbench.pipeline.core.errors import BackendError
from s2sbench.pipeline.text.languages import LanguageCode
from s2sbench.pipeline.core.schema import StrictSection


class SynthesisError(BackendError):
    """One text could not be synthesized (the engine ran, the clip did not). ``retryable`` False: the text itself is
    the cause (a character or word the voice cannot read), so another seed, rate or reading would fail the same way
    and the speak stage does not try again."""

    def __init__(self, message: str, *, retryable: bool = True):
        super().__init__(message)
        self.retryable = retryable

    def __reduce__(self):  # keeps ``retryable`` across processes (a Dask worker's error reaching the flow)
        return _synthesis_error, (str(self), self.retryable)


def _synthesis_error(message: str, retryable: bool) -> SynthesisError:
    return SynthesisError(message, retryable=retryable)


def with_options(voice: "Voice", **options) -> "Voice":
    """``voice`` with ``options`` set (a frozen record: a copy)."""
    return voice.model_copy(update={"options": {**voice.options, **options}})


class Voice(BaseModel):
    """A voice: which engine speaks, with which model and speaker, in which language. ``options`` are checked
    against the engine's :attr:`TTSEngine.Options` when the voice file is read."""

    model_config = ConfigDict(frozen=True, extra="forbid", strict=True)

    id: str
    engine: str
    language: LanguageCode
    model: str = ""  # engine-specific: piper .onnx path or package, coqui model name or dir, espeak voice
    speaker: str | None = None  # multi-speaker id, or a reference wav for voice cloning
    options: dict = Field(default_factory=dict)
    licence: str = "unknown"
    description: str = ""
    # "low": listeners (and Whisper) understand it poorly; kept only as an explicitly named voice, flagged in the card
    intelligibility: Literal["normal", "low"] = "normal"


@dataclass(frozen=True)
class Waveform:
    samples: np.ndarray  # float32, mono, in [-1, 1]
    sample_rate_hz: int


class TTSEngine(abc.ABC):
    """Synthesizes text for the voices of one engine; one instance is reused for many clips."""

    name: str = ""
    #: the ``options`` a voice of this engine may set (None: the engine does not declare them, so they are not checked)
    Options: ClassVar[type[StrictSection] | None] = None
    #: the languages (ISO 639 codes without region) the engine reads, or None where each voice's model decides (a Piper
    #: or Coqui model, an espeak-ng voice), whose ``language`` is then taken as given
    languages: ClassVar[frozenset[str] | None] = None

    @abc.abstractmethod
    def model_version(self, voice: Voice) -> str:
        """A string that changes whenever the audio this engine makes for ``voice`` could change."""

    @abc.abstractmethod
    def synthesize(self, text: str, voice: Voice, seed: int) -> Waveform:
        """Speak ``text`` (already normalized) with ``voice``; same inputs and seed give the same samples."""

    def at_rate(self, voice: Voice, factor: float) -> Voice | None:
        """``voice`` speaking ``factor`` times as fast (a retry reads a little slower), or None when this engine has no
        rate control (the retry then changes the seed only)."""
        return None

    def alternate_reading(self, voice: Voice) -> Voice | None:
        """``voice`` reading texts another way than usual (another front end, other prosody), or None when this engine
        has no other way (a retry asking for one then reads as usual)."""
        return None

    def missing(self, voice: Voice) -> str | None:
        """Why ``voice`` cannot run on this machine as it is (a model to download, a binary to install), or None."""
        return None


def onnxruntime_errors() -> tuple[type[Exception], ...]:
    """onnxruntime's run-time errors (Fail, InvalidArgument, ...), which derive from Exception, not RuntimeError."""
    from onnxruntime.capi import onnxruntime_pybind11_state as state

    return (state.Fail, state.InvalidArgument, state.RuntimeException, state.EPFail, state.EngineError)
