"""Intervals of Brier, ECE, Cohen's kappa and Krippendorff's alpha against independent reference bootstraps.

The references resample the same units with the same RNG stream
(``np.random.default_rng(seed).integers(0, U, (B, U))``, units numbered in
sorted order of their names) but compute each replicate from the raw items
with scikit-learn (brier_score_loss, cohen_kappa_score) or the krippendorff
package, one replicate at a time. scipy.stats.bootstrap (percentile,
``rng=default_rng(seed)``, one sample of unit indices) draws the very same
index matrix, so it must give the same interval when no replicate is undefined.
"""

from __future__ import annotations

import math
import warnings

import krippendorff
import numpy as np
import pytest
from scipy import stats

from scoring.stats.agreement import (
    GRADES,
    alpha_interval,
    cohen_kappa,
    kappa_interval,
    krippendorff_alpha_ordinal,
    raw_agreement,
    raw_agreement_interval,
)
from scoring.stats.bootstrap import resample_index_blocks, resample_indices, unit_bootstrap
from scoring.stats.calibration import (
    brier_score,
    calibration_intervals,
    expected_calibration_error,
    reliability_table,
)
from scoring.stats.units import FEW_UNITS, MIN_UNITS
from tests.references import accuracy_score, brier_score_loss, cohen_kappa_score

# ---------------------------------------------------------------- references

# Replicates per case where the reference recomputes each one through scikit-learn or the krippendorff package
# (milliseconds a call). Every replicate is compared (the undefined count) and the 2.5th and 97.5th percentiles
# still interpolate between two drawn replicates, so 40 checks the same things 100-150 did, at a third of the calls;
# the vectorised references (scipy over sums, the index blocks) keep their hundreds and thousands.
LOOP_REPLICATES = 40


def _unit_members(units):
    """Unit names in sorted order and, for each, the positions of its observations."""
    names = sorted(set(units), key=str)
    return names, [[i for i, u in enumerate(units) if u == name] for name in names]


def _reference(units, replicate_statistic, *, replicates, seed):
    """Loop reference: one replicate at a time, the drawn units' raw observations into ``replicate_statistic``."""
    names, members = _unit_members(units)
    draws = np.random.default_rng(seed).integers(0, len(names), (replicates, len(names)))
    values = np.array([replicate_statistic([i for u in row for i in members[u]]) for row in draws], dtype=float)
    defined = values[~np.isnan(values)]
    low, high = np.percentile(defined, [2.5, 97.5]) if defined.size else (math.nan, math.nan)
    return low, high, int(np.isnan(values).sum())


def _sklearn_kappa(a, b, weights):
    if len(set(a) | set(b)) < 2:
        return math.nan
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # a silent NaN from scikit-learn would hide a degenerate replicate
        return cohen_kappa_score(a, b, labels=GRADES, weights=weights)


def _package_alpha(matrix):
    """krippendorff.alpha (ordinal), NaN when fewer than two distinct pairable values (the package refuses)."""
    data = np.array(matrix, dtype=float)
    pairable = (~np.isnan(data)).sum(axis=0) >= 2
    values = data[:, pairable]
    if np.unique(values[~np.isnan(values)]).size < 2:
        return math.nan
    return krippendorff.alpha(reliability_data=data, level_of_measurement="ordinal")


def _hand_ece(p, useful):
    p, useful = np.asarray(p), np.asarray(useful, dtype=float)
    edges = [0.0, 0.2, 0.4, 0.6, 0.8]
    total = 0.0
    for b, low in enumerate(edges):
        high = 1.0 if b == 4 else edges[b + 1]
        inside = (p >= low) & ((p <= high) if b == 4 else (p < high))
        if inside.any():
            total += inside.sum() / p.size * abs(p[inside].mean() - useful[inside].mean())
    return total


# ---------------------------------------------------------------- random inputs


