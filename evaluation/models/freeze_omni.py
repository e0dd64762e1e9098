"""Freeze-Omni (VITA-MLLM): a frozen Qwen2-7B-Instruct that reads speech through a chunk-wise streaming encoder and
a CNN adapter mapping the encoder's output into the LLM's embedding space. The LLM never changes, so its T->T is
exactly Qwen2-7B-Instruct's and the S->T - T->T gap measures the speech front-end alone.

Published loading (github VITA-MLLM/Freeze-Omni, ``bin/inference.py``): ``inferencePipeline(args)`` with
``args.model_path`` (the ``VITA-MLLM/Freeze-Omni`` checkpoints) and ``args.llm_path`` (``Qwen/Qwen2-7B-Instruct``)
builds ``pipeline.model``, an ``AudioLLM`` with ``encoder``, ``adpter`` (sic), ``llm_decoder`` and ``tokenizer``;
speech goes in as 80-bin Kaldi fbank chunks (``audioEncoderProcessor``) through ``encoder.infer`` and ``adpter``.
That code is not packaged: ``repo=`` names a checkout, used only with ``trust_remote_code=True``. It runs on CUDA in
half precision.

Prompt: the Qwen2 chat layout the adapter was trained under, with the audio where the user's words go, and the
continuation right after the audio inside the user turn (the same place the T->T context text takes), so T->T and S->T
differ only in how the context arrives: ``<|im_start|>system\\n...<|im_end|>\\n<|im_start|>user\\n<instruction>``,
audio embeddings, continuation.
"""

from __future__ import annotations

import importlib.util
import sys
from collections.abc import Callable
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import numpy as np

from s2sbench.evaluation.models.base import AdapterError, Audio, Request
from s2sbench.evaluation.models.causal import CausalLMAdapter, Encoded, encode_text_pair
from s2sbench.evaluation.models.options import forwards_options
from s2sbench.evaluation.models.trust import require_remote_code
from s2sbench.pipeline.core.errors import ConfigError
from s2sbench.pipeline.core.manifest import sha256_bytes

FREEZE_OMNI_CHECKPOINT = "VITA-MLLM/Freeze-Omni"
FREEZE_OMNI_LLM = "Qwen/Qwen2-7B-Instruct"
CHAT_PREFIX = "<|im_start|>system\nYou are a helpful assistant.<|im_end|>\n<|im_start|>user\n"


class FreezeOmniAdapter(CausalLMAdapter):
    """A text LLM with audio embeddings spliced into its input: the prompt holds one placeholder id per audio frame,
    and the forward pass swaps those positions' embeddings for the adapter's output."""

    name = "freeze-omni"
    modes = frozenset({"T->T", "S->T"})
    speech_languages = frozenset({"en", "zh"})
    kind = "speech LLM (frozen text LLM)"

    def __init__(self, *, tokenizer: Any, model: Any, embed_audio: Callable[[Audio], Any], model_id: str,
                 chat_prefix: str = CHAT_PREFIX, device: str | None = None, dtype: Any = None, batch_size: int = 8,
                 shared_prefix: bool = True) -> None:
        super().__init__(device=device, dtype=dtype, batch_size=batch_size, shared_prefix=shared_prefix)
        self.tokenizer = tokenizer
        self.model = model.to(self.device).eval()
        self.embed_audio = embed_audio
        self.chat_prefix = chat_prefix
        self._model_id = model_id
        if tokenizer.pad_token_id is not None:
            self.pad_token_id = tokenizer.pad_token_id
        self._audio: dict[str, Any] = {}

    @property
    def model_id(self) -> str:
        return self._model_id

    def _loglikelihood(self, requests: list[Request]) -> list[Any]:
        self._audio.clear()  # embeddings are kept for one call only: they are large
        return super()._loglikelihood(requests)

    def encode(self, request: Request) -> Encoded:
        if not isinstance(request.continuation, str):
            raise AdapterError(f"{self.name}: group '{request.group}' has a spoken continuation; Freeze-Omni's LLM "
                               "reads text and speech but scores text only")
        if isinstance(request.context, str):
            prefix, cont = encode_text_pair(self.tokenizer, self.chat_prefix + request.context_prefix + request.context,
                                            request.continuation)
            return Encoded(tuple(prefix), tuple(cont), prefix_key=repr(prefix))
        samples = np.ascontiguousarray(request.context.samples, dtype=np.float32)
        key = sha256_bytes(samples.tobytes())
        if key not in self._audio:
            self._audio[key] = self.embed_audio(request.context)
        embeds = self._audio[key]
        text = self.tokenizer.encode(self.chat_prefix + request.context_prefix, add_special_tokens=False)
        prefix = tuple(text) + (self.pad_token_id,) * len(embeds)
        cont = self.tokenizer.encode(request.continuation, add_special_tokens=False)
        return Encoded(prefix, tuple(cont), prefix_key=f"{key}:{text!r}",
                       prefix_inputs={"audio_embeds": embeds, "audio_start": len(text)})

    def _forward(self, **inputs: Any) -> Any:
        audio = inputs.pop("audio_embeds", None)
        start = inputs.pop("audio_start", None)
        if audio is None:
            return super()._forward(**inputs)
        embeds = self.model.get_input_embeddings()(inputs.pop("input_ids"))
        embeds[:, start : start + len(audio)] = audio.to(embeds.dtype)
        return self.model(inputs_embeds=embeds, **inputs, return_dict=True)


