"""Permutation tests of independence: against scipy.stats.permutation_test, and their null behaviour."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats

from scoring.stats.permutation import (
    BLOCKS,
    draw_positions,
    max_abs_statistic,
    mean_difference_statistic,
    permutation_test,
    spearman_statistic,
    within_groups_statistic,
)


def _scipy_p(x, y, *, statistic, n_resamples, seed=None) -> float:
    return stats.permutation_test((x,), statistic, permutation_type="pairings", alternative="greater",
                                  n_resamples=n_resamples, random_state=seed, vectorized=True).pvalue


def _abs_spearman(y):
    """|Spearman| of each row of ``a`` with ``y``, written independently of the module: ranks, then Pearson."""
    ry = stats.rankdata(y)

    def statistic(a, axis=-1):
        ra = stats.rankdata(a, axis=axis)
        ra = ra - ra.mean(axis=axis, keepdims=True)
        centred = ry - ry.mean()
        return np.abs((ra * centred).sum(axis=axis) / np.sqrt((ra * ra).sum(axis=axis) * (centred ** 2).sum()))

    return statistic


def _abs_gap(member):
    def statistic(a, axis=-1):
        return np.abs(np.compress(member, a, axis=axis).mean(axis=axis) - np.compress(~member, a, axis=axis).mean(
            axis=axis))

    return statistic


def test_exact_p_values_equal_scipys_on_random_small_inputs():
    rng = np.random.default_rng(1)
    for _ in range(30):
        n = int(rng.integers(4, 8))
        x, y = rng.permutation(n), rng.integers(0, 4, n)
        if np.ptp(y) == 0:
            continue
        ours = permutation_test(spearman_statistic(y), x, n_resamples=10_000)
        assert ours.exact
        assert ours.p_value == pytest.approx(_scipy_p(
            x, y, statistic=_abs_spearman(y), n_resamples=10_000))
        member = y >= 2
        if 0 < member.sum() < n:
            gap = permutation_test(mean_difference_statistic(member), x, n_resamples=10_000).p_value
            assert gap == pytest.approx(_scipy_p(
                x, y, statistic=_abs_gap(member), n_resamples=10_000))


def test_sampled_p_values_agree_with_scipys_within_sampling_error():
    rng = np.random.default_rng(2)
    for trial in range(8):
        n = 40
        x = rng.permutation(n)
        y = rng.normal(size=n) + x * rng.choice([0.0, 0.01, 0.03])
        ours = permutation_test(spearman_statistic(y), x, n_resamples=4999, seed=trial).p_value
        theirs = _scipy_p(x, y, statistic=_abs_spearman(y), n_resamples=4999,
                          seed=trial + 100)
        assert abs(ours - theirs) <= 4 * np.sqrt(max(theirs * (1 - theirs), 1e-3) / 4999) + 2e-3


def test_block_draws_keep_each_group_contiguous_and_every_order_possible():
    groups = ["a", "a", "b", "b", "b", "c"]
    drawn = draw_positions(BLOCKS, 6, np.random.default_rng(3), 3000, groups)
    for row in drawn:
        assert sorted(row) == list(range(6))
        for g in "abc":
            where = sorted(row[[i for i, x in enumerate(groups) if x == g]])
            assert where == list(range(where[0], where[0] + len(where)))
    # 3! group orders x 2! x 3! within: 72 orders, each drawn
    assert len({tuple(row) for row in drawn}) == 72


def test_under_independence_p_values_are_not_too_small_and_a_planted_order_is_found():
    rng = np.random.default_rng(4)
    groups = [q for q in range(6) for _ in range(8)]
    p_null, p_planted = [], []
    for trial in range(60):
        rank = np.concatenate([rng.permutation(8) for _ in range(6)])
        statistic = max_abs_statistic(spearman_statistic(rank), within_groups_statistic(rank, groups))
        blind = draw_positions(BLOCKS, 48, rng, 1, groups)[0]
        p_null.append(permutation_test(statistic, blind, design=BLOCKS, groups=groups, n_resamples=199,
                                       seed=trial).p_value)
        # queries whole, but inside each the lowest ranks first
        planted = np.argsort(np.lexsort((rank, groups))).astype(int)
        p_planted.append(permutation_test(statistic, planted, design=BLOCKS, groups=groups, n_resamples=199,
                                          seed=trial).p_value)
    assert np.mean(np.array(p_null) <= 0.1) <= 0.1 + 3 * np.sqrt(0.09 / 60)
    assert max(p_planted) <= 1 / 200 + 1e-12
