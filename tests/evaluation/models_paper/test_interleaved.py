"""GLM-4-Voice and Spirit LM: prompt layout, which tokens are scored, speech tokenization calls and the remote-code
gate, on a tiny random Llama whose vocabulary holds each family's markup and speech tokens, with the tiny HuBERT +
k-means as the speech tokenizer (the families' own tokenizers need downloads)."""

from __future__ import annotations

import numpy as np
import pytest
from tests.evaluation.models_paper.paper_helpers import char_tokenizer, clip, tiny_llama

from s2sbench.evaluation.models.glm4_voice import GLM4VoiceAdapter, audio_markup, glm4_voice
from s2sbench.evaluation.models.spirit_lm import SpiritLMAdapter, spirit_lm
from s2sbench.evaluation.models.trust import RemoteCodeRefused
from s2sbench.evaluation.protocol.modes import EvalItem, build_requests
from s2sbench.pipeline.items.templates import Templates

N_UNITS = 20
ITEM = EvalItem(item_id="s1", task="sstorycloze", language="en", voice="v", context="they went to a show.",
                candidates=("it was fun.", "she left."), right=0, context_audio=clip(40, 1.5),
                candidate_audio=(clip(41, 0.6), clip(42, 0.5)))


@pytest.fixture(scope="module")
def glm(tiny_unit_encoder):
    tokenizer = char_tokenizer(["<|begin_of_audio|>", "<|end_of_audio|>"] + [f"<|audio_{u}|>" for u in range(N_UNITS)])
    return GLM4VoiceAdapter(tokenizer=tokenizer, model=tiny_llama(len(tokenizer)), model_id="tiny-glm",
                            speech_text=lambda audio: audio_markup(tiny_unit_encoder.encode(audio)), device="cpu")


@pytest.fixture(scope="module")
def spirit(tiny_unit_encoder):
    tokenizer = char_tokenizer(["[Text]", "[Speech]"] + [f"[Hu{u}]" for u in range(N_UNITS)], add_bos=True)
    return SpiritLMAdapter(tokenizer=tokenizer, model=tiny_llama(len(tokenizer)), model_id="tiny-spirit",
                           speech_text=lambda audio: "".join(f"[Hu{u}]" for u in tiny_unit_encoder.encode(audio)),
                           device="cpu")


def _decode(adapter, ids) -> str:
    return adapter.tokenizer.decode(list(ids))


def test_glm_speech_to_text_prompt_and_scored_tokens(glm, tiny_unit_encoder):
    requests = build_requests(ITEM, Templates(), "S->T")
    encoded = glm.encode(requests[0])
    units = audio_markup(tiny_unit_encoder.encode(ITEM.context_audio))
    assert _decode(glm, encoded.prefix_ids) == (
        "Below is a segment of alternating speech and text content: <|begin_of_audio|>" + units + "<|end_of_audio|>")
    assert _decode(glm, encoded.continuation_ids) == "it was fun."
    assert len(encoded.continuation_ids) == len("it was fun.")


def test_glm_speech_to_speech_continues_one_speech_span(glm, tiny_unit_encoder):
    encoded = glm.encode(build_requests(ITEM, Templates(), "S->S")[1])
    assert _decode(glm, encoded.prefix_ids).endswith(audio_markup(tiny_unit_encoder.encode(ITEM.context_audio)))
    assert "<|end_of_audio|>" not in _decode(glm, encoded.prefix_ids)
    assert _decode(glm, encoded.continuation_ids) == audio_markup(tiny_unit_encoder.encode(ITEM.candidate_audio[1]))


def test_glm_text_to_speech_opens_audio_after_the_text(glm):
    encoded = glm.encode(build_requests(ITEM, Templates(), "T->S")[0])
    assert _decode(glm, encoded.prefix_ids) == "they went to a show.<|begin_of_audio|>"


@pytest.mark.parametrize("mode", ["T->T", "S->T", "S->S", "T->S"])
def test_scores_equal_one_full_forward(glm, mode):
    import torch

    requests = build_requests(ITEM, Templates(), mode)
    results = glm.loglikelihood(requests)
    for request, result in zip(requests, results):
        encoded = glm.encode(request)
        ids = list(encoded.prefix_ids) + list(encoded.continuation_ids)
        with torch.inference_mode():
            logprobs = torch.log_softmax(glm.model(torch.tensor([ids])).logits[0].float(), -1)
        start = len(encoded.prefix_ids) - 1
        expected = [logprobs[start + i, token].item() for i, token in enumerate(encoded.continuation_ids)]
        assert result.n_tokens == len(encoded.continuation_ids)
        assert np.allclose(result.per_token, expected, atol=1e-4)