def _repo_module(repo: Path, relative: str, name: str) -> Any:
    spec = importlib.util.spec_from_file_location(name, repo / relative)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@forwards_options(FreezeOmniAdapter, fixed=("tokenizer", "embed_audio", "model_id"))
def freeze_omni(model: str | Path, *, llm: str | Path, repo: str | Path, trust_remote_code: bool = False,
                device: str = "cuda", dtype: Any = "float16", **options: Any) -> FreezeOmniAdapter:
    """Freeze-Omni from a checkout of its repository (``repo``), its checkpoint directory (``model``, the
    ``VITA-MLLM/Freeze-Omni`` files) and the Qwen2-7B-Instruct directory (``llm``). The repository's pipeline puts
    the model on CUDA in half precision; ``device``/``dtype`` must say where it is."""
    import torch

    require_remote_code(trust_remote_code, "freeze-omni", f"the Freeze-Omni repository at {repo}")
    repo = Path(repo)
    if not (repo / "models" / "pipeline.py").is_file():
        raise ConfigError(f"{repo} is not a Freeze-Omni checkout (no models/pipeline.py): "
                                "git clone https://github.com/VITA-MLLM/Freeze-Omni and pass its path as repo=")
    sys.path.insert(0, str(repo))
    from models.pipeline import inferencePipeline

    pipeline = inferencePipeline(SimpleNamespace(model_path=str(model), llm_path=str(llm), top_k=5, top_p=0.8,
                                                 temperature=0.7))
    audio_llm = pipeline.model
    processor_class = _repo_module(repo, "bin/inference.py", "freeze_omni_inference").audioEncoderProcessor

    def embed_audio(audio: Audio) -> Any:
        """The adapter's output for a whole clip, fed chunk by chunk as ``bin/inference.py`` feeds it."""
        if audio.sample_rate_hz != 16000:
            raise AdapterError(f"freeze-omni takes 16 kHz audio, got {audio.sample_rate_hz} Hz")
        processor = processor_class()
        chunk = processor.get_chunk_size()
        wave = torch.zeros(-(-len(audio.samples) // chunk) * chunk)
        wave[: len(audio.samples)] = torch.from_numpy(audio.samples)
        buffer, cnn_cache, pe_index, pieces = None, None, 0, []
        with torch.inference_mode():
            for start in range(0, len(wave), chunk):
                fbank = processor.process(wave[start : start + chunk]).to(audio_llm.llm_decoder.device)
                if buffer is None:
                    buffer = [None] * audio_llm.encoder.enc[1].num_blocks
                out, buffer, _, _, pe_index = audio_llm.encoder.infer(fbank, buffer, 0, None, pe_index)
                mask = torch.full(out.shape[:2], True).unsqueeze(1).to(out.device)
                embeds, _, cnn_cache = audio_llm.adpter(out, mask, cache=cnn_cache, return_cache=True)
                pieces.append(embeds[0])
        return torch.cat(pieces)

    return FreezeOmniAdapter(tokenizer=audio_llm.tokenizer, model=audio_llm.llm_decoder, embed_audio=embed_audio,
                             model_id=f"freeze-omni:{model} + {llm}", device=device, dtype=dtype, **options)