def _random_pairs(rng, *, skewed: bool):
    """Two raters' grades on items grouped into a few units; skewed inputs make one-category resamples likely."""
    n_units = int(rng.integers(2, 9))
    n = int(rng.integers(n_units, 60))
    units = [f"u{int(rng.integers(0, n_units)):02d}" for _ in range(n)]
    if skewed:
        a = np.where(rng.random(n) < 0.9, 0, rng.integers(0, 4, n))
        b = np.where(rng.random(n) < 0.9, a, rng.integers(0, 4, n))
    else:
        a = rng.integers(0, 4, n)
        b = np.clip(a + rng.integers(-1, 2, n), 0, 3)
    a_list = [int(x) for x in a]
    b_list = [int(x) for x in b]
    for i in np.flatnonzero(rng.random(n) < 0.1):
        (a_list if rng.random() < 0.5 else b_list)[i] = None
    return a_list, b_list, units


def _random_matrix(rng):
    """Raters x items grades with gaps, and each item's unit."""
    raters = int(rng.integers(2, 5))
    n_items = int(rng.integers(4, 40))
    truth = rng.integers(0, 4, n_items)
    data = np.clip(truth + rng.integers(-1, 2, (raters, n_items)), 0, 3).astype(float)
    data[rng.random(data.shape) < 0.25] = np.nan
    units = [f"q{int(rng.integers(0, max(2, n_items // 3))):02d}" for _ in range(n_items)]
    matrix = [[None if math.isnan(v) else int(v) for v in row] for row in data]
    return matrix, units


def _random_calibration(rng):
    n = int(rng.integers(3, 80))
    p = list(rng.random(n))
    labels = [int(x) for x in rng.integers(0, 4, n)]
    for i in np.flatnonzero(rng.random(n) < 0.15):
        labels[i] = None
    units = [f"fam{int(rng.integers(0, 10))}" for _ in range(n)]
    return p, labels, units


# ---------------------------------------------------------------- kappa


@pytest.mark.parametrize("weights", [None, "quadratic"])
def test_kappa_interval_equals_a_scikit_learn_loop_over_the_same_unit_resamples(weights):
    rng = np.random.default_rng(11)
    saw_undefined = 0
    for case in range(30):
        a, b, units = _random_pairs(rng, skewed=case % 2 == 0)
        ours = kappa_interval(a, b, units, weights=weights, unit="contract", replicates=LOOP_REPLICATES, seed=case)
        both = [i for i in range(len(a)) if a[i] is not None and b[i] is not None]
        xa, xb, xu = [a[i] for i in both], [b[i] for i in both], [units[i] for i in both]
        assert ours.observations == len(both)
        assert ours.units == len(set(xu))
        point = _sklearn_kappa(xa, xb, weights)
        if math.isnan(point):
            assert not ours.defined and not ours.has_interval and "undefined" in ours.caveat
            continue
        assert ours.interval.estimate == pytest.approx(point, abs=1e-12)
        assert ours.interval.estimate == pytest.approx(cohen_kappa(a, b, weights=weights), abs=1e-12)
        if ours.units < MIN_UNITS:
            assert not ours.has_interval and "too few for an interval" in ours.caveat
            continue
        low, high, undefined = _reference(
            xu, lambda rows, xa=xa, xb=xb: _sklearn_kappa([xa[i] for i in rows], [xb[i] for i in rows], weights),
            replicates=LOOP_REPLICATES, seed=case,
        )
        assert ours.undefined == undefined
        assert [ours.interval.low, ours.interval.high] == pytest.approx([low, high], abs=1e-12)
        if undefined:
            saw_undefined += 1
            assert f"{undefined} of {LOOP_REPLICATES} resamples" in ours.caveat
            assert f"other {LOOP_REPLICATES - undefined}" in ours.caveat
        elif ours.units < FEW_UNITS:
            assert ours.caveat.startswith(f"few units (n={ours.units} contracts)")
        else:
            assert ours.caveat is None
    assert saw_undefined >= 3  # the degenerate path was exercised, not only the easy one


