"""The model adapter interface: one question, the log-likelihood of a continuation given a context.

Everything else (templates, pairing, accuracies, statistics) lives outside the adapters, so a new model family is one
module and a registry entry. Adapters declare what they can do as attributes, not as ``NotImplementedError`` stubs.
"""

from __future__ import annotations

import abc
import math
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np

from s2sbench.pipeline.core.errors import BackendError


@dataclass(frozen=True)
class Audio:
    samples: np.ndarray  # float32 mono
    sample_rate_hz: int = 16000
    # what ASR models already heard in this clip (model id -> transcript): the build's gate, whose transcript an
    # adapter running the same ASR model takes instead of transcribing the clip again
    heard: dict[str, str] = field(default_factory=dict, compare=False)


@dataclass(frozen=True)
class Request:
    """Score ``continuation`` after ``context``; each is text or audio.

    ``context`` is the full rendered prompt prefix (template applied), ``continuation`` the scored span.
    ``group`` ties the requests that share one context (the candidates of one item), so adapters can encode the
    context once.
    """

    context: str | Audio
    continuation: str | Audio
    group: str = ""
    context_prefix: str = ""  # text before the audio for speech contexts (instruction markup)
    language: str = ""  # language of the context ("en", "zh"); the cascade's ASR needs it for speech contexts


@dataclass(frozen=True)
class LogLikelihood:
    sum_logprob: float
    n_tokens: int
    per_token: tuple[float, ...] = field(default=(), repr=False)

    @property
    def mean_nll(self) -> float:
        """The reference's score: mean negative log-likelihood per continuation token."""
        return -self.sum_logprob / self.n_tokens


class AdapterError(BackendError):
    """A model cannot score a request (unsupported modality, too long, ...)."""


class ModelAdapter(abc.ABC):
    """Base of every model adapter; subclasses implement :meth:`_loglikelihood`."""

    name: str = ""
    #: the modes this adapter scores, among "T->T", "S->T", "S->S", "T->S"
    modes: frozenset[str] = frozenset({"T->T"})
    #: languages it can take as speech (None: any)
    speech_languages: frozenset[str] | None = None
    #: a family label shown in results (for example "cascade baseline")
    kind: str = "text LM"
    #: the weights' licence, recorded with results and shown in the report ("" when not known)
    licence: str = ""

    @property
    @abc.abstractmethod
    def model_id(self) -> str:
        """Model name/path and revision, recorded with every result."""

    def runs_on(self) -> str:
        """The device the model computes on (recorded with results): its ``device``, else the CPU."""
        return str(getattr(self, "device", "cpu"))

    def supports(self, mode: str, language: str) -> tuple[bool, str]:
        if mode not in self.modes:
            return False, f"{self.name} does not score {mode}"
        if mode.startswith("S") and self.speech_languages is not None and language not in self.speech_languages:
            return False, f"{self.name} cannot take {language} speech (only {sorted(self.speech_languages)})"
        return True, ""

    def loglikelihood(self, requests: Sequence[Request]) -> list[LogLikelihood]:
        """Score every request; checks the adapter's answers (one per request, finite, never positive)."""
        results = self._loglikelihood(list(requests))
        if len(results) != len(requests):
            raise AdapterError(f"{self.name} returned {len(results)} results for {len(requests)} requests")
        for request, result in zip(requests, results):
            if result.n_tokens <= 0:
                raise AdapterError(f"{self.name}: continuation of group '{request.group}' has no tokens")
            if not math.isfinite(result.sum_logprob) or result.sum_logprob > 1e-4:
                raise AdapterError(
                    f"{self.name}: log-likelihood {result.sum_logprob} of group '{request.group}' is not <= 0"
                )
        return results

    @abc.abstractmethod
    def _loglikelihood(self, requests: list[Request]) -> list[LogLikelihood]:
        """Score the requests; batching and shared-context reuse are the adapter's business."""
