"""Holm's adjustment against statsmodels, and the paired-bootstrap p-value against a direct count."""

from __future__ import annotations

import numpy as np
import pytest

from scoring.stats.multiple import bootstrap_p_value, holm_adjust
from tests.references import multipletests


@pytest.mark.parametrize("seed", range(20))
def test_holm_equals_statsmodels_on_random_p_values(seed):
    rng = np.random.default_rng(seed)
    m = int(rng.integers(1, 25))
    p = rng.uniform(0, 1, m) ** rng.uniform(0.5, 4)
    p[rng.uniform(size=m) < 0.2] = p[0]  # ties
    reference = multipletests(p, method="holm")[1]
    assert holm_adjust(p.tolist()) == pytest.approx(reference.tolist(), abs=1e-12)


def test_holm_leaves_nan_out_and_keeps_the_input_order():
    adjusted = holm_adjust([0.04, float("nan"), 0.01, 0.03])
    reference = multipletests([0.04, 0.01, 0.03], method="holm")[1]
    assert np.isnan(adjusted[1])
    assert [adjusted[0], adjusted[2], adjusted[3]] == pytest.approx(reference.tolist())


@pytest.mark.parametrize("seed", range(10))
def test_the_bootstrap_p_value_counts_both_tails_with_zeros(seed):
    rng = np.random.default_rng(seed)
    d = np.round(rng.normal(rng.uniform(-0.2, 0.2), 0.1, 999), 1)  # rounded: many exact zeros
    n = d.size
    expected = min(1.0, 2 * min((sum(x <= 0 for x in d) + 1) / (n + 1), (sum(x >= 0 for x in d) + 1) / (n + 1)))
    assert bootstrap_p_value(d) == pytest.approx(expected)


def test_the_bootstrap_p_value_edge_cases():
    assert bootstrap_p_value(np.zeros(100)) == 1.0  # identical systems: no evidence
    assert bootstrap_p_value(np.ones(999)) == pytest.approx(2 / 1000)  # never p = 0
    assert np.isnan(bootstrap_p_value(np.array([np.nan, np.nan])))
    assert bootstrap_p_value(np.array([np.nan, 1.0, 2.0])) == pytest.approx(2 / 3)
