"""Brier, reliability bins, ECE and confidence agreement against scikit-learn and direct loops.

Convention mismatch, stated and tested: scikit-learn's calibration_curve
(strategy="uniform") assigns a value equal to an interior edge (0.2, 0.4, 0.6,
0.8) to the LOWER bin (bins closed on the right). Ours are closed on the left,
so that the last bin is exactly "at or above 0.8" and includes 1.0, as
ARCHITECTURE.md defines. Random inputs are continuous, so they never sit on an
edge and the two agree exactly; the edges are tested by hand.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from scoring.stats.calibration import (
    bin_index,
    brier_score,
    calibration_summary,
    confidence_agreement_table,
    distribution_confidence,
    expected_calibration_error,
    p_useful,
    reliability_table,
    threshold_diagnostic,
)
from tests.references import brier_score_loss, calibration_curve


def _random_items(rng: np.random.Generator, n: int):
    alpha = rng.uniform(0.2, 3.0, 4)
    distributions = rng.dirichlet(alpha, size=n)
    labels: list[int | None] = [int(x) for x in rng.integers(0, 4, n)]
    for i in np.flatnonzero(rng.random(n) < 0.15):
        labels[i] = None
    return distributions, labels


def test_brier_and_reliability_bins_equal_scikit_learn_on_hundreds_of_random_splits():
    rng = np.random.default_rng(21)
    for _ in range(300):
        distributions, labels = _random_items(rng, int(rng.integers(5, 120)))
        p = [p_useful(d) for d in distributions]
        keep = [i for i, label in enumerate(labels) if label is not None]
        y_true = np.array([labels[i] >= 2 for i in keep], dtype=int)
        y_prob = np.array([p[i] for i in keep])
        if not keep:
            assert brier_score(p, labels) is None
            continue
        assert brier_score(p, labels) == pytest.approx(brier_score_loss(y_true, y_prob), abs=1e-12)
        table = reliability_table(p, labels)
        nonempty = [b for b in table if b.count]
        if len(set(y_true)) > 1:  # calibration_curve refuses a single-class y_true
            prob_true, prob_pred = calibration_curve(y_true, y_prob, n_bins=5, strategy="uniform")
            assert [b.observed_rate for b in nonempty] == pytest.approx(list(prob_true), abs=1e-12)
            assert [b.mean_predicted for b in nonempty] == pytest.approx(list(prob_pred), abs=1e-12)
        assert sum(b.count for b in table) == len(keep)


def test_ece_equals_a_direct_loop_over_items():
    rng = np.random.default_rng(22)
    for _ in range(300):
        distributions, labels = _random_items(rng, int(rng.integers(1, 80)))
        p = [p_useful(d) for d in distributions]
        members: dict[int, list[tuple[float, int]]] = {}
        for prob, label in zip(p, labels, strict=True):
            if label is not None:
                members.setdefault(min(math.floor(prob * 5), 4), []).append((prob, int(label >= 2)))
        total = sum(len(m) for m in members.values())
        reference = (
            sum(
                len(m) / total * abs(sum(x for x, _ in m) / len(m) - sum(y for _, y in m) / len(m))
                for m in members.values()
            )
            if total
            else None
        )
        ours = expected_calibration_error(reliability_table(p, labels))
        assert ours == pytest.approx(reference, abs=1e-12)


def test_bins_are_closed_on_the_left_and_the_last_includes_one_unlike_scikit_learn():
    edges = [0.0, 0.2, 0.4, 0.6, 0.8, 1.0]
    assert list(bin_index(edges)) == [0, 1, 2, 3, 4, 4]
    assert list(bin_index([0.19999, 0.39999, 0.59999, 0.79999])) == [0, 1, 2, 3]
    # scikit-learn puts 0.8 with [0.6, 0.8]; we put it with the 0.8 diagnostic bin.
    sklearn_bins = np.searchsorted(np.linspace(0.0, 1.0, 6)[1:-1], [0.2, 0.8])
    assert list(sklearn_bins) == [0, 3]


def test_threshold_diagnostic_counts_items_at_or_above_0_8_and_how_many_were_judged_useful():
    rng = np.random.default_rng(23)
    for _ in range(200):
        n = int(rng.integers(1, 60))
        p = list(np.round(rng.random(n), 1))  # rounding puts some values exactly on 0.8
        labels = [None if rng.random() < 0.1 else int(g) for g in rng.integers(0, 4, n)]
        result = threshold_diagnostic(p, labels)
        judged = [(x, g) for x, g in zip(p, labels, strict=True) if g is not None]
        assert result.at_or_above == sum(1 for x, _ in judged if x >= 0.8)
        assert result.judged_useful == sum(1 for x, g in judged if x >= 0.8 and g >= 2)


def test_confidence_agreement_equals_a_direct_loop():
    rng = np.random.default_rng(24)
    for _ in range(200):
        distributions, labels = _random_items(rng, int(rng.integers(1, 80)))
        table = confidence_agreement_table(distributions, labels)
        for b in range(5):
            members = [
                (max(d) / sum(d), int(np.argmax(d)) == g)
                for d, g in zip(distributions, labels, strict=True)
                if g is not None and min(math.floor(max(d) / sum(d) * 5), 4) == b
            ]
            assert table[b].count == len(members)
            if members:
                assert table[b].mean_confidence == pytest.approx(np.mean([c for c, _ in members]), abs=1e-12)
                assert table[b].exact_agreement == pytest.approx(np.mean([a for _, a in members]), abs=1e-12)
            else:
                assert table[b].mean_confidence is None


def test_an_unjudged_item_changes_excluded_and_never_a_value():
    rng = np.random.default_rng(25)
    distributions, labels = _random_items(rng, 50)
    base = calibration_summary(list(distributions), labels)
    more = calibration_summary([*distributions, [0.0, 0.0, 0.1, 0.9], [0.9, 0.1, 0.0, 0.0]], [*labels, None, None])
    assert more.excluded == base.excluded + 2
    assert more.included == base.included
    assert (more.brier, more.ece, more.bins, more.agreement_bins, more.diagnostic) == (
        base.brier,
        base.ece,
        base.bins,
        base.agreement_bins,
        base.diagnostic,
    )


def test_p_useful_renormalises_grades_2_and_3_and_confidence_is_the_largest_probability():
    assert p_useful([0.1, 0.1, 0.2, 0.2]) == pytest.approx(2 / 3)
    assert distribution_confidence([0.1, 0.1, 0.2, 0.6]) == pytest.approx(0.6)
    assert distribution_confidence([1.0, 1.0, 1.0, 1.0]) == pytest.approx(0.25)
    with pytest.raises(ValueError, match="four non-negative probabilities"):
        p_useful([0.5, 0.5])


def test_a_label_outside_0_to_3_is_refused_with_its_index():
    with pytest.raises(ValueError, match="item 1: label must be a grade 0-3"):
        brier_score([0.2, 0.3], [1, 5])
