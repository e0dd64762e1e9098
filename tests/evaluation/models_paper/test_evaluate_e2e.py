"""Moshi and the unit LM through the real evaluate() on the evaluation tests' small build (English stories spoken
by two voices, candidates spoken too; Chinese multiple choice with spoken stems). About 15 s each on a loaded
2-core machine, so marked slow; the per-adapter tests are the fast real ones."""

from __future__ import annotations

import pytest

from s2sbench.evaluation.models import get_adapter
from s2sbench.evaluation.runner.run import EvalOptions, evaluate
from s2sbench.evaluation.protocol.stats import BootstrapOptions

from tests.evaluation.conftest import CHOICE_TASK, make_build


@pytest.fixture(scope="module")
def build_dir(tmp_path_factory):
    return make_build(tmp_path_factory.mktemp("build") / "b")


@pytest.fixture
def options():
    return EvalOptions(tasks={"mc-zh": CHOICE_TASK}, bootstrap=BootstrapOptions(n_resamples=100), requests_per_call=8)


@pytest.mark.slow
def test_moshi_scores_three_modes_and_skips_chinese_speech(build_dir, tiny_moshi_dir, tmp_path, options):
    adapter = get_adapter("moshi", model=str(tiny_moshi_dir), device="cpu")
    results = evaluate(build_dir, adapter, ("T->T", "S->T", "S->S"), tmp_path, options)
    stories = results.data["tasks"]["demo-stories-en"]["modes"]
    assert set(stories) == {"T->T", "S->T", "S->S"}
    assert stories["S->S"]["token"]["pairwise_strict"]["n_units"] == 12  # 6 stories x 2 voices
    assert {(s.task, s.mode) for s in results.skipped} >= {("mc-zh", "S->T"), ("mc-zh", "S->S")}


@pytest.mark.slow
def test_unit_lm_scores_speech_continuations(build_dir, tiny_unit_lm_dir, tiny_hubert_dir, tiny_unit_encoder,
                                             tmp_path, options):
    adapter = get_adapter("unit-lm", model=str(tiny_unit_lm_dir), encoder=str(tiny_hubert_dir),
                          kmeans=tiny_unit_encoder.centroids, layer=2, device="cpu")
    results = evaluate(build_dir, adapter, None, tmp_path, options)
    stories = results.data["tasks"]["demo-stories-en"]["modes"]
    assert set(stories) == {"S->S"} and stories["S->S"]["token"]["pairwise_strict"]["n_units"] == 12
