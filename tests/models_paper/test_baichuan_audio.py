"""Baichuan-Audio: the audio message, the processor call, which tokens are scored, and the remote-code gate. The
real processor is remote code bound to the 7B checkpoint; a stand-in with its published interface (a list of prompts
in; ``input_ids``, ``audios``, ``encoder_length``, ``bridge_length`` out) reads the clip back from the written file."""

from __future__ import annotations

import json
from types import SimpleNamespace

import numpy as np
import pytest
from paper_helpers import char_tokenizer, clip

from s2sbench.evaluation.models.baichuan_audio import BaichuanAudioAdapter, baichuan_audio
from s2sbench.evaluation.models.unit_lm import RemoteCodeRefused
from s2sbench.evaluation.protocol import EvalItem, build_requests
from s2sbench.pipeline.audio import read_wav
from s2sbench.pipeline.tasks import Templates

START, END = "<audio_start_baichuan>", "<audio_end_baichuan>"
ITEM = EvalItem(item_id="s1", task="zh-sstorycloze", language="zh", voice="v", context="他们去了音乐会。",
                candidates=("他们", "音乐会"), right=0, context_audio=clip(60, 0.7))
TEMPLATES = Templates(text_context="{context}{continuation}", speech_context="下面是一段语音和文本交错的内容：<audio>{continuation}")


class StandInProcessor:
    """Replaces the audio JSON with one pad id per 80 ms of the file it names, as the real processor expands it."""

    def __init__(self, tokenizer):
        self.tokenizer, self.calls = tokenizer, []

    def __call__(self, prompts):
        import torch

        [prompt] = prompts
        self.calls.append(prompt)
        head, _, rest = prompt.partition(START)
        spec, _, _ = rest.partition(END)
        samples, rate = read_wav(json.loads(spec)["path"])
        n = len(samples) * 1000 // rate // 80
        ids = (self.tokenizer.encode(head + START, add_special_tokens=False) + [self.tokenizer.pad_token_id] * n
               + self.tokenizer.encode(END, add_special_tokens=False))
        return SimpleNamespace(input_ids=torch.tensor([ids]), audios=torch.from_numpy(samples)[None],
                               encoder_length=torch.tensor([n]), bridge_length=torch.tensor([n]))


@pytest.fixture
def adapter(tmp_path):
    tokenizer = char_tokenizer([START, END])
    return BaichuanAudioAdapter(tokenizer=tokenizer, model=None, processor=StandInProcessor(tokenizer),
                                audio_start=START, audio_end=END, model_id="stand-in", device="cpu",
                                audio_dir=tmp_path)


def test_speech_prompt_names_the_written_clip_and_scores_the_continuation(adapter):
    requests = build_requests(ITEM, TEMPLATES, "S->T")
    encoded = [adapter.encode(request) for request in requests]
    [prompt] = adapter.processor.calls  # the context is processed once for both candidates
    assert prompt.startswith("下面是一段语音和文本交错的内容：" + START) and prompt.endswith(END)
    samples, rate = read_wav(json.loads(prompt[len("下面是一段语音和文本交错的内容：" + START):-len(END)])["path"])
    assert rate == 16000 and np.allclose(samples, ITEM.context_audio.samples, atol=1 / 32767)
    assert encoded[0].prefix_ids == encoded[1].prefix_ids and encoded[0].prefix_key == encoded[1].prefix_key
    assert int(encoded[0].prefix_inputs["encoder_length"][0]) == 700 // 80
    assert [adapter.tokenizer.decode(list(e.continuation_ids)) for e in encoded] == ["他们", "音乐会"]


def test_text_context_is_the_lm_eval_pair(adapter):
    encoded = adapter.encode(build_requests(ITEM, TEMPLATES, "T->T")[1])
    assert adapter.tokenizer.decode(list(encoded.prefix_ids)) == "他们去了音乐会。"
    assert adapter.tokenizer.decode(list(encoded.continuation_ids)) == "音乐会"
    assert encoded.prefix_inputs == {}


def test_loading_needs_the_remote_code_flag():
    with pytest.raises(RemoteCodeRefused, match="baichuan-inc/Baichuan-Audio-Base"):
        baichuan_audio()
