"""Speech LLMs whose transformers processor turns (prompt with an audio placeholder, audio) into model inputs.

A family module only names its model class, the text that stands for the audio in the prompt, and its limits. The
speech prompt is ``context_prefix + audio placeholder``, then the continuation; the continuation is tokenized on its
own (the placeholder ends with a special token, so this is how the whole prompt tokenizes too), and only its tokens
are scored. Text contexts (T->T) are tokenized as lm-evaluation-harness does. Scoring, batching and the shared-prefix
KV cache come from :class:`~s2sbench.evaluation.models.causal.CausalLMAdapter`: the audio is encoded once per item.
"""

from __future__ import annotations

from typing import Any, ClassVar

import numpy as np

from s2sbench.evaluation.models.base import AdapterError, Audio, LogLikelihood, Request
from s2sbench.evaluation.models.causal import CausalLMAdapter, Encoded, encode_text_pair
from s2sbench.evaluation.models.options import forwards_options
from s2sbench.evaluation.models.trust import without_remote_code
from s2sbench.pipeline.core.manifest import sha256_bytes

SAMPLE_RATE_HZ = 16000
AUDIOS_PER_SLICE = 64


#: what ``**load_options`` may name: the from_pretrained arguments a speech LLM is loaded with (the rest of
#: from_pretrained's keywords are set by the adapter, or select weights it does not expect)
FROM_PRETRAINED_OPTIONS = {
    "attn_implementation": (str | None, None),
    "cache_dir": (str | None, None),
    "local_files_only": (bool, False),
    "low_cpu_mem_usage": (bool | None, None),
    "subfolder": (str, ""),
    "use_safetensors": (bool | None, None),
}


@forwards_options(names=FROM_PRETRAINED_OPTIONS)
class SpeechLLMAdapter(CausalLMAdapter):
    modes = frozenset({"T->T", "S->T"})
    kind = "speech LLM"
    #: transformers class that loads the checkpoint (looked up by name, so importing this module stays cheap)
    model_class: ClassVar[str] = ""
    #: prompt text standing for one audio; the processor expands it to the audio's tokens
    audio_placeholder: ClassVar[str] = ""
    #: longest context audio the model takes (its encoder window); None: no fixed limit
    max_audio_s: ClassVar[float | None] = 30.0
    #: keyword under which the processor takes audio
    audio_argument: ClassVar[str] = "audio"
    #: whether this family's modelling code comes from the checkpoint (only :class:`RemoteCodeAdapter` and its
    #: subclasses, behind the explicit ``trust_remote_code=True`` gate); the others load transformers' own classes
    runs_remote_code: ClassVar[bool] = False

    def __init__(self, model: str, *, revision: str | None = None, dtype: Any = None, device: str | None = None,
                 batch_size: int = 32, shared_prefix: bool = True, **load_options: Any) -> None:
        super().__init__(device=device, dtype=dtype, batch_size=batch_size, shared_prefix=shared_prefix)
        if not self.runs_remote_code:

            load_options = without_remote_code(self.name, self.model_class, load_options)
        self.processor = self._load_processor(model, revision=revision, **load_options)
        self.tokenizer = self.processor.tokenizer
        self.model = self._load_model(model, revision=revision, dtype=self.dtype, **load_options).to(self.device).eval()
        if self.tokenizer.pad_token_id is not None:
            self.pad_token_id = self.tokenizer.pad_token_id
        self._model_id = model + (f"@{revision}" if revision else "")
        self._prefixes: dict[str, tuple[tuple[int, ...], dict[str, Any]]] = {}

    def _load_processor(self, model: str, **options: Any) -> Any:
        from transformers import AutoProcessor

        return AutoProcessor.from_pretrained(model, **options)

    def _load_model(self, model: str, **options: Any) -> Any:
        import transformers

        return getattr(transformers, self.model_class).from_pretrained(model, **options)

    @property
    def model_id(self) -> str:
        return self._model_id

    def _loglikelihood(self, requests: list[Request]) -> list[LogLikelihood]:
        # Audio features are large (Qwen2-Audio: 1.5 MB a clip), so requests are scored in slices of at most
        # AUDIOS_PER_SLICE distinct audios and the processed audio is dropped after each slice.
        results: list[LogLikelihood] = []
        start, audios = 0, set()
        for index, request in enumerate(requests):
            if isinstance(request.context, Audio):
                audios.add(id(request.context))
            if len(audios) > AUDIOS_PER_SLICE:
                results += self._score_slice(requests[start:index])
                start, audios = index, {id(request.context)}
        return results + self._score_slice(requests[start:])

    def _score_slice(self, requests: list[Request]) -> list[LogLikelihood]:
        try:
            return super()._loglikelihood(requests) if requests else []
        finally:
            self._prefixes.clear()

    def encode(self, request: Request) -> Encoded:
        if not isinstance(request.continuation, str):
            raise AdapterError(f"{self.name}: group '{request.group}' has a spoken continuation; this adapter "
                               "scores text continuations only")
        if isinstance(request.context, str):
            context_ids, cont_ids = encode_text_pair(self.tokenizer, request.context_prefix + request.context,
                                                     request.continuation)
            return Encoded(tuple(context_ids), tuple(cont_ids), prefix_key=repr(context_ids))
        prefix_ids, prefix_inputs, key = self._encode_speech_prefix(request)
        cont_ids = self.tokenizer(request.continuation, add_special_tokens=False)["input_ids"]
        return Encoded(prefix_ids, tuple(cont_ids), prefix_key=key, prefix_inputs=prefix_inputs)

    def _encode_speech_prefix(self, request: Request) -> tuple[tuple[int, ...], dict[str, Any], str]:
        audio: Audio = request.context  # type: ignore[assignment]
        if audio.sample_rate_hz != SAMPLE_RATE_HZ:
            raise AdapterError(f"{self.name}: context audio of group '{request.group}' is {audio.sample_rate_hz} Hz; "
                               f"resample it to {SAMPLE_RATE_HZ} Hz")
        samples = np.ascontiguousarray(audio.samples, dtype=np.float32)
        duration_s = len(samples) / SAMPLE_RATE_HZ
        if self.max_audio_s is not None and duration_s > self.max_audio_s:
            raise AdapterError(f"{self.name}: context audio of group '{request.group}' lasts {duration_s:.1f} s, "
                               f"more than the {self.max_audio_s:g} s the model takes")
        prompt = request.context_prefix + self.audio_placeholder
        key = sha256_bytes(prompt.encode("utf-8") + samples.tobytes())
        if key not in self._prefixes:
            inputs = self.processor(text=prompt, **{self.audio_argument: [samples]}, sampling_rate=SAMPLE_RATE_HZ,
                                    return_tensors="pt")
            ids = tuple(inputs.pop("input_ids")[0].tolist())
            inputs.pop("attention_mask", None)
            self._prefixes[key] = (ids, dict(inputs))
        ids, inputs = self._prefixes[key]
        return ids, inputs, key
