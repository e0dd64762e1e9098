"""The cascade baseline: Whisper transcribes the speech context, a text LM scores the continuation after it.

An S->T request becomes the T->T request a user would have written with the transcript in place of the context
text: ``transcript + separator + continuation``. The speech template's instruction prefix (``context_prefix``, "Below
is a segment of alternating speech and text content:") describes audio the text LM never sees, so it is dropped unless
``keep_prefix=True``. Each distinct context audio is transcribed once (cached by its hash) however many candidates
and calls it appears in; a clip whose transcript by the same ASR model (the same model id: model, compute type,
packing) comes with it, as a build's gate heard it, is not transcribed again (``transcripts_reused`` counts them).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace
from typing import Any

import numpy as np

from s2sbench.evaluation.models.base import AdapterError, Audio, LogLikelihood, ModelAdapter, Request
from s2sbench.evaluation.models.options import forwards_options
from s2sbench.pipeline.core.errors import ConfigError
from s2sbench.pipeline.text.languages import is_unspaced
from s2sbench.pipeline.core.manifest import sha256_bytes

ASR_SAMPLE_RATE_HZ = 16000


def lm_options_target(values: Mapping[str, Any]) -> tuple[Any, tuple[str, ...]]:
    """What the cascade's ``**lm_options`` are options of: the adapter registered as ``lm``, else hf-causal (with
    ``model`` set to ``lm``); none for an ``lm`` passed as an adapter."""
    from s2sbench.evaluation.models import ADAPTERS, adapter_factory

    lm = values.get("lm", "smollm2")
    if not isinstance(lm, str):
        return None, ()
    if lm in ADAPTERS:
        return adapter_factory(lm), ()
    return adapter_factory("hf-causal"), ("model",)


@forwards_options(choose=lm_options_target)
class CascadeAdapter(ModelAdapter):
    name = "cascade"
    modes = frozenset({"T->T", "S->T"})
    kind = "cascade baseline"

    def __init__(self, *, asr_engine: str = "faster-whisper", asr_model: str = "tiny.en",
                 asr_options: dict[str, Any] | None = None, lm: str | ModelAdapter = "smollm2",
                 language: str | None = None, separator: str | None = None, keep_prefix: bool = False,
                 **lm_options: Any) -> None:
        from s2sbench.evaluation.models import ADAPTERS, get_adapter
        from s2sbench.pipeline.gate.asr import get_asr

        self.asr = get_asr(asr_engine, asr_model, **(asr_options or {}))
        if isinstance(lm, ModelAdapter):
            self.lm = lm
        elif lm in ADAPTERS:
            self.lm = get_adapter(lm, **lm_options)
        else:  # a hub id or local directory of a text LM
            self.lm = get_adapter("hf-causal", model=lm, **lm_options)
        if "T->T" not in self.lm.modes:
            raise ConfigError(f"cascade needs a text LM; '{self.lm.name}' does not score T->T")
        known = self.asr.languages()
        self.speech_languages = frozenset(known) if known is not None else None
        self.language = language
        self.separator = separator
        self.keep_prefix = keep_prefix
        self._transcripts: dict[str, str] = {}
        self.transcripts_reused = 0

    @property
    def model_id(self) -> str:
        return f"{self.asr.model_id} -> {self.lm.model_id}"

    def runs_on(self) -> str:
        asr, lm = str(self.asr.device), self.lm.runs_on()
        return asr if asr == lm else f"ASR {asr}, LM {lm}"

    @property
    def licence(self) -> str:
        return f"LM: {self.lm.licence}" if self.lm.licence else ""

    def _language(self, request: Request) -> str:
        language = request.language or self.language
        if language:
            return language
        if self.speech_languages is not None and len(self.speech_languages) == 1:
            return next(iter(self.speech_languages))
        raise AdapterError(f"{self.name}: group '{request.group}' names no language and the ASR "
                           f"{self.asr.model_id} is multilingual; set Request.language or language=")

    def transcribe(self, requests: list[Request]) -> dict[str, str]:
        """Transcripts of the distinct context audios of ``requests``, keyed by audio hash (cached)."""
        pending: dict[str, dict[str, np.ndarray]] = {}  # language -> audio hash -> samples
        keys: dict[str, None] = {}  # the requests' audios, in order
        for request in requests:
            if not isinstance(request.context, Audio):
                continue
            audio = request.context
            if audio.sample_rate_hz != ASR_SAMPLE_RATE_HZ:
                raise AdapterError(f"{self.name}: context audio of group '{request.group}' is "
                                   f"{audio.sample_rate_hz} Hz; the ASR takes {ASR_SAMPLE_RATE_HZ} Hz")
            samples = np.ascontiguousarray(audio.samples, dtype=np.float32)
            key = sha256_bytes(samples.tobytes())
            keys[key] = None
            if key in self._transcripts:
                continue
            heard = audio.heard.get(self.asr.model_id)
            if heard is not None:
                self._transcripts[key] = heard.strip()
                self.transcripts_reused += 1
            else:
                pending.setdefault(self._language(request), {})[key] = samples
        for language, clips in pending.items():
            texts = self.asr.transcribe(list(clips.values()), language)
            self._transcripts.update(zip(clips.keys(), (text.strip() for text in texts)))
        return {key: self._transcripts[key] for key in keys}  # not the whole cache: other calls' audios are in it

    def _as_text(self, request: Request, transcripts: dict[str, str]) -> Request:
        if not isinstance(request.continuation, str):
            raise AdapterError(f"{self.name}: group '{request.group}' has a spoken continuation; the cascade "
                               "scores text continuations only")
        if isinstance(request.context, str):
            return request
        samples = np.ascontiguousarray(request.context.samples, dtype=np.float32)
        transcript = transcripts[sha256_bytes(samples.tobytes())]
        separator = self.separator
        if separator is None:
            touching = transcript and request.continuation and not request.continuation[0].isspace()
            separator = " " if touching and not is_unspaced(self._language(request)) else ""
        prefix = request.context_prefix if self.keep_prefix else ""
        return replace(request, context=prefix + transcript, context_prefix="",
                       continuation=separator + request.continuation)

    def _loglikelihood(self, requests: list[Request]) -> list[LogLikelihood]:
        transcripts = self.transcribe(requests)
        return self.lm.loglikelihood([self._as_text(request, transcripts) for request in requests])