def test_kappa_interval_equals_scipy_stats_bootstrap_percentile_over_unit_indices():
    rng = np.random.default_rng(12)
    compared = 0
    for case in range(20):
        a, b, units = _random_pairs(rng, skewed=False)
        both = [i for i in range(len(a)) if a[i] is not None and b[i] is not None]
        xa, xb, xu = [a[i] for i in both], [b[i] for i in both], [units[i] for i in both]
        ours = kappa_interval(a, b, units, weights="quadratic", unit="item", replicates=LOOP_REPLICATES, seed=case)
        if ours.undefined or not ours.has_interval:
            continue
        _, members = _unit_members(xu)

        def statistic(drawn, xa=xa, xb=xb, members=members):
            rows = [i for u in drawn.astype(int) for i in members[u]]
            return _sklearn_kappa([xa[i] for i in rows], [xb[i] for i in rows], "quadratic")

        ref = stats.bootstrap((np.arange(len(members)),), statistic, n_resamples=LOOP_REPLICATES, method="percentile",
                              vectorized=False, rng=np.random.default_rng(case))
        assert ours.interval.low == pytest.approx(ref.confidence_interval.low, abs=1e-12)
        assert ours.interval.high == pytest.approx(ref.confidence_interval.high, abs=1e-12)
        compared += 1
    assert compared >= 10


def test_raw_agreement_interval_equals_a_scikit_learn_loop_on_the_same_draws_as_kappa():
    rng = np.random.default_rng(19)
    for case in range(25):
        a, b, units = _random_pairs(rng, skewed=case % 2 == 0)
        ours = raw_agreement_interval(a, b, units, unit="contract", replicates=LOOP_REPLICATES, seed=case)
        both = [i for i in range(len(a)) if a[i] is not None and b[i] is not None]
        xa, xb, xu = np.array([a[i] for i in both]), np.array([b[i] for i in both]), [units[i] for i in both]
        assert ours.interval.estimate == pytest.approx(raw_agreement(a, b), abs=1e-12)
        if ours.units < MIN_UNITS:
            assert not ours.has_interval
            continue
        low, high, undefined = _reference(xu, lambda rows, xa=xa, xb=xb: accuracy_score(xa[rows], xb[rows]),
                                          replicates=LOOP_REPLICATES, seed=case)
        assert ours.undefined == undefined == 0
        assert [ours.interval.low, ours.interval.high] == pytest.approx([low, high], abs=1e-12)


# ---------------------------------------------------------------- alpha


def test_alpha_interval_equals_a_krippendorff_package_loop_over_the_same_unit_resamples():
    rng = np.random.default_rng(13)
    compared = 0
    for case in range(40):
        matrix, units = _random_matrix(rng)
        ours = alpha_interval(matrix, units, unit="query family", replicates=LOOP_REPLICATES, seed=case)
        pairable = [j for j in range(len(units)) if sum(row[j] is not None for row in matrix) >= 2]
        assert ours.observations == len(pairable)
        point = _package_alpha([[np.nan if v is None else v for v in row] for row in matrix])
        if math.isnan(point):
            assert not ours.defined
            continue
        assert ours.interval.estimate == pytest.approx(point, abs=1e-12)
        assert ours.interval.estimate == pytest.approx(krippendorff_alpha_ordinal(matrix), abs=1e-12)
        if not ours.has_interval:
            continue
        kept_units = [units[j] for j in pairable]

        def replicate(columns, pairable=pairable, matrix=matrix):
            return _package_alpha([[np.nan if row[pairable[c]] is None else row[pairable[c]] for c in columns]
                                   for row in matrix])

        low, high, undefined = _reference(kept_units, replicate, replicates=LOOP_REPLICATES, seed=case)
        assert ours.undefined == undefined
        assert [ours.interval.low, ours.interval.high] == pytest.approx([low, high], abs=1e-9)
        compared += 1
    assert compared >= 25


def test_alpha_counts_resamples_where_every_grade_is_the_same_instead_of_dropping_them_silently():
    # Two units agree perfectly on grade 0; one unit has the only variation. Resamples without it are undefined.
    matrix = [[0, 0, 0, 0, 2, 3], [0, 0, 0, 0, 2, 2]]
    units = ["a", "a", "b", "b", "c", "c"]
    ours = alpha_interval(matrix, units, unit="item", replicates=2000, seed=4)
    names = sorted(set(units))
    draws = np.random.default_rng(4).integers(0, 3, (2000, 3))
    expected_undefined = int((~(draws == names.index("c")).any(axis=1)).sum())
    assert ours.undefined == expected_undefined > 0
    assert f"{expected_undefined} of 2000 resamples had every pairable grade the same" in ours.caveat


