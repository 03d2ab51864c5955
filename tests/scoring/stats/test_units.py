"""The minimum-units rule: no interval or p-value below 3 units, "few units" below 10, p never below 1/(B+1)."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats

from scoring.ir.family_bootstrap import family_bootstrap, paired_family_bootstrap
from scoring.stats.bootstrap import Interval, supported_interval
from scoring.stats.multiple import bootstrap_p_value
from scoring.stats.units import (
    FEW_UNITS,
    MIN_UNITS,
    nominal_coverage,
    p_value_text,
    supported_p_value,
    unit_support,
)


def test_it_says_in_words_why_two_families_have_no_interval():
    support = unit_support(2, unit="query family")
    assert not support.has_interval
    assert support.sentence == "2 query families: too few for an interval or a p-value (at least 3 needed)"
    assert support.short == "no interval: 2 query families (at least 3 needed)"


def test_it_marks_three_to_nine_units_as_few_and_ten_as_plain():
    assert [unit_support(n, unit="contract").kind for n in (1, 2, 3, 9, 10)] == ["none", "none", "few", "few",
                                                                                 "enough"]
    assert unit_support(6, unit="query family").sentence == (
        "few units (n=6 query families): percentile-bootstrap intervals under-cover with so few units")
    assert unit_support(10, unit="contract").sentence == ""


def test_the_thresholds_sit_where_the_percentile_interval_under_covers():
    # Coverage of a nominal 95% percentile interval of a mean on normal data, to first order.
    assert nominal_coverage(MIN_UNITS - 1) < 0.65
    assert 0.70 < nominal_coverage(MIN_UNITS) < 0.80
    assert nominal_coverage(FEW_UNITS - 1) < 0.90 < nominal_coverage(FEW_UNITS)


def test_the_nominal_coverage_agrees_with_a_simulated_percentile_bootstrap():
    rng = np.random.default_rng(3)
    n, worlds, replicates = 5, 600, 400
    x = rng.standard_normal((worlds, n))
    means = x[:, rng.integers(0, n, (replicates, n))].mean(axis=2)
    low, high = np.percentile(means, [2.5, 97.5], axis=1)
    covered = np.mean((low <= 0) & (high >= 0))
    assert covered == pytest.approx(nominal_coverage(n), abs=0.05)


def test_an_unsupported_interval_keeps_its_estimate_and_loses_its_bounds():
    interval = supported_interval(Interval(0.6, 0.6, 0.6), unit_support(1, unit="query family"))
    assert interval.estimate == 0.6 and math.isnan(interval.low) and math.isnan(interval.high)
    assert interval.note == "no interval: 1 query family (at least 3 needed)"
    assert math.isnan(supported_p_value(0.002, unit_support(2, unit="contract")))
    assert supported_p_value(0.002, unit_support(3, unit="contract")) == 0.002


@pytest.mark.parametrize(("p", "replicates", "text"), [
    (2 / 10001, 10_000, "< 0.001"),
    (0.0004, 9_999, "< 0.001"),
    (0.0012, 10_000, "0.001"),
    (0.0421, 10_000, "0.042"),
    (1.0, 10_000, "1.000"),
    (2 / 201, 200, "0.010"),
    (float("nan"), 10_000, "none"),
    (None, 10_000, "none"),
])
def test_a_p_value_is_never_printed_below_one_over_b_plus_one_nor_as_zero(p, replicates, text):
    assert p_value_text(p, replicates=replicates) == text


def test_the_smallest_bootstrap_p_value_prints_as_a_bound():
    p = bootstrap_p_value(np.full(9_999, 0.5))  # no replicate at or below zero
    assert p == pytest.approx(2 / 10_000)
    assert p_value_text(p, replicates=9_999) == "< 0.001"
    assert p_value_text(p, replicates=9_999, digits=4) == "0.0002"  # at four decimals it is resolved


def test_one_family_per_split_gives_no_zero_width_interval_and_no_p_value():
    # The suite: 3 held-out queries in one family; rerank-2 finds 2 targets at rank 1, keyword 0.
    reranked, keyword, families = [1.0, 1.0, 0.0], [0.0, 0.0, 0.0], ["f"] * 3
    single = family_bootstrap(reranked, families, replicates=999, seed=1)
    assert single.interval.estimate == pytest.approx(2 / 3) and not single.interval.has_bounds
    from scoring.ir.family_bootstrap import family_bootstraps

    _, pairs = family_bootstraps({}, {"x": (reranked, keyword)}, families, replicates=999, seed=1,
                                 keep_replicates=True)
    assert pairs["x"].replicate_differences is None  # so no p-value can be read from it
    assert not pairs["x"].difference.has_bounds


def test_with_many_families_the_paired_interval_is_scipys_percentile_bootstrap():
    rng = np.random.default_rng(8)
    n = 12
    a, b = rng.random(n), rng.random(n)
    families = [f"f{i:02d}" for i in range(n)]
    ours = paired_family_bootstrap(list(a), list(b), families, replicates=2000, seed=4)
    ref = stats.bootstrap((a, b), lambda x, y, axis=-1: x.mean(axis) - y.mean(axis), paired=True,
                          n_resamples=2000, method="percentile", vectorized=True, rng=np.random.default_rng(4))
    assert ours.difference.note == ""
    assert ours.difference.low == pytest.approx(ref.confidence_interval.low, abs=1e-12)
    assert ours.difference.high == pytest.approx(ref.confidence_interval.high, abs=1e-12)
