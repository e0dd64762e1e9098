from __future__ import annotations

import math

import numpy as np
import pytest

from s2sbench.evaluation.models import AdapterError, Audio, Request, get_adapter, list_adapters

PAIRS = [
    ("Karen was assigned a roommate her first year of college.", " Their first meeting went well."),
    ("Karen was assigned a roommate her first year of college.", " She disliked her roommate."),
    ("Karen was assigned a roommate her first year of college. ", "They went to a music show together."),
    ("", "She felt a lot closer to her roommate."),
    ("下面是一段语音和文本交错的内容：", "他们一起去了音乐会。"),
]


def requests() -> list[Request]:
    return [Request(context=c, continuation=x, group=f"g{hash(c) % 97}") for c, x in PAIRS]


def test_text_scores_equal_lm_eval_loglikelihood(tiny_gpt2_dir):
    from lm_eval.api.instance import Instance
    from lm_eval.models.huggingface import HFLM

    ours = get_adapter("hf-causal", model=str(tiny_gpt2_dir), batch_size=3).loglikelihood(requests())
    reference = HFLM(pretrained=str(tiny_gpt2_dir), device="cpu", batch_size=2, dtype="float32")
    instances = [Instance(request_type="loglikelihood", doc={}, arguments=pair, idx=i) for i, pair in enumerate(PAIRS)]
    theirs = reference.loglikelihood(instances, disable_tqdm=True)
    for mine, (logprob, _greedy) in zip(ours, theirs):
        assert mine.sum_logprob == pytest.approx(logprob, abs=1e-4)


def test_a_token_across_the_boundary_scores_the_whole_continuation(tiny_gpt2_dir):
    """The tiny BPE has the token ' roommate': after the context 'her room', lm-eval's split of the joined ids would
    score nothing (it loses 'mate'); the continuation is tokenized on its own instead, and scored."""
    from transformers import AutoTokenizer

    from s2sbench.evaluation.models.causal import encode_text_pair

    tokenizer = AutoTokenizer.from_pretrained(tiny_gpt2_dir)
    context, continuation = "She disliked her room", "mate"
    context_ids, joined = tokenizer.encode(context), tokenizer.encode(context + continuation)
    assert joined[: len(context_ids)] != context_ids  # the merge this test is about
    prefix, scored = encode_text_pair(tokenizer, context, continuation)
    assert prefix == context_ids and tokenizer.decode(scored) == continuation
    [result] = get_adapter("hf-causal", model=str(tiny_gpt2_dir)).loglikelihood(
        [Request(context=context, continuation=continuation, group="g")])
    assert result.n_tokens == len(scored) > 0


@pytest.mark.parametrize("batch_size", [2, 32])  # 2: an item per pass; 32: every item packed into one pass
def test_shared_prefix_path_equals_plain_path(tiny_gpt2_dir, batch_size):
    shared = get_adapter("hf-causal", model=str(tiny_gpt2_dir), batch_size=batch_size).loglikelihood(requests())
    plain = get_adapter("hf-causal", model=str(tiny_gpt2_dir), shared_prefix=False, batch_size=1).loglikelihood(
        requests())
    for a, b in zip(shared, plain):
        assert a.n_tokens == b.n_tokens
        np.testing.assert_allclose(a.per_token, b.per_token, atol=1e-4)


def test_scores_are_log_probabilities(tiny_gpt2_dir):
    adapter = get_adapter("hf-causal", model=str(tiny_gpt2_dir))
    for result in adapter.loglikelihood(requests()):
        assert result.sum_logprob < 0
        assert len(result.per_token) == result.n_tokens
        assert math.isclose(sum(result.per_token), result.sum_logprob, rel_tol=1e-6)
        assert result.mean_nll > 0


def test_text_adapter_refuses_audio(tiny_gpt2_dir):
    adapter = get_adapter("hf-causal", model=str(tiny_gpt2_dir))
    audio = Audio(np.zeros(1600, dtype=np.float32))
    with pytest.raises(AdapterError, match="text only.*g1"):
        adapter.loglikelihood([Request(context=audio, continuation="x", group="g1")])
    assert adapter.supports("S->T", "en")[0] is False


def test_registry_errors_and_listing():
    with pytest.raises(ValueError, match=r"unknown model 'hf-casual' \(known: .*hf-causal.*did you mean 'hf-causal'"):
        get_adapter("hf-casual")
    names = {info.name: info for info in list_adapters()}
    assert {"hf-causal", "smollm2", "cascade", "qwen2-audio", "qwen2.5-omni", "granite-speech", "remote-code"} <= set(names)
    assert names["hf-causal"].status == "verified"


def test_third_party_adapter_through_entry_point(monkeypatch, tiny_gpt2_dir):
    from importlib.metadata import EntryPoint

    import s2sbench.evaluation.models as models
    import s2sbench.pipeline.core.registry as registry

    point = EntryPoint("my-lm", "s2sbench.evaluation.models.hf_causal:HFCausalAdapter", models.ENTRY_POINT_GROUP)
    monkeypatch.setattr(registry, "entry_points", lambda group: [point] if group == models.ENTRY_POINT_GROUP else [])
    monkeypatch.setattr(registry, "_PLUGINS", {})  # read again, through the patched lookup
    assert "my-lm" in {info.name for info in list_adapters()}
    adapter = get_adapter("my-lm", model=str(tiny_gpt2_dir))
    assert adapter.loglikelihood(requests()[:1])[0].sum_logprob < 0


@pytest.mark.slow
def test_offline_smollm2_equals_lm_eval_and_prefers_the_sensible_ending():
    """Real weights: the first call converts the packaged GGUF (about 35 s), later ones load the cached copy."""
    from lm_eval.api.instance import Instance
    from lm_eval.models.huggingface import HFLM

    from s2sbench.evaluation.models.offline import smollm2_local_dir

    adapter = get_adapter("smollm2")
    pairs = [("The cat sat on the", " mat."), ("The cat sat on the", " quantum of the ran.")]
    ours = adapter.loglikelihood([Request(context=c, continuation=x, group="cat") for c, x in pairs])
    reference = HFLM(pretrained=str(smollm2_local_dir()), device="cpu", batch_size=2, dtype="float32")
    theirs = reference.loglikelihood([Instance("loglikelihood", {}, pair, i) for i, pair in enumerate(pairs)],
                                     disable_tqdm=True)
    for mine, (logprob, _greedy) in zip(ours, theirs):
        assert mine.sum_logprob == pytest.approx(logprob, abs=1e-3)
    assert ours[0].mean_nll < ours[1].mean_nll
