"""Causal LMs over discrete speech tokens: unit speech LMs (GSLM, TWIST) and interleaved speech-text LMs.

Unit LMs (:class:`UnitLMAdapter`) read deduplicated k-means units of HuBERT-like features, S->S only: the context
audio and each spoken continuation are turned into units separately (the continuation's first unit is never merged
with the context's last one), and only the continuation's units are scored given the context's.
Unit ``u`` is token ``offset + u`` of the LM (TWIST checkpoints store ``offset`` in their config); no BOS is added,
as in TWIST's own perplexity code. The original Spoken StoryCloze evaluation (Hassid et al. 2023) summed the
log-likelihood of the whole spoken story; this adapter answers the protocol's question (the continuation only), so its
numbers are comparable across this harness's models, not digit for digit with TWIST's paper.

Interleaved LMs (:class:`InterleavedUnitLMAdapter`: GLM-4-Voice, Spirit LM) write speech tokens as text-vocabulary
tokens between text spans; each family module sets the markup and loads its speech tokenizer.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

from s2sbench.evaluation.models.base import AdapterError, Audio, Request
from s2sbench.evaluation.models.causal import CausalLMAdapter, Encoded, encode_text_pair
from s2sbench.evaluation.models.units import UnitEncoder
from s2sbench.pipeline.core.errors import ConfigError
from s2sbench.pipeline.core.manifest import sha256_bytes

TWIST_ENCODER = "slprl/mhubert-base-25hz"
TWIST_LAYER = 11


class UnitLMAdapter(CausalLMAdapter):
    name = "unit-lm"
    modes = frozenset({"S->S"})
    kind = "unit speech LM"

    def __init__(self, model: str, *, kmeans: str | Path | np.ndarray, encoder: str | Any = TWIST_ENCODER,
                 layer: int = TWIST_LAYER, offset: int | None = None, deduplicate_units: bool = True,
                 revision: str | None = None, dtype: Any = None, device: str | None = None, batch_size: int = 8,
                 shared_prefix: bool = True) -> None:
        super().__init__(device=device, dtype=dtype, batch_size=batch_size, shared_prefix=shared_prefix)
        from transformers import AutoModelForCausalLM

        self.model = AutoModelForCausalLM.from_pretrained(model, revision=revision, dtype=self.dtype)
        self.model = self.model.to(self.device).eval()
        self.units = UnitEncoder(encoder, kmeans, layer=layer, deduplicate_units=deduplicate_units,
                                 device=self.device)
        self.offset = offset if offset is not None else int(getattr(self.model.config, "offset", 0))
        vocab = self.model.config.vocab_size
        if self.offset + self.units.n_units > vocab:
            raise ConfigError(f"{model}: units {self.offset}..{self.offset + self.units.n_units - 1} do not fit its "
                             f"vocabulary of {vocab} tokens (check offset= and the k-means model)")
        self._model_id = f"{model}{f'@{revision}' if revision else ''} over {self.units.fingerprint}"
        self._cache: dict[str, tuple[int, ...]] = {}

    @property
    def model_id(self) -> str:
        return self._model_id

    def unit_ids(self, audio: Audio) -> tuple[int, ...]:
        """LM token ids of one clip (cached by the audio's hash: a context is shared by every candidate)."""
        key = sha256_bytes(np.ascontiguousarray(audio.samples, dtype=np.float32).tobytes())
        if key not in self._cache:
            self._cache[key] = tuple(self.offset + unit for unit in self.units.encode(audio))
        return self._cache[key]

    def encode(self, request: Request) -> Encoded:
        if not isinstance(request.context, Audio) or not isinstance(request.continuation, Audio):
            raise AdapterError(f"{self.name} scores speech only (S->S); group '{request.group}' has text")
        prefix = self.unit_ids(request.context)
        return Encoded(prefix, self.unit_ids(request.continuation), prefix_key=repr(prefix))


class InterleavedUnitLMAdapter(CausalLMAdapter):
    """Speech-text LMs whose speech tokens are ordinary tokens of the text vocabulary (GLM-4-Voice, Spirit LM).

    A family names its markup and how a clip becomes the text of its speech tokens (``speech_text``); the requests are
    laid out as the family's interleaved pre-training data were, and only the continuation's tokens are scored:

    * T->T: ``text_open``, the text pair, tokenized as lm-evaluation-harness does;
    * S->T: ``speech_open``, the context's speech tokens, ``speech_to_text``; then the continuation's text;
    * S->S: ``speech_open``, the context's speech tokens; then the continuation's speech tokens (one speech span: the
      context's speech goes on);
    * T->S: ``text_open``, the context text, ``text_to_speech``; then the continuation's speech tokens.

    Every prompt starts with the special tokens the tokenizer puts first by default (Llama's BOS, GLM's
    ``[gMASK]<sop>``), and a template's instruction before the audio is text (after ``text_open``).
    ``tokenizer`` and ``model`` are loaded by the family's factory (remote code only behind its flag);
    ``speech_text`` turns a clip into markup such as ``<|audio_12|><|audio_7|>`` or ``[Hu12][Hu7]``.
    """

    modes = frozenset({"T->T", "S->T", "S->S", "T->S"})
    kind = "speech-text LM (discrete speech tokens)"
    text_open = ""
    speech_open = ""
    speech_to_text = ""
    text_to_speech = ""

    def __init__(self, *, tokenizer: Any, model: Any, speech_text: Callable[[Audio], str], model_id: str,
                 device: str | None = None, dtype: Any = None, batch_size: int = 8,
                 shared_prefix: bool = True) -> None:
        super().__init__(device=device, dtype=dtype, batch_size=batch_size, shared_prefix=shared_prefix)
        self.tokenizer = tokenizer
        self.model = model.to(self.device).eval()
        self.speech_text = speech_text
        if tokenizer.pad_token_id is not None:
            self.pad_token_id = tokenizer.pad_token_id
        self._model_id = model_id
        self._speech: dict[str, tuple[int, ...]] = {}
        self.lead = tokenizer.encode("")  # the tokenizer's default leading special tokens

    @property
    def model_id(self) -> str:
        return self._model_id

    def ids(self, text: str) -> list[int]:
        return self.tokenizer.encode(text, add_special_tokens=False) if text else []

    def speech_ids(self, audio: Audio) -> tuple[int, ...]:
        """Token ids of a clip's speech tokens (cached by the audio's hash: a context serves every candidate)."""
        key = sha256_bytes(np.ascontiguousarray(audio.samples, dtype=np.float32).tobytes())
        if key not in self._speech:
            self._speech[key] = tuple(self.ids(self.speech_text(audio)))
        return self._speech[key]

    def encode(self, request: Request) -> Encoded:
        context, continuation = request.context, request.continuation
        if isinstance(context, str) and isinstance(continuation, str):
            prefix, cont = encode_text_pair(self.tokenizer, self.text_open + request.context_prefix + context,
                                            continuation)
            return Encoded(tuple(prefix), tuple(cont), prefix_key=repr(prefix))
        if isinstance(context, Audio):
            instruction = self.text_open + request.context_prefix if request.context_prefix else ""
            prefix = self.lead + self.ids(instruction + self.speech_open) + list(self.speech_ids(context))
            if isinstance(continuation, str):
                prefix += self.ids(self.speech_to_text)
        else:
            prefix = self.lead + self.ids(self.text_open + request.context_prefix + context + self.text_to_speech)
        cont = self.ids(continuation) if isinstance(continuation, str) else list(self.speech_ids(continuation))
        return Encoded(tuple(prefix), tuple(cont), prefix_key=repr(prefix))