# ---------------------------------------------------------------- Brier and ECE


def test_brier_and_ece_intervals_equal_a_scikit_learn_and_hand_loop_over_the_same_unit_resamples():
    rng = np.random.default_rng(14)
    for case in range(30):
        p, labels, units = _random_calibration(rng)
        ours = calibration_intervals(p, labels, units, unit="query family", replicates=LOOP_REPLICATES, seed=case)
        keep = [i for i, label in enumerate(labels) if label is not None]
        if not keep:
            assert not ours.brier.defined and not ours.ece.defined
            continue
        kp = np.array([p[i] for i in keep])
        ky = np.array([labels[i] >= 2 for i in keep], dtype=int)
        ku = [units[i] for i in keep]
        assert ours.brier.interval.estimate == pytest.approx(brier_score_loss(ky, kp), abs=1e-12)
        assert ours.brier.interval.estimate == pytest.approx(brier_score(p, labels), abs=1e-12)
        assert ours.ece.interval.estimate == pytest.approx(_hand_ece(kp, ky), abs=1e-12)
        assert ours.ece.interval.estimate == pytest.approx(
            expected_calibration_error(reliability_table(p, labels)), abs=1e-12)
        assert (ours.brier.units, ours.brier.observations) == (len(set(ku)), len(keep))
        if ours.brier.units < MIN_UNITS:
            assert not ours.brier.has_interval and not ours.ece.has_interval
            continue
        for figure, replicate in (
            (ours.brier, lambda rows, kp=kp, ky=ky: brier_score_loss(ky[rows], kp[rows])),
            (ours.ece, lambda rows, kp=kp, ky=ky: _hand_ece(kp[rows], ky[rows])),
        ):
            low, high, undefined = _reference(ku, replicate, replicates=LOOP_REPLICATES, seed=case)
            assert undefined == figure.undefined == 0
            assert [figure.interval.low, figure.interval.high] == pytest.approx([low, high], abs=1e-12)


def test_brier_interval_equals_scipy_stats_bootstrap_percentile_over_unit_indices():
    rng = np.random.default_rng(15)
    compared = 0
    for case in range(40):
        p, labels, units = _random_calibration(rng)
        keep = [i for i, label in enumerate(labels) if label is not None]
        ours = calibration_intervals(p, labels, units, unit="query family", replicates=500, seed=case).brier
        if not ours.has_interval:
            continue
        kp = np.array([p[i] for i in keep])
        ky = np.array([labels[i] >= 2 for i in keep], dtype=float)
        _, members = _unit_members([units[i] for i in keep])
        sq = np.array([((kp[m] - ky[m]) ** 2).sum() for m in members])
        count = np.array([len(m) for m in members], dtype=float)
        ref = stats.bootstrap((np.arange(len(members)),),
                              lambda d, axis=-1, sq=sq, count=count: sq[d].sum(axis=axis) / count[d].sum(axis=axis),
                              n_resamples=500, method="percentile", vectorized=True, rng=np.random.default_rng(case))
        assert ours.interval.low == pytest.approx(ref.confidence_interval.low, abs=1e-12)
        assert ours.interval.high == pytest.approx(ref.confidence_interval.high, abs=1e-12)
        compared += 1
    assert compared >= 30


# ---------------------------------------------------------------- population and degenerate cases


def test_every_interval_records_its_unit_count_observations_replicates_and_seed():
    a, b, units = [0, 1, 2, 3, 1, 0], [0, 1, 2, 2, 1, 1], ["c1", "c1", "c2", "c2", "c3", "c3"]
    figure = kappa_interval(a, b, units, unit="contract", observation="candidate", replicates=1000, seed=7)
    assert (figure.unit, figure.units, figure.observations, figure.replicates, figure.seed) == (
        "contract", 3, 6, 1000, 7)
    assert figure.population == "3 contracts (6 candidates), 1000 resamples of contracts, seed 7"
    exported = figure.as_dict()
    assert exported["units"] == 3 and exported["unit"] == "contract" and exported["undefined_replicates"] == 0
    assert exported["low"] <= exported["estimate"] <= exported["high"]