def test_spirit_prompts_follow_its_build_prompt(spirit, tiny_unit_encoder):
    units = "".join(f"[Hu{u}]" for u in tiny_unit_encoder.encode(ITEM.context_audio))
    speech_to_text = spirit.encode(build_requests(ITEM, Templates(speech_context="<audio>{continuation}"), "S->T")[0])
    assert speech_to_text.prefix_ids[0] == spirit.tokenizer.bos_token_id
    assert _decode(spirit, speech_to_text.prefix_ids[1:]) == "[Speech]" + units + "[Text]"
    with_instruction = spirit.encode(build_requests(ITEM, Templates(), "S->T")[0])
    assert _decode(spirit, with_instruction.prefix_ids[1:]).startswith("[Text]Below is a segment")
    text_to_text = spirit.encode(build_requests(ITEM, Templates(), "T->T")[0])
    assert _decode(spirit, text_to_text.prefix_ids) == "<s>[Text]they went to a show."
    assert _decode(spirit, text_to_text.continuation_ids) == " it was fun."
    text_to_speech = spirit.encode(build_requests(ITEM, Templates(), "T->S")[0])
    assert _decode(spirit, text_to_speech.prefix_ids[1:]) == "[Text]they went to a show.[Speech]"


def test_remote_code_and_missing_packages_are_refused_before_any_download(monkeypatch):
    with pytest.raises(RemoteCodeRefused, match="trust_remote_code=True"):
        glm4_voice()
    monkeypatch.setattr("importlib.util.find_spec", lambda name, *a: None)
    with pytest.raises(ModuleNotFoundError, match="facebookresearch/spiritlm"):
        spirit_lm()


FAKE_GLM_REPO = {
    "speech_tokenizer/__init__.py": "",
    # stands for GLM-4-Voice's WhisperVQEncoder: nearest of 20 codes of 8-frame mel averages (12.5 a second)
    "speech_tokenizer/modeling_whisper.py": '''
import os

import numpy as np


class WhisperVQEncoder:
    def __init__(self, codebook):
        self.codebook = codebook

    @classmethod
    def from_pretrained(cls, path):
        return cls(np.load(os.path.join(path, "codebook.npy")))

    def eval(self):
        return self

    def to(self, device):
        return self
''',
    "speech_tokenizer/utils.py": '''
def extract_speech_token(model, feature_extractor, utts):
    tokens = []
    for audio, sample_rate in utts:
        mel = feature_extractor(audio[0].numpy(), sampling_rate=sample_rate, return_tensors="np").input_features[0]
        n = audio.shape[-1] * 25 // (2 * sample_rate)
        frames = mel[:, : n * 8].T.reshape(n, 8, -1).mean(1)
        tokens.append((frames @ model.codebook).argmax(1).tolist())
    return tokens
''',
}


def test_glm_factory_loads_remote_code_and_the_repo_speech_tokenizer(tmp_path):
    import shutil
    from pathlib import Path

    from transformers import WhisperFeatureExtractor

    from s2sbench.evaluation.models import get_adapter

    lm_dir, tokenizer_dir, repo = tmp_path / "glm-4-voice-9b", tmp_path / "glm-4-voice-tokenizer", tmp_path / "repo"
    tokenizer = char_tokenizer(["<|begin_of_audio|>", "<|end_of_audio|>"] + [f"<|audio_{u}|>" for u in range(N_UNITS)])
    model = tiny_llama(len(tokenizer))
    model.config.auto_map = {"AutoModel": "tiny_remote.TinyChatGLM"}
    model.save_pretrained(lm_dir)
    tokenizer.save_pretrained(lm_dir)
    shutil.copy(Path(__file__).with_name("tiny_remote.py"), lm_dir)
    WhisperFeatureExtractor().save_pretrained(tokenizer_dir)
    np.save(tokenizer_dir / "codebook.npy", np.random.default_rng(0).standard_normal((80, N_UNITS)))
    for relative, text in FAKE_GLM_REPO.items():
        (repo / relative).parent.mkdir(parents=True, exist_ok=True)
        (repo / relative).write_text(text)

    adapter = get_adapter("glm-4-voice", model=str(lm_dir), speech_tokenizer=str(tokenizer_dir), repo=str(repo),
                          trust_remote_code=True, device="cpu")
    requests = build_requests(ITEM, Templates(), "S->T")
    results = adapter.loglikelihood(requests)
    assert [r.n_tokens for r in results] == [len("it was fun."), len("she left.")]
    assert len(adapter.speech_ids(ITEM.context_audio)) == int(1.5 * 12.5)
    prompt = adapter.tokenizer.decode(list(adapter.encode(requests[0]).prefix_ids))
    assert prompt.count("<|audio_") == int(1.5 * 12.5) and prompt.endswith("<|end_of_audio|>")
