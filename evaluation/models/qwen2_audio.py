"""Qwen2-Audio (``Qwen2AudioForConditionalGeneration``): Whisper-style encoder, Qwen2 7B text model.

Hub ids: ``Qwen/Qwen2-Audio-7B`` (base: the right one for likelihood scoring), ``Qwen/Qwen2-Audio-7B-Instruct``.
The processor pads every clip to the encoder's 30 s window, so longer contexts are refused, not cut.
"""

from __future__ import annotations

from s2sbench.evaluation.models.speech_llm import SpeechLLMAdapter


class Qwen2AudioAdapter(SpeechLLMAdapter):
    name = "qwen2-audio"
    model_class = "Qwen2AudioForConditionalGeneration"
    audio_placeholder = "<|audio_bos|><|AUDIO|><|audio_eos|>"
    max_audio_s = 30.0
