"""Matchers: Hungarian is the brute-force optimum and never below greedy; greedy follows its tie rule."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from scoring.cuad.matching import assignment_total, greedy, hungarian, match


def brute_force_best(scores: np.ndarray) -> float:
    n_rows, n_cols = scores.shape
    best = 0.0
    if n_rows <= n_cols:
        for cols in itertools.permutations(range(n_cols), n_rows):
            best = max(best, sum(scores[i, c] for i, c in enumerate(cols)))
    else:
        for rows in itertools.permutations(range(n_rows), n_cols):
            best = max(best, sum(scores[r, j] for j, r in enumerate(rows)))
    return best


def reference_greedy(scores: np.ndarray) -> list[tuple[int, int]]:
    pairs = sorted(
        (-scores[i, j], i, j) for i in range(scores.shape[0]) for j in range(scores.shape[1]) if scores[i, j] > 0
    )
    used_r, used_c, out = set(), set(), []
    for _, i, j in pairs:
        if i not in used_r and j not in used_c:
            used_r.add(i)
            used_c.add(j)
            out.append((i, j))
    return sorted(out)


def test_greedy_is_beaten_by_hungarian_on_the_classic_trap():
    scores = np.array([[0.9, 0.8], [0.7, 0.0]])
    g_rows, g_cols = greedy(scores)
    h_rows, h_cols = hungarian(scores)
    assert list(zip(g_rows, g_cols, strict=True)) == [(0, 0)]
    assert assignment_total(scores, h_rows, h_cols) == pytest.approx(1.5)
    assert assignment_total(scores, g_rows, g_cols) == pytest.approx(0.9)


def test_greedy_breaks_ties_by_extraction_then_span_order():
    scores = np.array([[0.5, 0.5], [0.5, 0.5]])
    rows, cols = greedy(scores)
    assert list(zip(rows.tolist(), cols.tolist(), strict=True)) == [(0, 0), (1, 1)]


def test_matchers_leave_zero_score_pairs_unmatched():
    scores = np.array([[0.0, 0.0], [0.0, 0.6]])
    for name in ("hungarian", "greedy"):
        rows, cols = match(scores, matcher=name)
        assert rows.tolist() == [1] and cols.tolist() == [1]
    assert hungarian(np.zeros((0, 3)))[0].size == 0


@pytest.mark.parametrize("seed", range(3))
def test_hungarian_equals_the_brute_force_optimum_on_small_matrices(seed):
    rng = np.random.default_rng(seed)
    for _ in range(150):
        shape = tuple(rng.integers(1, 6, size=2))
        scores = rng.random(shape) * (rng.random(shape) > 0.3)
        scores = np.round(scores, 1)  # ties on purpose
        rows, cols = hungarian(scores)
        assert assignment_total(scores, rows, cols) == pytest.approx(brute_force_best(scores))
        assert len(set(rows.tolist())) == len(rows) and len(set(cols.tolist())) == len(cols)


def test_hungarian_total_is_never_below_greedy_and_greedy_matches_its_reference():
    rng = np.random.default_rng(42)
    for _ in range(500):
        shape = tuple(rng.integers(1, 12, size=2))
        scores = np.round(rng.random(shape) * (rng.random(shape) > 0.4), 2)
        h = assignment_total(scores, *hungarian(scores))
        g_rows, g_cols = greedy(scores)
        assert h >= assignment_total(scores, g_rows, g_cols) - 1e-12
        assert list(zip(g_rows.tolist(), g_cols.tolist(), strict=True)) == reference_greedy(scores)


def test_it_refuses_an_unknown_matcher():
    with pytest.raises(ValueError, match="unknown matcher"):
        match(np.ones((1, 1)), matcher="random")
