"""Baichuan-Audio (Baichuan Inc.): Qwen2.5-7B with a Whisper-based audio encoder; the S2SBench paper's own family
(its Table 5 compares Baichuan-Audio's one- and two-stage training with GLM-4-Voice).

Published loading (github baichuan-inc/Baichuan-Audio, ``web_demo``): ``AutoModelForCausalLM`` and ``AutoTokenizer``
with ``trust_remote_code=True``, then ``model.bind_processor(tokenizer, training=False, relative_path="/")``; an
audio enters the prompt as ``<audio_start>{"path": "/abs/file.wav"}<audio_end>`` (the start/end tokens named by
``model.config.audio_config``), and ``model.processor([prompt])`` returns ``input_ids`` with the audio's positions
plus ``audios``, ``encoder_length`` and ``bridge_length`` for the forward pass.

Prompt (S->T): ``<instruction><audio_start>{"path": ...}<audio_end>`` then the continuation, whose tokens alone are
scored; T->T is the text pair as lm-evaluation-harness tokenizes it. Use ``baichuan-inc/Baichuan-Audio-Base`` (no
instruction tuning) for the paper's numbers. Built on :class:`RemoteCodeAdapter` (its ``trust_remote_code`` gate,
scoring and batching); only the processor binding and the audio message are Baichuan's own.
"""

from __future__ import annotations

import json
import tempfile
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import numpy as np

from s2sbench.evaluation.models.base import Request
from s2sbench.evaluation.models.remote_code import RemoteCodeAdapter
from s2sbench.pipeline.speech.audio import wav_bytes
from s2sbench.pipeline.core.manifest import atomic_write_bytes, sha256_bytes

BAICHUAN_AUDIO_BASE = "baichuan-inc/Baichuan-Audio-Base"
#: the processor's outputs the forward pass takes besides input_ids
AUDIO_INPUTS = ("audios", "encoder_length", "bridge_length")


def audio_message(instruction: str, wav_path: Path, audio_start: str, audio_end: str) -> str:
    """The text that stands for one audio in a Baichuan prompt (the processor replaces it with the audio's tokens)."""
    return instruction + audio_start + json.dumps({"path": str(wav_path)}, ensure_ascii=False) + audio_end


class BaichuanAudioAdapter(RemoteCodeAdapter):
    name = "baichuan-audio"
    speech_languages = frozenset({"en", "zh"})

    def __init__(self, model: str = BAICHUAN_AUDIO_BASE, *, audio_dir: str | Path | None = None,
                 max_audio_s: float | None = None, shared_prefix: bool = False, **options: Any) -> None:
        # the processor reads audio from files: each clip is written once, named by its hash
        self.audio_dir = Path(audio_dir) if audio_dir else Path(tempfile.mkdtemp(prefix="s2sbench-baichuan-"))
        self.audio_start = self.audio_end = ""
        # shared_prefix defaults to False: the remote model's cache class predates transformers' Cache API
        super().__init__(model, max_audio_s=max_audio_s, shared_prefix=shared_prefix, **options)

    def _load_processor(self, model: str, **options: Any) -> Any:
        from transformers import AutoTokenizer

        # the audio processor is bound to the loaded model (bind_processor); until then only the tokenizer exists
        return SimpleNamespace(tokenizer=AutoTokenizer.from_pretrained(model, **options))

    def _load_model(self, model: str, **options: Any) -> Any:
        lm = super()._load_model(model, **options)
        lm.training = False
        lm.bind_processor(self.tokenizer, training=False, relative_path="/")
        self.processor = lm.processor
        audio_config = lm.config.audio_config
        self.audio_start = self.tokenizer.convert_ids_to_tokens(audio_config.audio_start_token_id)
        self.audio_end = self.tokenizer.convert_ids_to_tokens(audio_config.audio_end_token_id)
        return lm

    def wav_path(self, samples: np.ndarray, sample_rate_hz: int) -> Path:
        data = wav_bytes(samples, sample_rate_hz)
        path = (self.audio_dir / sha256_bytes(data)).with_suffix(".wav").resolve()
        if not path.is_file():
            atomic_write_bytes(path, data)
        return path

    def _encode_speech_prefix(self, request: Request) -> tuple[tuple[int, ...], dict[str, Any], str]:
        samples = np.ascontiguousarray(request.context.samples, dtype=np.float32)
        prompt = audio_message(request.context_prefix, self.wav_path(samples, request.context.sample_rate_hz),
                               self.audio_start, self.audio_end)
        if prompt not in self._prefixes:
            processed = self.processor([prompt])
            inputs = {name: getattr(processed, name) for name in AUDIO_INPUTS
                      if getattr(processed, name, None) is not None}
            self._prefixes[prompt] = (tuple(processed.input_ids[0].tolist()), inputs)
        ids, inputs = self._prefixes[prompt]
        return ids, inputs, prompt
