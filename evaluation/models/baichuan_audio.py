"""Baichuan-Audio (Baichuan Inc.): Qwen2.5-7B with a Whisper-based audio encoder; the S2SBench paper's own family
(its Table 5 compares Baichuan-Audio's one- and two-stage training with GLM-4-Voice).

Published loading (github baichuan-inc/Baichuan-Audio, ``web_demo``): ``AutoModelForCausalLM`` and ``AutoTokenizer``
with ``trust_remote_code=True``, then ``model.bind_processor(tokenizer, training=False, relative_path="/")``; an
audio enters the prompt as ``<audio_start>{"path": "/abs/file.wav"}<audio_end>`` (the start/end tokens named by
``model.config.audio_config``), and ``model.processor([prompt])`` returns ``input_ids`` with the audio's positions
plus ``audios``, ``encoder_length`` and ``bridge_length`` for the forward pass.

Prompt (S->T): ``<instruction><audio_start>{"path": ...}<audio_end>`` then the continuation, whose tokens alone are
scored; T->T is the text pair as lm-evaluation-harness tokenizes it. Use ``baichuan-inc/Baichuan-Audio-Base`` (no
instruction tuning) for the paper's numbers.
"""

from __future__ import annotations

import json
import tempfile
from pathlib import Path
from typing import Any

import numpy as np

from s2sbench.evaluation.models.base import AdapterError, Request
from s2sbench.evaluation.models.causal import CausalLMAdapter, Encoded, encode_text_pair
from s2sbench.evaluation.models.unit_lm import require_remote_code
from s2sbench.pipeline.audio import wav_bytes
from s2sbench.pipeline.manifest import atomic_write_bytes, sha256_bytes

BAICHUAN_AUDIO_BASE = "baichuan-inc/Baichuan-Audio-Base"
#: the processor's outputs the forward pass takes besides input_ids
AUDIO_INPUTS = ("audios", "encoder_length", "bridge_length")


def audio_message(instruction: str, wav_path: Path, audio_start: str, audio_end: str) -> str:
    """The text that stands for one audio in a Baichuan prompt (the processor replaces it with the audio's tokens)."""
    return instruction + audio_start + json.dumps({"path": str(wav_path)}, ensure_ascii=False) + audio_end


class BaichuanAudioAdapter(CausalLMAdapter):
    name = "baichuan-audio"
    modes = frozenset({"T->T", "S->T"})
    speech_languages = frozenset({"en", "zh"})
    kind = "speech LLM"

    def __init__(self, *, tokenizer: Any, model: Any, processor: Any, audio_start: str, audio_end: str,
                 model_id: str, device: str | None = None, dtype: Any = None, batch_size: int = 8,
                 shared_prefix: bool = False, audio_dir: str | Path | None = None) -> None:
        # shared_prefix defaults to False: the remote model's cache class predates transformers' Cache API
        super().__init__(device=device, dtype=dtype, batch_size=batch_size, shared_prefix=shared_prefix)
        self.tokenizer = tokenizer
        self.model = model
        self.processor = processor
        self.audio_start, self.audio_end = audio_start, audio_end
        self._model_id = model_id
        if tokenizer.pad_token_id is not None:
            self.pad_token_id = tokenizer.pad_token_id
        # the processor reads audio from files: clips are written once, named by their hash
        self.audio_dir = Path(audio_dir) if audio_dir else Path(tempfile.mkdtemp(prefix="s2sbench-baichuan-"))
        self._prefixes: dict[str, tuple[tuple[int, ...], dict[str, Any]]] = {}

    @property
    def model_id(self) -> str:
        return self._model_id

    def _loglikelihood(self, requests: list[Request]) -> list[Any]:
        self._prefixes.clear()  # processed audio is kept for one call only: its features are large
        return super()._loglikelihood(requests)

    def wav_path(self, samples: np.ndarray, sample_rate_hz: int) -> Path:
        data = wav_bytes(samples, sample_rate_hz)
        path = (self.audio_dir / sha256_bytes(data)).with_suffix(".wav").resolve()
        if not path.is_file():
            atomic_write_bytes(path, data)
        return path

    def encode(self, request: Request) -> Encoded:
        if not isinstance(request.continuation, str):
            raise AdapterError(f"{self.name}: group '{request.group}' has a spoken continuation; this adapter "
                               "scores text continuations only")
        if isinstance(request.context, str):
            prefix, cont = encode_text_pair(self.tokenizer, request.context_prefix + request.context,
                                            request.continuation)
            return Encoded(tuple(prefix), tuple(cont), prefix_key=repr(prefix))
        samples = np.ascontiguousarray(request.context.samples, dtype=np.float32)
        prompt = audio_message(request.context_prefix, self.wav_path(samples, request.context.sample_rate_hz),
                               self.audio_start, self.audio_end)
        if prompt not in self._prefixes:
            processed = self.processor([prompt])
            inputs = {name: getattr(processed, name) for name in AUDIO_INPUTS
                      if getattr(processed, name, None) is not None}
            self._prefixes[prompt] = (tuple(processed.input_ids[0].tolist()), inputs)
        prefix, inputs = self._prefixes[prompt]
        cont = self.tokenizer.encode(request.continuation, add_special_tokens=False)
        return Encoded(prefix, tuple(cont), prefix_key=prompt, prefix_inputs=inputs)


def baichuan_audio(model: str = BAICHUAN_AUDIO_BASE, *, trust_remote_code: bool = False, revision: str | None = None,
                   dtype: Any = None, device: str | None = None, **options: Any) -> BaichuanAudioAdapter:
    """Load Baichuan-Audio as its web demo does (remote code: only with ``trust_remote_code=True``)."""
    from transformers import AutoModelForCausalLM, AutoTokenizer

    from s2sbench.evaluation.models.causal import resolve_device, resolve_dtype

    require_remote_code(trust_remote_code, "baichuan-audio", model)
    device = resolve_device(device)
    dtype = resolve_dtype(dtype, device)
    tokenizer = AutoTokenizer.from_pretrained(model, revision=revision, trust_remote_code=True)
    lm = AutoModelForCausalLM.from_pretrained(model, revision=revision, trust_remote_code=True, dtype=dtype)
    lm = lm.to(device).eval()
    lm.training = False
    lm.bind_processor(tokenizer, training=False, relative_path="/")
    audio_config = lm.config.audio_config
    return BaichuanAudioAdapter(
        tokenizer=tokenizer, model=lm, processor=lm.processor,
        audio_start=tokenizer.convert_ids_to_tokens(audio_config.audio_start_token_id),
        audio_end=tokenizer.convert_ids_to_tokens(audio_config.audio_end_token_id),
        model_id=model + (f"@{revision}" if revision else ""), device=device, dtype=dtype, **options)