def test_an_item_without_a_grade_changes_neither_the_population_nor_the_interval():
    rng = np.random.default_rng(16)
    for case in range(20):
        a, b, units = _random_pairs(rng, skewed=False)
        base = kappa_interval(a, b, units, unit="item", replicates=300, seed=case)
        # Two more items, each graded by one rater only, in units of their own.
        more = kappa_interval([*a, 2, None], [*b, None, 1], [*units, "new-unit", "other"], unit="item",
                              replicates=300, seed=case)
        assert (more.units, more.observations) == (base.units, base.observations)
        assert more.interval == base.interval


def test_a_single_unit_gets_no_interval_and_says_why_in_words():
    figure = kappa_interval([0, 1, 2, 1], [0, 1, 1, 1], ["only"] * 4, unit="contract", replicates=500, seed=1)
    assert figure.defined and not figure.has_interval
    assert figure.caveat == "1 contract: too few for an interval or a p-value (at least 3 needed)"


def test_an_undefined_point_estimate_gets_no_interval_and_says_why():
    figure = kappa_interval(["no"] * 5, ["no"] * 5, list("abcde"), categories=("no", "yes"), unit="contract",
                            replicates=500, seed=1)
    assert not figure.defined and not figure.has_interval
    assert "undefined on these data (both raters using one and the same category)" in figure.caveat


def test_no_observation_at_all_is_reported_not_computed():
    figure = calibration_intervals([0.3], [None], ["f"], unit="query family", replicates=100, seed=1).brier
    assert (figure.units, figure.observations, figure.defined) == (0, 0, False)
    assert figure.caveat == "no labelled items: Brier score is not computed"


def test_the_draw_does_not_depend_on_the_order_observations_are_listed():
    rng = np.random.default_rng(17)
    a, b, units = _random_pairs(rng, skewed=False)
    order = rng.permutation(len(a))
    base = kappa_interval(a, b, units, unit="item", replicates=500, seed=3)
    shuffled = kappa_interval([a[i] for i in order], [b[i] for i in order], [units[i] for i in order], unit="item",
                              replicates=500, seed=3)
    assert shuffled.interval.low == pytest.approx(base.interval.low, abs=1e-12)
    assert shuffled.interval.high == pytest.approx(base.interval.high, abs=1e-12)


def test_mismatched_unit_labels_are_refused_with_the_field_named():
    with pytest.raises(ValueError, match="unit labels"):
        kappa_interval([0, 1], [0, 1], ["a"], unit="item", replicates=10, seed=0)
    with pytest.raises(ValueError, match="unit labels"):
        calibration_intervals([0.1, 0.2], [0, 1], ["a"], unit="item", replicates=10, seed=0)
    with pytest.raises(ValueError, match="unit labels"):
        alpha_interval([[0, 1], [0, 1]], ["a"], unit="item", replicates=10, seed=0)


@pytest.mark.parametrize("n_units", [1, 7, 300, 70_000])
def test_the_blocks_concatenate_to_exactly_the_whole_index_matrix(n_units):
    blocks = list(resample_index_blocks(n_units, replicates=50, seed=21))
    assert len(blocks) > 1 or n_units < 10_000
    assert (np.concatenate(blocks) == resample_indices(n_units, replicates=50, seed=21)).all()


def test_unit_bootstrap_is_the_shared_draw_of_the_family_bootstrap():
    # The mean as a statistic of (sum, count) tallies must reproduce the family bootstrap exactly.
    from scoring.ir.family_bootstrap import family_bootstrap

    rng = np.random.default_rng(18)
    values = rng.random(30)
    families = [f"f{int(x)}" for x in rng.integers(0, 6, 30)]
    names = sorted(set(families))
    tallies = np.array([[values[[f == n for f in families]].sum(), families.count(n)] for n in names])
    ours = unit_bootstrap(tallies, lambda s: s[:, 0] / s[:, 1], name="mean", unit="query family",
                          observation="query", observations=30, undefined_when="never", replicates=2000, seed=9)
    theirs = family_bootstrap(list(values), families, replicates=2000, seed=9)
    assert ours.interval.estimate == pytest.approx(theirs.interval.estimate, abs=1e-12)
    assert [ours.interval.low, ours.interval.high] == pytest.approx(theirs.interval.as_list(), abs=1e-12)
