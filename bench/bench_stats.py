"""Bootstrap speed: s2sbench's shared-draw item bootstrap against one ``scipy.stats.bootstrap`` call per accuracy.

A run computes many accuracies over the same items (every mode, rule and normalization of a task). s2sbench draws
the resampled items once and turns each accuracy into two matrix-vector products; scipy resamples anew per call.
Both use the same percentile interval over the same number of resamples; the ratio is of the same run.

    python bench/bench_stats.py                   # sCMMLU's size: 4,743 items, 4 pairs each, 12 accuracies
    python bench/bench_stats.py --items 1871 --pairs 1
"""

from __future__ import annotations

import argparse
import time

import numpy as np
from scipy.stats import bootstrap

from s2sbench.evaluation.protocol.stats import BootstrapOptions, Counts, _resample_weights, bootstrap_accuracy


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--items", type=int, default=4743)
    parser.add_argument("--pairs", type=int, default=4, help="pairs per item")
    parser.add_argument("--accuracies", type=int, default=12, help="accuracies over the same items")
    parser.add_argument("--resamples", type=int, default=2000)
    args = parser.parse_args()
    rng = np.random.default_rng(0)
    total = np.full(args.items, args.pairs)
    runs = [Counts(rng.binomial(args.pairs, rng.uniform(0.3, 0.8), args.items), total) for _ in range(args.accuracies)]
    options = BootstrapOptions(n_resamples=args.resamples)

    start = time.perf_counter()
    _resample_weights.cache_clear()  # the draw is part of the cost
    ours = [bootstrap_accuracy(counts, options) for counts in runs]
    ours_s = time.perf_counter() - start

    start = time.perf_counter()
    theirs = [
        bootstrap((counts.correct, counts.total), lambda c, t: c.sum() / t.sum(), paired=True, vectorized=False,
                  n_resamples=args.resamples, method="percentile", random_state=1)  # fmt: skip
        for counts in runs
    ]
    scipy_s = time.perf_counter() - start

    widest = max(abs((o.ci_high - o.ci_low) - (t.confidence_interval.high - t.confidence_interval.low))
                 for o, t in zip(ours, theirs))  # fmt: skip
    print(f"{args.accuracies} accuracies over {args.items} items x {args.pairs} pairs, {args.resamples} resamples")
    print(f"s2sbench shared draw: {ours_s:.3f} s   scipy.stats.bootstrap per accuracy: {scipy_s:.3f} s   "
          f"ratio {scipy_s / ours_s:.1f}x   largest interval-width difference {widest:.4f} (Monte Carlo)")


if __name__ == "__main__":
    main()
