"""Unit speech LM path end to end: tiny random HuBERT -> k-means fitted here -> dedup -> tiny random Llama."""

from __future__ import annotations

import numpy as np
import pytest
from tests.evaluation.models_paper.paper_helpers import clip, plain_scores

from s2sbench.evaluation.models import get_adapter
from s2sbench.evaluation.models.base import AdapterError
from s2sbench.evaluation.models.units import assign_units, deduplicate, load_kmeans
from s2sbench.evaluation.protocol.modes import EvalItem, build_requests
from s2sbench.pipeline.items.templates import Templates

N_UNITS = 20


def test_deduplicate_collapses_runs_only():
    assert deduplicate([5, 5, 2, 2, 2, 5, 7, 7]) == [5, 2, 5, 7]
    assert deduplicate([]) == []


def test_assign_units_matches_sklearn():
    from sklearn.cluster import KMeans

    rng = np.random.default_rng(0)
    features = rng.standard_normal((200, 8)).astype(np.float32)
    model = KMeans(n_clusters=6, n_init=1, random_state=0).fit(features)
    assert (assign_units(features, model.cluster_centers_) == model.predict(features)).all()


def test_load_kmeans_reads_npy_and_joblib(tmp_path):
    import joblib
    from sklearn.cluster import KMeans

    features = np.random.default_rng(1).standard_normal((50, 4)).astype(np.float32)
    model = KMeans(n_clusters=3, n_init=1, random_state=0).fit(features)
    joblib.dump(model, tmp_path / "km3.bin")
    np.save(tmp_path / "km3.npy", model.cluster_centers_)
    assert np.allclose(load_kmeans(tmp_path / "km3.bin"), model.cluster_centers_)
    assert np.allclose(load_kmeans(tmp_path / "km3.npy"), model.cluster_centers_)
    joblib.dump({"not": "kmeans"}, tmp_path / "bad.bin")
    with pytest.raises(ValueError, match="not a fitted k-means"):
        load_kmeans(tmp_path / "bad.bin")


@pytest.fixture(scope="module")
def kmeans_path(tiny_unit_encoder, tmp_path_factory):
    """The k-means fitted on the tiny encoder's features (conftest), saved as a centroid matrix."""
    path = tmp_path_factory.mktemp("km") / f"km{N_UNITS}.npy"
    np.save(path, tiny_unit_encoder.centroids)
    return path


@pytest.fixture(scope="module")
def adapter(tiny_unit_lm_dir, tiny_hubert_dir, kmeans_path):
    return get_adapter("unit-lm", model=str(tiny_unit_lm_dir), encoder=str(tiny_hubert_dir), kmeans=kmeans_path,
                       layer=2, device="cpu")


def _item():
    return EvalItem(item_id="s1", task="sstorycloze", language="en", voice="v", context="four sentences",
                    candidates=("right ending", "wrong ending"), right=0, context_audio=clip(10, 2.0),
                    candidate_audio=(clip(11, 0.8), clip(12, 0.6)))


def test_units_are_deduplicated_and_offset(adapter):
    ids = adapter.unit_ids(clip(10, 2.0))
    assert all(3 <= token < 3 + N_UNITS for token in ids)  # offset 3 read from the checkpoint's config
    assert all(a != b for a, b in zip(ids, ids[1:]))
    assert len(ids) < 2.0 * 50  # at most one unit per 20 ms frame, fewer after deduplication


def test_scores_only_the_continuation_units(adapter):
    import torch

    requests = build_requests(_item(), Templates(), "S->S")
    results = adapter.loglikelihood(requests)
    context = list(adapter.unit_ids(requests[0].context))
    for request, result in zip(requests, results):
        continuation = list(adapter.unit_ids(request.continuation))
        assert result.n_tokens == len(continuation)
        with torch.inference_mode():
            logits = adapter.model(torch.tensor([context + continuation])).logits[0].float()
        logprobs = torch.log_softmax(logits, -1)[len(context) - 1 : -1]
        expected = logprobs.gather(-1, torch.tensor(continuation)[:, None])[:, 0]
        assert np.allclose(result.per_token, expected.numpy(), atol=1e-4)


def test_shared_prefix_equals_plain_scoring(adapter):
    requests = build_requests(_item(), Templates(), "S->S")
    shared = adapter.loglikelihood(requests)
    plain = plain_scores(adapter, requests)
    assert np.allclose([r.sum_logprob for r in shared], [r.sum_logprob for r in plain], atol=1e-4)


def test_text_requests_are_refused(adapter):
    requests = build_requests(_item(), Templates(), "S->T")
    with pytest.raises(AdapterError, match="speech only"):
        adapter.loglikelihood(requests)
    assert adapter.supports("S->T", "en")[0] is False and adapter.supports("S->S", "en")[0] is True


def test_units_must_fit_the_vocabulary(tiny_unit_lm_dir, tiny_hubert_dir, kmeans_path):
    with pytest.raises(ValueError, match="do not fit its vocabulary"):
        get_adapter("unit-lm", model=str(tiny_unit_lm_dir), encoder=str(tiny_hubert_dir), kmeans=kmeans_path,
                    layer=2, offset=10, device="cpu")
