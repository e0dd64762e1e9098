"""Unit speech LMs (GSLM, TWIST): a causal LM over deduplicated k-means units of HuBERT-like features.

S->S only: the context audio and each spoken continuation are turned into units separately (the continuation's first
unit is never merged with the context's last one), and only the continuation's units are scored given the context's.
Unit ``u`` is token ``offset + u`` of the LM (TWIST checkpoints store ``offset`` in their config); no BOS is added,
as in TWIST's own perplexity code. The original Spoken StoryCloze evaluation (Hassid et al. 2023) summed the
log-likelihood of the whole spoken story; this adapter answers the protocol's question (the continuation only), so its
numbers are comparable across this harness's models, not digit for digit with TWIST's paper.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

from s2sbench.evaluation.models.base import AdapterError, Audio, Request
from s2sbench.evaluation.models.causal import CausalLMAdapter, Encoded
from s2sbench.evaluation.models.units import UnitEncoder
from s2sbench.pipeline.manifest import sha256_bytes

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
            raise ValueError(f"{model}: units {self.offset}..{self.offset + self.units.n_units - 1} do not fit its "
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
