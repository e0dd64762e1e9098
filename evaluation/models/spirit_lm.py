"""Spirit LM (Meta): Llama-2-7B trained on interleaved text and HuBERT units, the units written ``[Hu123]`` (the
expressive variant adds pitch ``[Pi..]`` and style ``[St..]`` tokens), modality switches written ``[Text]`` and
``[Speech]``.

Loaded through its own package (github facebookresearch/spiritlm, ``pip install -e .`` of a checkout; not on
PyPI) as its README does: ``Spiritlm("spirit-lm-base-7b")`` reads the weights (distributed by Meta on request) from
the package's ``checkpoints/spiritlm_model/`` or a path; it holds ``model`` (``LlamaForCausalLM``), ``tokenizer`` (a
``LlamaTokenizer`` that adds BOS) and ``speech_tokenizer`` (a callable: waveform -> ``[Hu..]`` string). The prompt
is what ``Spiritlm._build_prompt`` makes: ``[Speech]<units>[Text]<continuation>`` for S->T, one ``[Speech]`` span for
S->S, ``[Text]<context>[Speech]<units>`` for T->S.
"""

from __future__ import annotations

import importlib.util
from typing import Any

from s2sbench.evaluation.models.base import AdapterError, Audio
from s2sbench.evaluation.models.options import forwards_options
from s2sbench.evaluation.models.unit_lm import InterleavedUnitLMAdapter

SPIRIT_LM_BASE = "spirit-lm-base-7b"
SPIRIT_LM_PACKAGE = "spiritlm"


class SpiritLMAdapter(InterleavedUnitLMAdapter):
    name = "spirit-lm"
    speech_languages = frozenset({"en"})
    text_open = "[Text]"
    speech_open = "[Speech]"
    speech_to_text = "[Text]"
    text_to_speech = "[Speech]"


@forwards_options(SpiritLMAdapter, fixed=("tokenizer", "speech_text", "model_id"))
def spirit_lm(model: str = SPIRIT_LM_BASE, *, dtype: Any = None, device: str | None = None,
              **options: Any) -> SpiritLMAdapter:
    """Spirit LM through its own ``spiritlm`` package (``model``: a variant name or a checkpoint directory)."""
    if importlib.util.find_spec(SPIRIT_LM_PACKAGE) is None:
        raise ModuleNotFoundError(
            "spirit-lm needs the 'spiritlm' package: git clone https://github.com/facebookresearch/spiritlm, "
            "pip install -e it, and put the weights Meta sends on request under its checkpoints/ directory")
    from spiritlm.model.spiritlm_model import Spiritlm

    from s2sbench.evaluation.models.causal import resolve_device, resolve_dtype

    spirit = Spiritlm(model)
    device = resolve_device(device)
    dtype = resolve_dtype(dtype, device)

    def speech_text(audio: Audio) -> str:
        import torch

        if audio.sample_rate_hz != 16000:
            raise AdapterError(f"Spirit LM's speech tokenizer takes 16 kHz audio, got {audio.sample_rate_hz} Hz")
        return spirit.speech_tokenizer(torch.from_numpy(audio.samples).float())

    return SpiritLMAdapter(tokenizer=spirit.tokenizer, model=spirit.model.to(dtype), speech_text=speech_text,
                           model_id=f"spiritlm:{model}", device=device, dtype=dtype, **options)
