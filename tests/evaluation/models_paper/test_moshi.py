"""Moshi: stream layout (pure), then T->T, S->T and S->S scoring on a tiny random-weight Moshi with a tiny Mimi."""

from __future__ import annotations

import numpy as np
import pytest
from tests.evaluation.models_paper.paper_helpers import clip

from s2sbench.evaluation.models import get_adapter
from s2sbench.evaluation.models.base import AdapterError, Request
from s2sbench.evaluation.models.moshi import ABSENT, MOSHI_TEXT_EPAD_ID, MOSHI_TEXT_PAD_ID, Streams, lay_out
from s2sbench.evaluation.protocol.modes import EvalItem, build_requests
from s2sbench.pipeline.items.templates import Templates

INIT_TEXT, INIT_AUDIO = 100, 64


def _codes(n_frames: int, base: int) -> np.ndarray:
    return np.arange(8 * n_frames).reshape(8, n_frames) % 60 + base


def test_speech_to_text_layout_pads_text_while_the_user_speaks():
    streams = lay_out("S->T", _codes(3, 0), [7, 8], prefix=[5], n_codebooks=8, text_initial=INIT_TEXT,
                      audio_initial=INIT_AUDIO)
    assert streams.text.tolist() == [INIT_TEXT, 5, MOSHI_TEXT_PAD_ID, MOSHI_TEXT_PAD_ID, MOSHI_TEXT_PAD_ID,
                                     MOSHI_TEXT_EPAD_ID, 7, 8]
    assert streams.scored_text == (6, 7) and streams.scored_audio == ()
    user = streams.user
    assert user[0].tolist() == [INIT_AUDIO, ABSENT, 0, 1, 2, INIT_AUDIO, ABSENT, ABSENT]  # semantic: frames 0-2
    assert user[1, 2:6].tolist() == [INIT_AUDIO, 3, 4, 5]  # acoustic codebooks one column late
    assert (streams.moshi[:, 1:] == ABSENT).all()


def test_speech_to_speech_layout_scores_continuation_codes_with_the_acoustic_delay():
    streams = lay_out("S->S", _codes(2, 0), _codes(2, 10), prefix=[], n_codebooks=8, text_initial=INIT_TEXT,
                      audio_initial=INIT_AUDIO, audio_codebooks=2)
    # context frames 0-1, continuation frames 2-3: semantic in columns 3-4, acoustic in columns 4-5
    assert streams.scored_audio == ((3, 0), (4, 1), (4, 0), (5, 1))
    assert [int(streams.moshi[k, c]) for c, k in streams.scored_audio] == [10, 12, 11, 13]
    assert streams.scored_text == () and (streams.user[:, 1:] == ABSENT).all()


def test_text_to_speech_is_refused():
    from s2sbench.evaluation.models.moshi import request_mode
    from s2sbench.evaluation.models.base import Audio

    with pytest.raises(AdapterError, match="T->S"):
        request_mode(Request(context="text", continuation=Audio(np.zeros(10, np.float32))))


@pytest.fixture(scope="module")
def adapter(tiny_moshi_dir):
    return get_adapter("moshi", model=str(tiny_moshi_dir), device="cpu")


def _item():
    return EvalItem(item_id="s1", task="sstorycloze", language="en", voice="v", context="they went to a show.",
                    candidates=("it was fun.", "she left."), right=0, context_audio=clip(20, 1.0),
                    candidate_audio=(clip(21, 0.8), clip(22, 0.5)))


def test_embeddings_match_transformers_forward_when_every_stream_is_present(adapter):
    import torch

    model = adapter.model
    codes = adapter.mimi_codes(clip(20, 1.0))
    assert len(np.unique(codes)) > 8  # random centroids give varied codes
    text = np.arange(codes.shape[1]) % 20 + 4
    streams = Streams(text, codes, codes[:, ::-1].copy())
    with torch.inference_mode():
        ours = model.decoder(inputs_embeds=adapter._embed(streams)).logits
        theirs = model(input_ids=torch.from_numpy(text)[None], moshi_audio_codes=torch.from_numpy(codes)[None],
                       user_audio_codes=torch.from_numpy(streams.user)[None]).logits
    assert torch.allclose(ours, theirs, atol=1e-5)


def test_text_to_text_is_the_text_stream_alone(adapter):
    import torch

    [request, _] = build_requests(_item(), Templates(), "T->T")
    [result] = adapter.loglikelihood([request])
    context, continuation = adapter.text_ids(request.context), adapter.text_ids(request.continuation)
    assert result.n_tokens == len(continuation) == len(" it was fun.")
    ids = [adapter.model.config.vocab_size] + context + continuation
    with torch.inference_mode():
        logprobs = torch.log_softmax(adapter.model.decoder(input_ids=torch.tensor([ids])).logits[0].float(), -1)
    expected = [logprobs[len(ids) - len(continuation) - 1 + i, token].item() for i, token in enumerate(continuation)]
    assert np.allclose(result.per_token, expected, atol=1e-5)


def test_speech_to_text_scores_the_text_continuation_after_the_user_audio(adapter):
    requests = build_requests(_item(), Templates(), "S->T")
    results = adapter.loglikelihood(requests)
    assert [r.n_tokens for r in results] == [len("it was fun."), len("she left.")]  # no separator after <audio>
    other = build_requests(EvalItem(**{**_item().__dict__, "context_audio": clip(30, 1.0)}), Templates(), "S->T")
    assert adapter.loglikelihood(other)[0].sum_logprob != pytest.approx(results[0].sum_logprob, abs=1e-6)


def test_speech_to_speech_scores_the_continuation_mimi_codes(adapter):
    requests = build_requests(_item(), Templates(), "S->S")
    frames = [adapter.mimi_codes(request.continuation).shape[1] for request in requests]
    assert frames == [10, 7]  # 12.5 frames a second
    semantic = adapter.loglikelihood(requests)
    assert [r.n_tokens for r in semantic] == frames
    adapter.audio_codebooks = 8
    try:
        results = adapter.loglikelihood(requests)
    finally:
        adapter.audio_codebooks = 1
    assert [r.n_tokens for r in results] == [8 * n for n in frames]
    for one, eight in zip(semantic, results):  # cells are (frame, codebook) in order: codebook 0 comes first
        assert np.allclose(one.per_token, eight.per_token[0::8], atol=1e-5)


def test_codebooks_out_of_range_are_refused(tiny_moshi_dir):
    with pytest.raises(ValueError, match="audio_codebooks must be 1..8"):
        get_adapter("moshi", model=str(tiny_moshi_dir), device="cpu", audio_codebooks=9)
