"""Freeze-Omni: chat layout, audio-embedding splice and continuation-only scoring on a tiny random Qwen2 with a small
fbank front-end (the real encoder and adapter come from the Freeze-Omni repository and need its checkpoints)."""

from __future__ import annotations

import numpy as np
import pytest
from tests.evaluation.models_paper.paper_helpers import char_tokenizer, clip, fbank_projector, plain_scores

from s2sbench.evaluation.models.freeze_omni import CHAT_PREFIX, FreezeOmniAdapter, freeze_omni
from s2sbench.evaluation.models.trust import RemoteCodeRefused
from s2sbench.evaluation.protocol.modes import EvalItem, build_requests
from s2sbench.pipeline.core.errors import ConfigError
from s2sbench.pipeline.items.templates import Templates

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
    plain = plain_scores(adapter, requests)
    assert np.allclose([r.sum_logprob for r in plain], [r.sum_logprob for r in results], atol=1e-4)


def test_text_to_text_puts_the_context_where_the_audio_goes(adapter):
    encoded = adapter.encode(build_requests(ITEM, TEMPLATES, "T->T")[0])
    assert adapter.tokenizer.decode(list(encoded.prefix_ids)) == CHAT_PREFIX + "他们去了音乐会。"
    assert adapter.tokenizer.decode(list(encoded.continuation_ids)) == "他们"


def test_loading_needs_the_remote_code_flag(tmp_path):
    with pytest.raises(RemoteCodeRefused):
        freeze_omni(tmp_path, llm=tmp_path, repo=tmp_path)
    with pytest.raises(ConfigError, match="not a Freeze-Omni checkout"):
        freeze_omni(tmp_path, llm=tmp_path, repo=tmp_path, trust_remote_code=True)


# Stands for the Freeze-Omni repository's code: the pipeline builds an object with the published attribute names
# (encoder.infer with its block buffer, adpter with its cache, llm_decoder, tokenizer) over a tiny Qwen2, and the
# chunk processor hands out 16 fbank frames per 160 ms of audio.
FAKE_REPO = {
    "bin/inference.py": '''
import torch
import torchaudio.compliance.kaldi as kaldi


class audioEncoderProcessor:
    def get_chunk_size(self):
        return 160 * 16

    def process(self, audio):
        padded = torch.cat([audio, torch.zeros(240)])[None] * 32768
        return kaldi.fbank(padded, dither=0, frame_length=25, frame_shift=10, num_mel_bins=80)[None]
''',
    "models/__init__.py": "",
    "models/pipeline.py": '''
from types import SimpleNamespace

import torch
from transformers import AutoModelForCausalLM, PreTrainedTokenizerFast


class _Encoder(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.enc = [None, SimpleNamespace(num_blocks=2)]
        self.proj = torch.nn.Linear(80, 16)

    def infer(self, speech, buffer, offset, mask, pe_index):
        assert len(buffer) == 2
        return self.proj(speech), buffer, None, None, pe_index + speech.shape[1]


class _Adapter(torch.nn.Module):
    def __init__(self, hidden):
        super().__init__()
        self.proj = torch.nn.Linear(16, hidden)

    def forward(self, encoder_out, mask, cache=None, return_cache=False):
        pooled = encoder_out.reshape(1, -1, 4, 16).mean(2)  # 4x down-sampling, as the CNN adapter does
        return self.proj(pooled) * 0.02, mask, (cache or 0) + 1


class inferencePipeline:
    def __init__(self, args):
        torch.manual_seed(0)
        llm = AutoModelForCausalLM.from_pretrained(args.llm_path)
        self.model = SimpleNamespace(encoder=_Encoder(), adpter=_Adapter(llm.config.hidden_size), llm_decoder=llm,
                                     # the tests' character tokenizer; AutoTokenizer would pick Qwen2's class
                                     tokenizer=PreTrainedTokenizerFast.from_pretrained(args.llm_path))
''',
}


def test_factory_feeds_the_repo_encoder_chunk_by_chunk(tmp_path, adapter):
    for relative, text in FAKE_REPO.items():
        (tmp_path / "repo" / relative).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / "repo" / relative).write_text(text)
    adapter.model.save_pretrained(tmp_path / "qwen2")
    adapter.tokenizer.save_pretrained(tmp_path / "qwen2")
    loaded = freeze_omni(tmp_path / "ckpt", llm=tmp_path / "qwen2", repo=tmp_path / "repo", trust_remote_code=True,
                         device="cpu", dtype="float32")
    requests = build_requests(ITEM, TEMPLATES, "S->T")
    embeds = loaded.embed_audio(ITEM.context_audio)
    assert embeds.shape == (8 * 4, 32)  # 1.2 s -> 8 chunks of 160 ms, 16 fbank frames each, pooled by 4
    results = loaded.loglikelihood(requests)
    assert [r.n_tokens for r in results] == [len("他们"), len("音乐会")]
