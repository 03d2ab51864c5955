"""Gwet's AC1/AC2, PABAK, prevalence and the kappa-paradox line against a direct, loop-based reading of the formulas.

The reference below follows Gwet (2008) and the irrCAC documentation
(``gwet.ac1.raw`` for two raters): per category k, pi_k is the mean of the two
raters' marginal shares; p_a = sum over items of the agreement weight of the
two grades, over n; p_e = T_w / (q (q - 1)) * sum_k pi_k (1 - pi_k). It never
builds a table, so it checks the vectorised table code independently.
"""

from __future__ import annotations

import numpy as np
import pytest

from scoring.stats.agreement import (
    cohen_kappa,
    gwet_ac1,
    gwet_interval,
    gwet_of_tables,
    kappa_paradox_note,
    pabak,
    pair_agreement,
)

GRADES = [0, 1, 2, 3]


def _reference_gwet(a, b, categories, quadratic):
    q = len(categories)
    pairs = [(x, y) for x, y in zip(a, b, strict=True) if x is not None and y is not None]
    n = len(pairs)
    position = {c: i for i, c in enumerate(categories)}

    def weight(k, m):
        if not quadratic:
            return 1.0 if k == m else 0.0
        return 1.0 - (k - m) ** 2 / (q - 1) ** 2

    p_a = sum(weight(position[x], position[y]) for x, y in pairs) / n
    t_w = sum(weight(k, m) for k in range(q) for m in range(q))
    p_e = 0.0
    for c in categories:
        pi = (sum(1 for x, _ in pairs if x == c) / n + sum(1 for _, y in pairs if y == c) / n) / 2
        p_e += pi * (1 - pi)
    p_e *= t_w / (q * (q - 1))
    return (p_a - p_e) / (1 - p_e)


def _random_pair(rng):
    n = int(rng.integers(2, 60))
    a = rng.integers(0, 4, n)
    b = np.clip(a + rng.integers(-1, 2, n), 0, 3)
    if rng.random() < 0.4:  # one dominant grade, the paradox's ground
        a = np.where(rng.random(n) < 0.8, 0, a)
        b = np.where(rng.random(n) < 0.8, 0, b)
    a_list = [int(x) for x in a]
    b_list = [int(x) for x in b]
    for i in np.flatnonzero(rng.random(n) < 0.1):
        a_list[i] = None
    if all(x is None for x in a_list):
        a_list[0] = 0
    return a_list, b_list


@pytest.mark.parametrize("quadratic", [False, True])
def test_gwet_agrees_with_the_loop_based_reference_on_random_pairs(quadratic):
    rng = np.random.default_rng(32)
    for _ in range(200):
        a, b = _random_pair(rng)
        expected = _reference_gwet(a, b, GRADES, quadratic)
        got = gwet_ac1(a, b, weights="quadratic" if quadratic else None)
        assert got == pytest.approx(expected, abs=1e-12)


def test_gwet_on_yes_no_verdicts_agrees_with_the_reference_and_quadratic_equals_nominal():
    rng = np.random.default_rng(7)
    for _ in range(100):
        n = int(rng.integers(1, 40))
        a = [("yes" if v else "no") for v in rng.random(n) < 0.2]
        b = [("yes" if v else "no") for v in rng.random(n) < 0.3]
        expected = _reference_gwet(a, b, ["no", "yes"], False)
        assert gwet_ac1(a, b, categories=["no", "yes"]) == pytest.approx(expected, abs=1e-12)
        assert gwet_ac1(a, b, categories=["no", "yes"], weights="quadratic") == pytest.approx(expected, abs=1e-12)


def test_the_kappa_paradox_five_of_six_agree_kappa_zero_ac1_high():
    a = ["no"] * 6
    b = ["no"] * 5 + ["yes"]
    summary = pair_agreement(a, b, categories=["no", "yes"])
    assert summary.raw_agreement == pytest.approx(5 / 6)
    assert summary.kappa == pytest.approx(0.0)
    # pi_no = 11/12, p_e = 2 * 11/12 * 1/12 = 22/144; AC1 = (5/6 - 22/144) / (1 - 22/144) = 98/122.
    assert summary.ac1 == pytest.approx(98 / 122)
    assert summary.pabak == pytest.approx(2 * 5 / 6 - 1)
    assert summary.prevalence == (("no", pytest.approx(11 / 12)), ("yes", pytest.approx(1 / 12)))
    note = kappa_paradox_note(n=summary.n, agreements=summary.agreements, kappa=summary.kappa, ac1=summary.ac1,
                              prevalence=summary.prevalence)
    assert note == ("5 of 6 agree and kappa 0.000: one grade (no, 92% of grades) is so common that chance "
                    "agreement is high; AC1 0.80 is robust to that.")


def test_balanced_grades_give_no_paradox_line_and_ac1_close_to_kappa():
    a = [0, 0, 1, 1, 2, 2, 3, 3]
    b = [0, 0, 1, 1, 2, 2, 3, 2]
    summary = pair_agreement(a, b)
    assert summary.agreements == 7
    assert kappa_paradox_note(n=8, agreements=7, kappa=summary.kappa, ac1=summary.ac1,
                              prevalence=summary.prevalence) == ""
    assert abs(summary.ac1 - summary.kappa) < 0.05


def test_full_agreement_on_one_grade_leaves_kappa_undefined_and_ac1_one():
    summary = pair_agreement([1, 1, 1], [1, 1, 1])
    assert summary.kappa is None
    assert summary.ac1 == pytest.approx(1.0)
    note = kappa_paradox_note(n=3, agreements=3, kappa=None, ac1=summary.ac1, prevalence=summary.prevalence)
    assert note.startswith("3 of 3 agree and kappa undefined: one grade (1, 100% of grades)")


def test_pabak_is_q_times_raw_agreement_less_one_over_q_less_one():
    assert pabak([0, 1, 2, 3], [0, 1, 2, 2]) == pytest.approx((4 * 0.75 - 1) / 3)
    assert pabak([None], [1]) is None


def test_an_empty_pair_has_no_gwet_coefficient():
    assert gwet_ac1([None, 1], [2, None]) is None
    assert np.isnan(gwet_of_tables(np.zeros((1, 4, 4)))[0])


def test_the_gwet_interval_resamples_units_and_brackets_the_estimate():
    rng = np.random.default_rng(3)
    a = [int(x) for x in rng.integers(0, 4, 60)]
    b = [min(3, x + int(rng.integers(0, 2))) for x in a]
    units = [f"u{i // 3}" for i in range(60)]
    result = gwet_interval(a, b, units, weights="quadratic", unit="family", replicates=500, seed=1)
    assert result.interval.estimate == pytest.approx(gwet_ac1(a, b, weights="quadratic"))
    assert result.interval.low <= result.interval.estimate <= result.interval.high
    assert cohen_kappa(a, b) is not None
