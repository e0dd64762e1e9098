"""Statistics over items: paired bootstrap confidence intervals, the exact McNemar test, degradation, voice spread.

The unit of resampling is the item (a cluster of pairs, and of voices when an item is spoken by several), so an
interval reflects how much the number would move on another draw of items. Resampling uses one fixed seed, and the
same resampled items for both modes of a gap, so the interval of a difference is paired.

The bootstrap is written here rather than taken from ``scipy.stats.bootstrap`` (whose percentile interval it
matches, tests/evaluation/protocol/test_stats.py): one draw of resampled items serves every accuracy of a run, so each
accuracy costs two matrix-vector products (about 13 x faster than a scipy call per accuracy on sCMMLU's 4,743 items,
measured by ``bench/bench_stats.py``), and every gap between two modes is paired by construction. The McNemar test
is scipy's exact binomial test.
"""

from __future__ import annotations

import functools
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass

import numpy as np

from s2sbench.pipeline.core.errors import ConfigError

DEFAULT_RESAMPLES = 2000
DEFAULT_SEED = 20250520
DEFAULT_CONFIDENCE = 0.95


@dataclass(frozen=True)
class BootstrapOptions:
    n_resamples: int = DEFAULT_RESAMPLES
    seed: int = DEFAULT_SEED
    confidence: float = DEFAULT_CONFIDENCE

    def __post_init__(self) -> None:
        if self.n_resamples < 1:
            raise ConfigError(f"n_resamples must be >= 1, got {self.n_resamples}")
        if not 0.0 < self.confidence < 1.0:
            raise ConfigError(f"confidence must be a fraction in (0, 1), got {self.confidence}")


@dataclass(frozen=True)
class Estimate:
    """A fraction (0..1) with its bootstrap interval and standard error (the resamples' standard deviation)."""

    value: float
    ci_low: float
    ci_high: float
    stderr: float

    def to_dict(self) -> dict[str, float]:
        return asdict(self)


@dataclass(frozen=True)
class Counts:
    """Per item: correct pairs and pairs, item-aligned arrays (the same item order for every mode of a task)."""

    correct: np.ndarray
    total: np.ndarray

    def __post_init__(self) -> None:
        if self.correct.shape != self.total.shape or self.correct.ndim != 1:
            raise ValueError("correct and total must be 1-d arrays of the same length")
        if len(self.total) == 0 or self.total.sum() == 0:
            raise ValueError("no pairs to estimate an accuracy from")

    @property
    def accuracy(self) -> float:
        return float(self.correct.sum() / self.total.sum())


@functools.lru_cache(maxsize=4)
def _resample_weights(n_items: int, n_resamples: int, seed: int) -> np.ndarray:
    """How often each item is drawn in each resample, shape (resamples, items); shared by every accuracy of a run
    (the same seed draws the same items), so a gap's two accuracies are paired and each costs one product."""
    rng = np.random.default_rng(seed)
    weights = np.empty((n_resamples, n_items), dtype=np.float32)  # integer counts, exact in float32 below 2**24
    for row in range(n_resamples):
        weights[row] = np.bincount(rng.integers(0, n_items, size=n_items), minlength=n_items)
    weights.flags.writeable = False
    return weights


def _interval(samples: np.ndarray, value: float, options: BootstrapOptions) -> Estimate:
    tail = (1.0 - options.confidence) / 2.0
    low, high = np.quantile(samples, [tail, 1.0 - tail])
    stderr = float(np.std(samples, ddof=1)) if len(samples) > 1 else 0.0
    return Estimate(value=value, ci_low=float(low), ci_high=float(high), stderr=stderr)


def _resampled_accuracy(counts: Counts, options: BootstrapOptions) -> np.ndarray:
    weights = _resample_weights(len(counts.total), options.n_resamples, options.seed)
    # the products are integer counts (exact in float32); the ratio is taken in float64
    total = (weights @ counts.total.astype(np.float32)).astype(np.float64)
    correct = (weights @ counts.correct.astype(np.float32)).astype(np.float64)
    # a resample that drew only items without pairs has no accuracy; it cannot happen when every item has pairs
    return correct / np.maximum(total, 1.0)


def bootstrap_accuracy(counts: Counts, options: BootstrapOptions = BootstrapOptions()) -> Estimate:
    """Accuracy with a percentile bootstrap interval over items."""
    return _interval(_resampled_accuracy(counts, options), counts.accuracy, options)


