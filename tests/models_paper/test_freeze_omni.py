"""Freeze-Omni: chat layout, audio-embedding splice and continuation-only scoring on a tiny random Qwen2 with a small
fbank front-end (the real encoder and adapter come from the Freeze-Omni repository and need its checkpoints)."""

from __future__ import annotations

import numpy as np
import pytest
from paper_helpers import char_tokenizer, clip, fbank_projector

from s2sbench.evaluation.models.freeze_omni import CHAT_PREFIX, FreezeOmniAdapter, freeze_omni
from s2sbench.evaluation.models.unit_lm import RemoteCodeRefused
from s2sbench.evaluation.protocol import EvalItem, build_requests
from s2sbench.pipeline.tasks import Templates

ITEM = EvalItem(item_id="q1", task="scmmlu", language="zh", voice="v", context="他们去了音乐会。",
                candidates=("他们", "音乐会"), right=0, context_audio=clip(50, 1.2))
TEMPLATES = Templates(text_context="{context}{continuation}", speech_context="下面是一段语音和文本交错的内容：<audio>{continuation}")


@pytest.fixture(scope="module")
def adapter():
    import torch
    from transformers import Qwen2Config, Qwen2ForCausalLM

    tokenizer = char_tokenizer(["<|im_start|>", "<|im_end|>"])
    torch.manual_seed(0)
    model = Qwen2ForCausalLM(Qwen2Config(vocab_size=len(tokenizer), hidden_size=32, intermediate_size=64,
                                         num_hidden_layers=2, num_attention_heads=2, num_key_value_heads=2))
    return FreezeOmniAdapter(tokenizer=tokenizer, model=model, embed_audio=fbank_projector(32), model_id="tiny",
                             device="cpu")


def test_speech_prompt_splices_one_placeholder_per_audio_frame(adapter):
    encoded = adapter.encode(build_requests(ITEM, TEMPLATES, "S->T")[1])
    start = encoded.prefix_inputs["audio_start"]
    n_audio = len(encoded.prefix_inputs["audio_embeds"])
    assert n_audio == 1.2 * 100 // 4 - 1  # 10 ms fbank frames (25 ms window), pooled by 4
    assert adapter.tokenizer.decode(list(encoded.prefix_ids[:start])) == CHAT_PREFIX + "下面是一段语音和文本交错的内容："
    assert len(encoded.prefix_ids) == start + n_audio
    assert adapter.tokenizer.decode(list(encoded.continuation_ids)) == "音乐会"


def test_speech_to_text_scores_equal_a_hand_built_forward(adapter):
    import torch

    requests = build_requests(ITEM, TEMPLATES, "S->T")
    results = adapter.loglikelihood(requests)
    for request, result in zip(requests, results):
        encoded = adapter.encode(request)
        start = encoded.prefix_inputs["audio_start"]
        text = adapter.model.get_input_embeddings()(torch.tensor([encoded.prefix_ids[:start]]))[0]
        cont = adapter.model.get_input_embeddings()(torch.tensor([encoded.continuation_ids]))[0]
        embeds = torch.cat([text, encoded.prefix_inputs["audio_embeds"], cont])[None]
        with torch.inference_mode():
            logprobs = torch.log_softmax(adapter.model(inputs_embeds=embeds).logits[0].float(), -1)
        first = len(encoded.prefix_ids) - 1
        expected = [logprobs[first + i, t].item() for i, t in enumerate(encoded.continuation_ids)]
        assert np.allclose(result.per_token, expected, atol=1e-4)
    adapter.shared_prefix = False
    try:
        plain = adapter.loglikelihood(requests)
    finally:
        adapter.shared_prefix = True
    assert np.allclose([r.sum_logprob for r in plain], [r.sum_logprob for r in results], atol=1e-4)


def test_text_to_text_puts_the_context_where_the_audio_goes(adapter):
    encoded = adapter.encode(build_requests(ITEM, TEMPLATES, "T->T")[0])
    assert adapter.tokenizer.decode(list(encoded.prefix_ids)) == CHAT_PREFIX + "他们去了音乐会。"
    assert adapter.tokenizer.decode(list(encoded.continuation_ids)) == "他们"


def test_loading_needs_the_remote_code_flag(tmp_path):
    with pytest.raises(RemoteCodeRefused):
        freeze_omni(tmp_path, llm=tmp_path, repo=tmp_path)
    with pytest.raises(FileNotFoundError, match="not a Freeze-Omni checkout"):
        freeze_omni(tmp_path, llm=tmp_path, repo=tmp_path, trust_remote_code=True)
