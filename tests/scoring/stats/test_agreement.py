"""Cohen's kappa against scikit-learn and Krippendorff's alpha against the krippendorff package.

Mapping: scikit-learn is called with labels=[0, 1, 2, 3] so that quadratic
weights use grade positions 0..3 even when a grade is absent from the data
(without ``labels`` it renumbers the grades it sees, a different statistic).
"""

from __future__ import annotations

import krippendorff
import numpy as np
import pytest

from scoring.stats.agreement import (
    cohen_kappa,
    confusion_table,
    krippendorff_alpha_ordinal,
    landis_koch_band,
    pair_agreement,
    raw_agreement,
)
from tests.references import cohen_kappa_score, confusion_matrix

GRADES = [0, 1, 2, 3]


def _random_pair(rng: np.random.Generator):
    n = int(rng.integers(2, 80))
    a = rng.integers(0, 4, n)
    noise = rng.integers(-2, 3, n) if rng.random() < 0.5 else rng.integers(-1, 2, n)
    b = np.clip(a + noise, 0, 3)
    if rng.random() < 0.3:  # leave a grade out entirely
        missing_grade = int(rng.integers(0, 4))
        a = np.where(a == missing_grade, (missing_grade + 1) % 4, a)
        b = np.where(b == missing_grade, (missing_grade + 1) % 4, b)
    a_list: list[int | None] = [int(x) for x in a]
    b_list: list[int | None] = [int(x) for x in b]
    for i in np.flatnonzero(rng.random(n) < 0.1):
        (a_list if rng.random() < 0.5 else b_list)[i] = None
    return a_list, b_list


def test_kappa_unweighted_and_quadratic_equal_scikit_learn_on_hundreds_of_random_pairs():
    rng = np.random.default_rng(31)
    compared = 0
    for _ in range(500):
        a, b = _random_pair(rng)
        both = [(x, y) for x, y in zip(a, b, strict=True) if x is not None and y is not None]
        xa, xb = [x for x, _ in both], [y for _, y in both]
        summary = pair_agreement(a, b)
        assert summary.n == len(both)
        assert summary.excluded == len(a) - len(both)
        assert (summary.table == confusion_matrix(xa, xb, labels=GRADES)).all()
        if not both:
            continue
        assert raw_agreement(a, b) == pytest.approx(np.mean(np.array(xa) == np.array(xb)))
        if len(set(xa) | set(xb)) < 2:
            assert cohen_kappa(a, b) is None
            continue
        for weights, ours in ((None, summary.kappa), ("quadratic", summary.kappa_quadratic)):
            reference = cohen_kappa_score(xa, xb, labels=GRADES, weights=weights)
            assert ours == pytest.approx(reference, abs=1e-12)
            assert cohen_kappa(a, b, weights=weights) == ours
        compared += 1
    assert compared > 400


def test_krippendorff_alpha_ordinal_equals_the_krippendorff_package_with_many_raters_and_missing_grades():
    rng = np.random.default_rng(32)
    compared = 0
    for _ in range(400):
        raters, units = int(rng.integers(2, 7)), int(rng.integers(3, 40))
        truth = rng.integers(0, 4, units)
        data = np.clip(truth + rng.integers(-1, 2, (raters, units)), 0, 3).astype(float)
        data[rng.random((raters, units)) < rng.uniform(0.0, 0.5)] = np.nan
        pairable = data[:, (~np.isnan(data)).sum(axis=0) >= 2]
        values = np.unique(pairable[~np.isnan(pairable)])
        rows = [[None if np.isnan(x) else int(x) for x in row] for row in data]
        if values.size < 2:
            assert krippendorff_alpha_ordinal(rows) is None
            continue
        reference = krippendorff.alpha(reliability_data=data, level_of_measurement="ordinal")
        assert krippendorff_alpha_ordinal(rows) == pytest.approx(reference, abs=1e-10)
        compared += 1
    assert compared > 350


@pytest.mark.parametrize(
    ("kappa", "band"),
    [
        (-0.01, "poor"),
        (0.0, "slight"),
        (0.20, "slight"),
        (0.2 + 1e-15, "slight"),
        (0.205, "fair"),
        (0.21, "fair"),
        (0.40, "fair"),
        (0.41, "moderate"),
        (0.60, "moderate"),
        (0.61, "substantial"),
        (0.80, "substantial"),
        (0.81, "almost perfect"),
        (1.0, "almost perfect"),
        (None, None),
    ],
)
def test_landis_koch_bands_follow_the_architecture_definitions(kappa, band):
    assert landis_koch_band(kappa) == band


def test_an_ungraded_item_changes_excluded_and_never_the_kappa():
    a, b = [0, 1, 2, 3, 3, 2], [0, 1, 1, 3, 2, 2]
    base = pair_agreement(a, b)
    more = pair_agreement([*a, None, 2], [*b, 3, None])
    assert (more.kappa, more.kappa_quadratic, more.raw_agreement, more.n) == (
        base.kappa,
        base.kappa_quadratic,
        base.raw_agreement,
        base.n,
    )
    assert more.excluded == base.excluded + 2
    assert krippendorff_alpha_ordinal([[*a, None], [*b, None]]) == krippendorff_alpha_ordinal([a, b])


def test_a_grade_outside_the_categories_is_refused_with_its_item():
    with pytest.raises(ValueError, match="item 1: rater b's grade 7"):
        confusion_table([0, 1], [0, 7])
