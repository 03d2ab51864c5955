"""A proportion's Wilson interval, against the closed form and scipy's exact (Clopper-Pearson) interval."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy.stats import binomtest, norm

from scoring.stats.proportion import proportion_interval


def _wilson(k: int, n: int, confidence: float) -> tuple[float, float]:
    z = norm.ppf(1 - (1 - confidence) / 2)
    p = k / n
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / (1 + z * z / n)
    return max(0.0, centre - half), min(1.0, centre + half)


def test_it_matches_the_closed_form_wilson_interval_on_random_counts():
    rng = np.random.default_rng(7)
    for _ in range(200):
        n = int(rng.integers(1, 400))
        k = int(rng.integers(0, n + 1))
        confidence = float(rng.choice([0.8, 0.9, 0.95, 0.99]))
        got = proportion_interval(k, n, confidence=confidence)
        assert (got.low, got.high) == pytest.approx(_wilson(k, n, confidence), abs=1e-9)
        assert got.estimate == k / n and got.low <= got.estimate <= got.high


def test_it_is_no_wider_than_the_exact_interval_away_from_the_edges():
    for k, n in ((5, 10), (30, 50), (12, 40)):
        wilson = proportion_interval(k, n)
        exact = binomtest(k, n).proportion_ci(method="exact")
        assert wilson.high - wilson.low <= exact.high - exact.low


def test_no_trials_gives_no_estimate_and_bad_counts_are_refused():
    empty = proportion_interval(0, 0)
    assert empty.estimate is None and empty.low is None and empty.n == 0
    with pytest.raises(ValueError, match="successes"):
        proportion_interval(4, 3)
    with pytest.raises(ValueError, match="confidence"):
        proportion_interval(1, 3, confidence=1.5)
