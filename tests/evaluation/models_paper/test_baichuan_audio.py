"""Baichuan-Audio through its published loading path, offline: a tiny checkpoint whose modelling code sits next to its
config (``tiny_remote.py``: a small Llama with Baichuan-Audio's ``bind_processor``/processor interface) is
loaded by ``AutoModelForCausalLM`` with ``trust_remote_code=True``, so the gate, the binding, the audio message, the
written clip and the continuation-only scores all run for real."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import numpy as np
import pytest
from tests.evaluation.models_paper.paper_helpers import char_tokenizer, clip, tiny_llama

from s2sbench.evaluation.models import get_adapter
from s2sbench.evaluation.protocol.modes import EvalItem, build_requests
from s2sbench.pipeline.speech.audio import decode_audio
from s2sbench.pipeline.items.templates import Templates

START, END = "<audio_start_baichuan>", "<audio_end_baichuan>"
INSTRUCTION = "下面是一段语音和文本交错的内容："
ITEM = EvalItem(item_id="s1", task="zh-sstorycloze", language="zh", voice="v", context="他们去了音乐会。",
                candidates=("他们", "音乐会"), right=0, context_audio=clip(60, 0.7))
TEMPLATES = Templates(text_context="{context}{continuation}", speech_context=INSTRUCTION + "<audio>{continuation}")


@pytest.fixture(scope="module")
def checkpoint(tmp_path_factory) -> Path:
    path = tmp_path_factory.mktemp("tiny-baichuan-audio")
    tokenizer = char_tokenizer([START, END])
    model = tiny_llama(len(tokenizer))
    model.config.pad_token_id = tokenizer.pad_token_id
    model.config.audio_config = {"audio_start_token_id": tokenizer.convert_tokens_to_ids(START),
                                 "audio_end_token_id": tokenizer.convert_tokens_to_ids(END)}
    model.config.auto_map = {"AutoModelForCausalLM": "tiny_remote.TinyAudioLM"}
    model.save_pretrained(path)
    tokenizer.save_pretrained(path)
    shutil.copy(Path(__file__).with_name("tiny_remote.py"), path)
    return path


@pytest.fixture(scope="module")
def adapter(checkpoint, tmp_path_factory):
    return get_adapter("baichuan-audio", model=str(checkpoint), trust_remote_code=True, device="cpu",
                       audio_dir=tmp_path_factory.mktemp("clips"))


def test_remote_code_needs_the_flag(checkpoint):
    with pytest.raises(ValueError, match="trust_remote_code=True"):
        get_adapter("baichuan-audio", model=str(checkpoint))


def test_speech_prompt_names_the_written_clip_and_scores_the_continuation(adapter):
    requests = build_requests(ITEM, TEMPLATES, "S->T")
    encoded = [adapter.encode(request) for request in requests]
    [prompt] = list(adapter._prefixes)  # the context is processed once for both candidates
    assert prompt.startswith(INSTRUCTION + START) and prompt.endswith(END)
    samples, rate = decode_audio(Path(json.loads(prompt[len(INSTRUCTION + START) : -len(END)])["path"]), "prompt clip")
    assert rate == 16000 and np.allclose(samples, ITEM.context_audio.samples, atol=1 / 32767)
    assert encoded[0].prefix_ids == encoded[1].prefix_ids
    assert int(encoded[0].prefix_inputs["encoder_length"][0]) == 700 // 80
    assert [adapter.tokenizer.decode(list(e.continuation_ids)) for e in encoded] == ["他们", "音乐会"]


def test_scores_equal_one_forward_of_the_remote_model(adapter):
    import torch

    requests = build_requests(ITEM, TEMPLATES, "S->T")
    results = adapter.loglikelihood(requests)
    for request, result in zip(requests, results):
        encoded = adapter.encode(request)
        ids = torch.tensor([list(encoded.prefix_ids) + list(encoded.continuation_ids)])
        with torch.inference_mode():
            logits = adapter.model(input_ids=ids, **encoded.prefix_inputs).logits[0].float()
        logprobs = torch.log_softmax(logits, -1)
        first = len(encoded.prefix_ids) - 1
        expected = [logprobs[first + i, t].item() for i, t in enumerate(encoded.continuation_ids)]
        assert result.n_tokens == len(encoded.continuation_ids)
        assert np.allclose(result.per_token, expected, atol=1e-4)


def test_text_context_is_the_lm_eval_pair(adapter):
    [result] = adapter.loglikelihood(build_requests(ITEM, TEMPLATES, "T->T")[1:])
    encoded = adapter.encode(build_requests(ITEM, TEMPLATES, "T->T")[1])
    assert adapter.tokenizer.decode(list(encoded.prefix_ids)) == "他们去了音乐会。"
    assert result.n_tokens == len("音乐会")
