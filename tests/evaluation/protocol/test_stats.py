from __future__ import annotations

import numpy as np
import pytest
from scipy.stats import binomtest

from s2sbench.evaluation.protocol.stats import (
    BootstrapOptions,
    Counts,
    Estimate,
    bootstrap_accuracy,
    bootstrap_gap,
    degradation,
    mcnemar_exact,
    relative_degradation,
    voice_spread,
)


def counts(correct, total=None) -> Counts:
    correct = np.asarray(correct)
    return Counts(correct, np.ones_like(correct) if total is None else np.asarray(total))


@pytest.mark.parametrize("b,c", [(0, 0), (3, 0), (7, 2), (20, 31), (100, 100)])
def test_mcnemar_equals_the_exact_binomial_test(b, c):
    reference = [True] * b + [False] * c + [True] * 5 + [False] * 4
    other = [False] * b + [True] * c + [True] * 5 + [False] * 4
    result = mcnemar_exact(reference, other)
    assert (result.only_reference, result.only_other, result.n) == (b, c, b + c + 9)
    expected = 1.0 if b + c == 0 else binomtest(min(b, c), b + c, 0.5).pvalue
    assert result.p_value == pytest.approx(expected, rel=1e-12)


def test_bootstrap_is_seeded_and_brackets_the_value():
    rng = np.random.default_rng(1)
    data = counts(rng.integers(0, 4, 400), np.full(400, 3))
    first = bootstrap_accuracy(data)
    assert first == bootstrap_accuracy(data)
    assert first.ci_low < first.value < first.ci_high
    assert first.value == data.correct.sum() / 1200
    # binomial-ish width: about 2 x 1.96 x sqrt(p(1-p)/n) for n = 1200 pairs (clustered in 400 items)
    assert 0.03 < first.ci_high - first.ci_low < 0.08
    other_seed = bootstrap_accuracy(data, BootstrapOptions(seed=7))
    assert other_seed.value == first.value and other_seed.ci_low != first.ci_low


def test_paired_gap_of_identical_modes_is_zero_and_paired_beats_unpaired():
    rng = np.random.default_rng(2)
    a = rng.integers(0, 2, 500)
    assert bootstrap_gap(counts(a), counts(a)).to_dict() == {"value": 0.0, "ci_low": 0.0, "ci_high": 0.0, "stderr": 0.0}
    b = a.copy()
    flip = rng.choice(500, 40, replace=False)
    b[flip] = 0  # mode b loses 40 pairs (some were already wrong)
    gap = bootstrap_gap(counts(a), counts(b))
    assert gap.value == pytest.approx((a.sum() - b.sum()) / 500)
    assert 0 < gap.ci_low <= gap.value <= gap.ci_high
    # a paired interval is far narrower than the two accuracies' own intervals
    assert gap.ci_high - gap.ci_low < (bootstrap_accuracy(counts(a)).ci_high - bootstrap_accuracy(counts(a)).ci_low)


def test_the_item_bootstrap_matches_scipys_percentile_bootstrap():
    """The hand-written bootstrap (kept for speed: one resample draw serves every accuracy of a run) against
    scipy.stats.bootstrap resampling the same items jointly: the same interval and standard error up to Monte Carlo
    error."""
    from scipy.stats import bootstrap

    rng = np.random.default_rng(3)
    data = counts(rng.integers(0, 4, 600), np.full(600, 3))
    ours = bootstrap_accuracy(data, BootstrapOptions(n_resamples=4000))
    theirs = bootstrap((data.correct, data.total), lambda c, t, axis=-1: c.sum(axis=axis) / t.sum(axis=axis),
                       paired=True, vectorized=True, n_resamples=4000, method="percentile", rng=np.random.default_rng(4))
    assert ours.ci_low == pytest.approx(theirs.confidence_interval.low, abs=0.004)
    assert ours.ci_high == pytest.approx(theirs.confidence_interval.high, abs=0.004)
    assert ours.stderr == pytest.approx(theirs.standard_error, rel=0.08)


def test_relative_degradation_only_where_the_reference_interval_is_above_chance():
    value, note = relative_degradation(Estimate(0.8, 0.72, 0.88, 0.04), 0.7, 0.5)
    assert value == pytest.approx(1 / 3) and "chance" in note
    # the whole sCMMLU slice of issue 58: T->T 50.3% [42.4, 57.9] against a chance of 50% printed -578.1%
    value, note = relative_degradation(Estimate(0.503, 0.424, 0.579, 0.04), 0.52, 0.5)
    assert value is None and note.startswith("n/a (T->T not above chance)")


def test_degradation_bundles_gap_relative_and_mcnemar():
    a = np.array([1, 1, 1, 1, 0, 1, 1, 0, 1, 1] * 4)
    b = np.array([1, 0, 1, 0, 0, 1, 0, 0, 1, 1] * 4)
    found = degradation("T->T", "S->T", counts(a), counts(b), (a.astype(bool), b.astype(bool)), 0.5)
    assert found.absolute.value == pytest.approx(0.3)
    assert found.relative == pytest.approx(0.3 / 0.3)
    assert (found.mcnemar.only_reference, found.mcnemar.only_other) == (12, 0)
    assert found.to_dict()["absolute"]["value"] == pytest.approx(0.3)
    # ten items: T->T 80% whose interval reaches chance, so no relative figure
    small = degradation("T->T", "S->T", counts(a[:10]), counts(b[:10]), (a[:10].astype(bool), b[:10].astype(bool)), 0.5)
    assert small.relative is None and "not above chance" in small.relative_note


def test_voice_spread():
    spread = voice_spread({"a": 0.7, "b": 0.6, "c": 0.65})
    assert spread["range"] == pytest.approx(0.1)
    assert (spread["best_voice"], spread["worst_voice"]) == ("a", "b")


def test_bad_inputs_raise():
    with pytest.raises(ValueError, match="no pairs"):
        counts(np.array([], dtype=int))
    with pytest.raises(ValueError, match="same items"):
        bootstrap_gap(counts([1, 0]), counts([1]))
    with pytest.raises(ValueError, match="confidence"):
        BootstrapOptions(confidence=95)
