from __future__ import annotations

import numpy as np
import pytest
from tests.evaluation.models import tiny_models

from s2sbench.evaluation.models import AdapterError, Audio, Request, get_adapter

PREFIX = "Below is a segment of alternating speech and text content:"
ENDINGS = ["She disliked her roommate.", " They went to a music show together.", "他们一起去了音乐会。"]


def speech_requests(contexts: list[Audio]) -> list[Request]:
    return [Request(context=audio, continuation=ending, group=f"item{i}", context_prefix=PREFIX)
            for i, audio in enumerate(contexts) for ending in ENDINGS]


def check_adapter(adapter_name: str, path, contexts) -> None:
    """The checks every speech LLM adapter must pass on its tiny random model."""
    shared = get_adapter(adapter_name, model=str(path), batch_size=2)
    plain = get_adapter(adapter_name, model=str(path), shared_prefix=False)
    requests = speech_requests(contexts) + [Request(context="Karen went to college.", continuation=" She smiled.")]
    fast, reference = shared.loglikelihood(requests), plain.loglikelihood(requests)
    for a, b in zip(fast, reference):
        assert a.sum_logprob < 0 and a.n_tokens == b.n_tokens
        np.testing.assert_allclose(a.per_token, b.per_token, atol=1e-4)
    # only the continuation is scored: its token count does not depend on the audio
    assert fast[0].n_tokens == fast[len(ENDINGS)].n_tokens
    assert shared.supports("S->T", "en") == (True, "")
    too_long = Audio(np.zeros(int(16000 * (shared.max_audio_s + 1)), dtype=np.float32))
    with pytest.raises(AdapterError, match="lasts"):
        shared.loglikelihood([Request(context=too_long, continuation="x", group="long")])


@pytest.fixture(scope="module")
def short_contexts(spoken_contexts):
    return [Audio(clip.samples[: 16000 * 2]) for clip in spoken_contexts]


def test_qwen2_audio(tmp_path, short_contexts, monkeypatch):
    path = tiny_models.save_qwen2_audio(tmp_path)
    check_adapter("qwen2-audio", path, short_contexts)
    # scoring in slices of one audio (to bound feature memory) changes nothing but the peak memory
    adapter = get_adapter("qwen2-audio", model=str(path))
    whole = adapter.loglikelihood(speech_requests(short_contexts))
    monkeypatch.setattr("s2sbench.evaluation.models.speech_llm.AUDIOS_PER_SLICE", 1)
    sliced = adapter.loglikelihood(speech_requests(short_contexts))
    np.testing.assert_allclose([r.sum_logprob for r in sliced], [r.sum_logprob for r in whole], atol=1e-5)


def test_qwen2_5_omni_thinker(tmp_path, short_contexts):
    check_adapter("qwen2.5-omni", tiny_models.save_qwen_omni_thinker(tmp_path), short_contexts)


def test_granite_speech(tmp_path, short_contexts):
    check_adapter("granite-speech", tiny_models.save_granite_speech(tmp_path), short_contexts)


def test_remote_code_refuses_without_the_flag(tmp_path):
    with pytest.raises(ValueError, match="trust_remote_code=True"):
        get_adapter("remote-code", model=str(tmp_path / "not-even-read"))
    with pytest.raises(ValueError, match="trust_remote_code=True"):
        get_adapter("remote-code", model=str(tmp_path), trust_remote_code="no")


def test_remote_code_template_runs_checkpoint_code_when_trusted(tmp_path, short_contexts):
    path = tiny_models.save_remote_code_model(tmp_path)
    adapter = get_adapter("remote-code", model=str(path), trust_remote_code=True,
                          audio_placeholder="<|audio_bos|><|AUDIO|><|audio_eos|>")
    assert type(adapter.model).__name__ == "TinyAudioLM"  # the class from the checkpoint's own file
    result = adapter.loglikelihood(speech_requests(short_contexts[:1]))
    assert all(r.sum_logprob < 0 for r in result)
