"""Qwen2.5-Omni's thinker (``Qwen2_5OmniThinkerForConditionalGeneration``): the part that reads audio and writes text.

Hub ids: ``Qwen/Qwen2.5-Omni-7B``, ``Qwen/Qwen2.5-Omni-3B``. Only the thinker is loaded (the talker and the
token-to-wave model produce speech, which likelihood scoring of text never needs), so memory is the text model's.
Its multimodal rotary positions are computed on the prefix pass and carried to the candidates by the model itself.
"""

from __future__ import annotations

from s2sbench.evaluation.models.speech_llm import SpeechLLMAdapter


class QwenOmniThinkerAdapter(SpeechLLMAdapter):
    name = "qwen2.5-omni"
    model_class = "Qwen2_5OmniThinkerForConditionalGeneration"
    audio_placeholder = "<|audio_bos|><|AUDIO|><|audio_eos|>"
    # the audio encoder takes 30 s windows but the processor chunks longer audio; 5 min keeps memory reasonable
    max_audio_s = 300.0
