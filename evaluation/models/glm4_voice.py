"""GLM-4-Voice (THUDM/Zhipu): a GLM-4-9B LM whose vocabulary holds 16,384 speech tokens ``<|audio_N|>`` (12.5 a
second, from a vector-quantized Whisper-large-v3 encoder), so speech and text interleave in one token stream.

Published loading (github THUDM/GLM-4-Voice, ``web_demo.py`` and ``speech_tokenizer/utils.py``): the LM and its
tokenizer come from ``THUDM/glm-4-voice-9b`` with ``trust_remote_code=True``; the speech tokenizer is
``WhisperVQEncoder.from_pretrained("THUDM/glm-4-voice-tokenizer")`` with a ``WhisperFeatureExtractor``, and
``extract_speech_token(model, feature_extractor, [(waveform, sample_rate)])`` returns each clip's token numbers.
The speech tokenizer's code lives in that GitHub repository, not on PyPI: ``repo=`` names a checkout of it.

Prompt (S2SBench, model markup elided in the paper): ``<instruction><|begin_of_audio|><|audio_N|>...<|end_of_audio|>``
then the continuation's text. No chat markup: the S2SBench numbers score the continuation as interleaved
pre-training data, and the chat template's system prompt would ask the model to answer, not to continue.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from s2sbench.evaluation.models.base import Audio
from s2sbench.evaluation.models.options import forwards_options
from s2sbench.evaluation.models.trust import require_remote_code
from s2sbench.evaluation.models.unit_lm import InterleavedUnitLMAdapter
from s2sbench.pipeline.core.errors import ConfigError

GLM4_VOICE_LM = "THUDM/glm-4-voice-9b"
GLM4_VOICE_TOKENIZER = "THUDM/glm-4-voice-tokenizer"


def audio_markup(tokens: Sequence[int]) -> str:
    """GLM-4-Voice's text form of speech token numbers."""
    return "".join(f"<|audio_{token}|>" for token in tokens)


class GLM4VoiceAdapter(InterleavedUnitLMAdapter):
    name = "glm-4-voice"
    speech_languages = frozenset({"en", "zh"})
    speech_open = "<|begin_of_audio|>"
    speech_to_text = "<|end_of_audio|>"
    text_to_speech = "<|begin_of_audio|>"


def speech_tokenizer_from_repo(repo: str | Path, tokenizer: str, device: str) -> Callable[[Audio], str]:
    """GLM-4-Voice's own speech tokenizer, imported from a checkout of github THUDM/GLM-4-Voice."""
    import torch

    repo = Path(repo)
    if not (repo / "speech_tokenizer" / "utils.py").is_file():
        raise ConfigError(f"{repo} is not a GLM-4-Voice checkout (no speech_tokenizer/utils.py): "
                                "git clone https://github.com/THUDM/GLM-4-Voice and pass its path as repo=")
    sys.path.insert(0, str(repo))
    from speech_tokenizer.modeling_whisper import WhisperVQEncoder
    from speech_tokenizer.utils import extract_speech_token
    from transformers import WhisperFeatureExtractor

    encoder = WhisperVQEncoder.from_pretrained(tokenizer).eval().to(device)
    features = WhisperFeatureExtractor.from_pretrained(tokenizer)

    def speech_text(audio: Audio) -> str:
        wave = torch.from_numpy(audio.samples).float()[None]
        return audio_markup(extract_speech_token(encoder, features, [(wave, audio.sample_rate_hz)])[0])

    return speech_text


@forwards_options(GLM4VoiceAdapter, fixed=("tokenizer", "speech_text", "model_id"))
def glm4_voice(model: str = GLM4_VOICE_LM, *, speech_tokenizer: str = GLM4_VOICE_TOKENIZER,
               repo: str | Path | None = None, trust_remote_code: bool = False, revision: str | None = None,
               dtype: Any = None, device: str | None = None, **options: Any) -> GLM4VoiceAdapter:
    """Load GLM-4-Voice as published (remote code: the ChatGLM model class and the speech tokenizer's repo)."""
    from transformers import AutoModel, AutoTokenizer

    from s2sbench.evaluation.models.causal import resolve_device, resolve_dtype

    require_remote_code(trust_remote_code, "glm-4-voice", f"{model} (ChatGLM code) and the GLM-4-Voice repository")
    if repo is None:
        raise ConfigError("glm-4-voice needs repo=<path to a checkout of github THUDM/GLM-4-Voice> for its speech "
                         "tokenizer")
    device = resolve_device(device)
    dtype = resolve_dtype(dtype, device)
    options.setdefault("shared_prefix", False)  # ChatGLM's remote code keeps its own cache format
    tokenizer = AutoTokenizer.from_pretrained(model, revision=revision, trust_remote_code=True)
    lm = AutoModel.from_pretrained(model, revision=revision, trust_remote_code=True, dtype=dtype)
    return GLM4VoiceAdapter(tokenizer=tokenizer, model=lm, model_id=model + (f"@{revision}" if revision else ""),
                            speech_text=speech_tokenizer_from_repo(repo, speech_tokenizer, device), device=device,
                            dtype=dtype, **options)
