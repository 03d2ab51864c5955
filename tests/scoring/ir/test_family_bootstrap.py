"""Family bootstrap against a straightforward loop and scipy.stats.bootstrap on the same resamples.

scipy.stats.bootstrap(method="percentile", rng=default_rng(seed), batch=None)
draws its resamples as ``rng.integers(0, n, (n_resamples, n))``, the same call
``resample_indices`` makes, so resampling family numbers 0..F-1 with scipy gives
exactly our index matrix and the intervals must agree to rounding.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats

from scoring.ir.family_bootstrap import (
    DEFAULT_REPLICATES,
    DEFAULT_SEED,
    family_bootstrap,
    paired_family_bootstrap,
)
from scoring.stats.bootstrap import resample_indices


def _random_suite(rng: np.random.Generator):
    n_families = int(rng.integers(3, 15))
    # Zero-padded names: sorted(str) order is numeric order, as in the loop below.
    families = [f"f{int(rng.integers(0, n_families)):02d}" for _ in range(int(rng.integers(n_families, 40)))]
    # At least the minimum number of families for an interval (scoring.stats.units.MIN_UNITS).
    families[:3] = ["f00", "f01", "f02"]
    kind = rng.random()
    if kind < 0.5:
        a = rng.integers(0, 2, len(families)).astype(float)  # Hit@k-like
        b = rng.integers(0, 2, len(families)).astype(float)
    else:
        a = 1.0 / rng.integers(1, 31, len(families))  # RR-like
        a[rng.random(len(families)) < 0.3] = 0.0
        b = rng.random(len(families))
    return families, a, b


def _loop_reference(families, a, b, *, replicates, seed):
    """One replicate at a time: draw families, take all their queries, compute both means and the difference."""
    labels = sorted(set(families))
    members = {f: [i for i, g in enumerate(families) if g == f] for f in labels}
    indices = resample_indices(len(labels), replicates=replicates, seed=seed)
    mean_a, mean_b, diff = [], [], []
    for row in indices:
        queries = [q for family_number in row for q in members[labels[family_number]]]
        ma = sum(a[q] for q in queries) / len(queries)
        mb = sum(b[q] for q in queries) / len(queries)
        mean_a.append(ma)
        mean_b.append(mb)
        diff.append(ma - mb)
    return [tuple(np.percentile(values, [2.5, 97.5])) for values in (mean_a, mean_b, diff)]


def test_paired_family_bootstrap_equals_a_python_loop_over_replicates_on_the_same_index_matrix():
    rng = np.random.default_rng(1)
    for case in range(200):
        families, a, b = _random_suite(rng)
        replicates = 400
        result = paired_family_bootstrap(list(a), list(b), families, replicates=replicates, seed=case)
        ref_a, ref_b, ref_diff = _loop_reference(families, a, b, replicates=replicates, seed=case)
        for interval, (low, high) in ((result.a, ref_a), (result.b, ref_b), (result.difference, ref_diff)):
            assert interval.low == pytest.approx(low, abs=1e-12)
            assert interval.high == pytest.approx(high, abs=1e-12)
        assert result.a.estimate == pytest.approx(a.mean())
        assert result.b.estimate == pytest.approx(b.mean())
        assert result.difference.estimate == result.a.estimate - result.b.estimate
        assert result.families == len(set(families))
        assert (result.included, result.excluded) == (len(families), 0)


@pytest.mark.parametrize("n_families", [5, 64, 65, 90])
@pytest.mark.parametrize("equal", [True, False])
def test_every_family_count_and_size_shape_equals_the_loop(n_families, equal):
    """Both ways of summing a draw (family by family up to ``FAMILY_LOOP_MAX`` families, the laid-out gather
    above it) and both ways of counting its queries (families of one size, or of several) give the loop's
    figures."""
    rng = np.random.default_rng(n_families + 1000 * equal)
    sizes = [3] * n_families if equal else list(rng.integers(1, 5, n_families))
    families = [f"f{f:03d}" for f, size in enumerate(sizes) for _ in range(size)]
    a, b = 1.0 / rng.integers(1, 31, len(families)), rng.random(len(families))
    result = paired_family_bootstrap(list(a), list(b), families, replicates=300, seed=n_families)
    ref_a, ref_b, ref_diff = _loop_reference(families, a, b, replicates=300, seed=n_families)
    for interval, (low, high) in ((result.a, ref_a), (result.b, ref_b), (result.difference, ref_diff)):
        assert (interval.low, interval.high) == pytest.approx((low, high), abs=1e-12)


def test_the_default_10000_replicates_with_seed_20260920_equal_the_loop():
    rng = np.random.default_rng(2)
    families, a, b = _random_suite(rng)
    result = paired_family_bootstrap(list(a), list(b), families)
    assert (result.replicates, result.seed) == (DEFAULT_REPLICATES, DEFAULT_SEED) == (10_000, 20260920)
    ref = _loop_reference(families, a, b, replicates=10_000, seed=20260920)
    assert [result.a.low, result.a.high] == pytest.approx(list(ref[0]), abs=1e-12)
    assert [result.difference.low, result.difference.high] == pytest.approx(list(ref[2]), abs=1e-12)


def _ratio_statistic(families, values):
    labels = sorted(set(families))
    sums = np.array([sum(v for v, g in zip(values, families, strict=True) if g == f) for f in labels])
    counts = np.array([sum(1 for g in families if g == f) for f in labels], dtype=float)

    def statistic(drawn, axis=-1):
        return sums[drawn].sum(axis=axis) / counts[drawn].sum(axis=axis)

    return statistic, len(labels)


def test_family_bootstrap_equals_scipy_stats_bootstrap_percentile_on_the_same_resamples():
    rng = np.random.default_rng(5)
    for case in range(200):
        families, a, _ = _random_suite(rng)
        statistic, n_families = _ratio_statistic(families, a)
        scipy_result = stats.bootstrap(
            (np.arange(n_families),),
            statistic,
            n_resamples=1000,
            method="percentile",
            vectorized=True,
            rng=np.random.default_rng(case),
        )
        ours = family_bootstrap(list(a), families, replicates=1000, seed=case)
        assert ours.interval.low == pytest.approx(scipy_result.confidence_interval.low, abs=1e-12)
        assert ours.interval.high == pytest.approx(scipy_result.confidence_interval.high, abs=1e-12)


def test_paired_difference_equals_scipy_stats_bootstrap_of_the_difference_statistic():
    rng = np.random.default_rng(6)
    for case in range(100):
        families, a, b = _random_suite(rng)
        stat_a, n_families = _ratio_statistic(families, a)
        stat_b, _ = _ratio_statistic(families, b)
        scipy_result = stats.bootstrap(
            (np.arange(n_families),),
            lambda drawn, axis=-1, sa=stat_a, sb=stat_b: sa(drawn, axis) - sb(drawn, axis),
            n_resamples=1000,
            method="percentile",
            vectorized=True,
            rng=np.random.default_rng(case),
        )
        ours = paired_family_bootstrap(list(a), list(b), families, replicates=1000, seed=case)
        assert ours.difference.low == pytest.approx(scipy_result.confidence_interval.low, abs=1e-12)
        assert ours.difference.high == pytest.approx(scipy_result.confidence_interval.high, abs=1e-12)


def test_an_excluded_query_changes_the_excluded_count_and_never_the_estimate_or_interval():
    rng = np.random.default_rng(8)
    for case in range(50):
        families, a, b = _random_suite(rng)
        base = paired_family_bootstrap(list(a), list(b), families, replicates=500, seed=case)
        single = family_bootstrap(list(a), families, replicates=500, seed=case)
        # An unjudged query in an existing family, one judged for a only, and a family of unjudged queries.
        more_families = [*families, families[0], families[-1], "zz-new", "zz-new"]
        more_a = [*a, None, 0.7, None, float("nan")]
        more_b = [*b, 0.3, None, None, None]
        widened = paired_family_bootstrap(more_a, more_b, more_families, replicates=500, seed=case)
        assert (widened.a, widened.b, widened.difference) == (base.a, base.b, base.difference)
        assert (widened.included, widened.excluded) == (base.included, base.excluded + 4)
        assert widened.families == base.families
        single_widened = family_bootstrap(
            [*a, None, None, float("nan")], [*families, families[0], "zz", "zz"], replicates=500, seed=case
        )
        assert single_widened.interval == single.interval
        assert (single_widened.included, single_widened.excluded) == (single.included, 3)


def test_the_draw_does_not_depend_on_the_order_queries_are_listed():
    rng = np.random.default_rng(9)
    families, a, b = _random_suite(rng)
    order = rng.permutation(len(families))
    base = paired_family_bootstrap(list(a), list(b), families, replicates=500, seed=1)
    shuffled = paired_family_bootstrap(
        [a[i] for i in order], [b[i] for i in order], [families[i] for i in order], replicates=500, seed=1
    )
    assert shuffled.difference.low == pytest.approx(base.difference.low, abs=1e-12)
    assert shuffled.difference.high == pytest.approx(base.difference.high, abs=1e-12)


def test_with_no_included_query_every_figure_is_nan_and_everything_is_excluded():
    result = family_bootstrap([None, None], ["f", "g"], replicates=10, seed=1)
    assert math.isnan(result.interval.estimate)
    assert (result.included, result.excluded, result.families) == (0, 2, 0)


def test_mismatched_lengths_are_refused():
    with pytest.raises(ValueError, match="3 per-query values but 2 family labels"):
        family_bootstrap([1.0, 0.0, 1.0], ["f", "g"])


def test_the_draw_in_blocks_is_exactly_the_full_index_matrix():
    from scoring.ir.family_bootstrap import draw_blocks

    for n_families in (1, 2, 3, 7, 31, 300, 1001, 5000):
        for replicates in (1, 2, 3, 99, 1000):
            full = resample_indices(n_families, replicates=replicates, seed=n_families + replicates)
            blocks = list(draw_blocks(n_families, replicates=replicates, seed=n_families + replicates))
            assert blocks[0][0] == 0 and blocks[-1][1] == replicates
            assert np.array_equal(np.concatenate([indices for _, _, indices in blocks]), full)
            if n_families * replicates > 1 << 18:
                assert len(blocks) > 1  # the large cases really are drawn in several blocks