def bootstrap_gap(reference: Counts, other: Counts, options: BootstrapOptions = BootstrapOptions()) -> Estimate:
    """reference accuracy - other accuracy, resampling the same items for both (a paired interval)."""
    if len(reference.total) != len(other.total):
        raise ValueError(f"paired counts need the same items ({len(reference.total)} vs {len(other.total)})")
    samples = _resampled_accuracy(reference, options) - _resampled_accuracy(other, options)
    return _interval(samples, reference.accuracy - other.accuracy, options)


@dataclass(frozen=True)
class McNemar:
    """Exact McNemar test on paired binary outcomes."""

    n: int  # paired outcomes
    only_reference: int  # right under the reference mode only (b)
    only_other: int  # right under the other mode only (c)
    p_value: float  # two-sided exact binomial p of min(b, c) in b + c draws at 1/2

    def to_dict(self) -> dict[str, float | int]:
        return asdict(self)


def mcnemar_exact(reference: Sequence[bool], other: Sequence[bool]) -> McNemar:
    """Exact (binomial) McNemar test of whether two modes get the same pairs right equally often."""
    if len(reference) != len(other):
        raise ValueError(f"paired outcomes need equal lengths ({len(reference)} vs {len(other)})")
    ref = np.asarray(reference, dtype=bool)
    oth = np.asarray(other, dtype=bool)
    b = int(np.sum(ref & ~oth))
    c = int(np.sum(~ref & oth))
    if b + c == 0:
        return McNemar(len(ref), b, c, 1.0)
    from scipy.stats import binomtest

    return McNemar(len(ref), b, c, float(binomtest(b, b + c, 0.5).pvalue))


@dataclass(frozen=True)
class Degradation:
    """How much accuracy a mode loses against a reference mode on the same items and model."""

    reference_mode: str
    mode: str
    reference_accuracy: float
    accuracy: float
    chance: float
    absolute: Estimate  # reference - mode, with a paired bootstrap interval
    relative: float | None  # absolute / (reference - chance); None unless the reference's interval is above chance
    relative_note: str
    mcnemar: McNemar

    def to_dict(self) -> dict[str, object]:
        out = asdict(self)
        out["absolute"] = self.absolute.to_dict()
        out["mcnemar"] = self.mcnemar.to_dict()
        return out


NOT_ABOVE_CHANCE = "n/a (T->T not above chance)"


def relative_degradation(reference: Estimate, accuracy: float, chance: float) -> tuple[float | None, str]:
    """(reference - accuracy) / (reference - chance): the share of above-chance skill lost, or None with why. Only
    where the reference's whole interval is above chance: a skill whose interval reaches chance may be nothing, and a
    loss divided by it (0.3 points of skill gave -578%) means nothing either."""
    if reference.ci_low <= chance:
        return None, (f"{NOT_ABOVE_CHANCE}: the reference accuracy {reference.value:.4f} [{reference.ci_low:.4f}, "
                      f"{reference.ci_high:.4f}] is not above chance {chance:.4f}")
    return (reference.value - accuracy) / (reference.value - chance), "(reference - mode) / (reference - chance)"


def degradation(
    reference_mode: str,
    mode: str,
    reference: Counts,
    other: Counts,
    paired_outcomes: tuple[Sequence[bool], Sequence[bool]],
    chance: float,
    options: BootstrapOptions = BootstrapOptions(),
) -> Degradation:
    relative, note = relative_degradation(bootstrap_accuracy(reference, options), other.accuracy, chance)
    return Degradation(
        reference_mode=reference_mode,
        mode=mode,
        reference_accuracy=reference.accuracy,
        accuracy=other.accuracy,
        chance=chance,
        absolute=bootstrap_gap(reference, other, options),
        relative=relative,
        relative_note=note,
        mcnemar=mcnemar_exact(*paired_outcomes),
    )


def voice_spread(per_voice: Mapping[str, float]) -> dict[str, float | str]:
    """Spread of an accuracy across voices: range (max - min), population standard deviation, the extremes."""
    if not per_voice:
        raise ValueError("no voices")
    values = np.array(list(per_voice.values()), dtype=float)
    best = max(per_voice, key=per_voice.__getitem__)
    worst = min(per_voice, key=per_voice.__getitem__)
    return {
        "range": float(values.max() - values.min()),
        "std": float(values.std()),
        "best_voice": best,
        "worst_voice": worst,
    }
