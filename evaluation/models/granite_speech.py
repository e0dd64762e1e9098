"""IBM Granite Speech (``GraniteSpeechForConditionalGeneration``): Conformer encoder, Q-Former projector, Granite LM.

Hub ids: ``ibm-granite/granite-speech-3.3-2b``, ``ibm-granite/granite-speech-3.3-8b`` (English speech; 3.3 also
translates from French, German, Spanish, Portuguese). The checkpoints carry a LoRA adapter meant to be active only
when audio is in the input (install ``peft`` to load it); as the model's own ``generate`` does, the adapter is switched
on for speech contexts and off for text ones, for the prefix and the candidates alike.
"""

from __future__ import annotations

from s2sbench.evaluation.models.speech_llm import SpeechLLMAdapter


class GraniteSpeechAdapter(SpeechLLMAdapter):
    name = "granite-speech"
    model_class = "GraniteSpeechForConditionalGeneration"
    audio_placeholder = "<|audio|>"
    max_audio_s = 300.0
    speech_languages = frozenset({"en", "fr", "de", "es", "pt"})

    def _prepare(self, with_audio: bool) -> None:
        if getattr(self.model, "_hf_peft_config_loaded", False):
            if with_audio:
                self.model.enable_adapters()
            else:
                self.model.disable_adapters()
