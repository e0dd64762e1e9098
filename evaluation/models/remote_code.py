"""Template adapter for speech LLMs whose modelling code lives with the checkpoint (``trust_remote_code``).

Families such as Baichuan-Audio (``baichuan-inc/Baichuan-Audio-Base``), Kimi-Audio (``moonshotai/Kimi-Audio-7B``)
or GLM-4-Voice ship Python code in their hub repositories; loading them runs that code. This adapter runs it only
when the user passes ``trust_remote_code=True`` (CLI: ``--model-arg trust_remote_code=true``) and then loads the
checkpoint through ``auto_class`` and ``AutoProcessor`` with the prompt's ``audio_placeholder``. A family whose
processor does not follow the transformers convention (text with a placeholder + audio -> ``input_ids`` + features)
subclasses this and overrides ``_load_processor`` or ``_encode_speech_prefix``: scoring, batching and the
shared-prefix cache stay as they are. Pin ``revision=`` to the commit whose code you read.
"""

from __future__ import annotations

from typing import Any

from s2sbench.evaluation.models.speech_llm import SpeechLLMAdapter
from s2sbench.evaluation.models.trust import require_remote_code
from s2sbench.pipeline.core.errors import ConfigError


class RemoteCodeAdapter(SpeechLLMAdapter):
    name = "remote-code"
    kind = "speech LLM (remote code)"
    runs_remote_code = True

    def __init__(self, model: str, *, trust_remote_code: bool = False, audio_placeholder: str = "<|AUDIO|>",
                 auto_class: str = "AutoModelForCausalLM", max_audio_s: float | None = 30.0, **options: Any) -> None:
        require_remote_code(trust_remote_code, self.name, f"the repository of '{model}' (pin revision=<commit>)")
        self.audio_placeholder = audio_placeholder
        self.max_audio_s = float(max_audio_s) if max_audio_s is not None else None
        if not auto_class.startswith("AutoModel"):
            raise ConfigError(f"auto_class must name a transformers AutoModel* class, got '{auto_class}'")
        self.auto_class = auto_class
        super().__init__(model, trust_remote_code=True, **options)

    def _load_model(self, model: str, **options: Any) -> Any:
        import transformers

        return getattr(transformers, self.auto_class).from_pretrained(model, **options)
