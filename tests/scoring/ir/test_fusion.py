"""Reciprocal rank fusion against a few-line reference on random rankings."""

from __future__ import annotations

import random
from fractions import Fraction

import pytest

from scoring.ir.fusion import RRF_K, rrf_order, rrf_scores


def _reference(rankings: list[list[str]], k: int) -> list[str]:
    # Exact arithmetic: ties are real ties here, broken by the first ranking's order.
    score = {d: sum(Fraction(1, k + r.index(d) + 1) for r in rankings) for d in rankings[0]}
    return sorted(rankings[0], key=lambda d: (-score[d], rankings[0].index(d)))


@pytest.mark.parametrize("seed", range(40))
def test_rrf_orders_random_rankings_as_the_reference_does(seed):
    rng = random.Random(seed)
    docs = [f"d{i}" for i in range(rng.randint(1, 30))]
    rankings = [rng.sample(docs, len(docs)) for _ in range(rng.randint(1, 4))]
    k = rng.choice([RRF_K, 0, 1, 5])
    assert rrf_order(rankings, k=k) == _reference(rankings, k)
    scores = rrf_scores(rankings, k=k)
    for d in docs:
        assert scores[d] == pytest.approx(float(sum(Fraction(1, k + r.index(d) + 1) for r in rankings)), rel=1e-12)


def test_mirrored_ranks_tie_and_the_first_ranking_breaks_the_tie():
    # a and c both get 1/61 + 1/63; b gets 2/62, a little less (the harmonic mean is below the arithmetic).
    assert rrf_order([["a", "b", "c"], ["c", "b", "a"]]) == ["a", "c", "b"]
    assert rrf_order([["c", "b", "a"], ["a", "b", "c"]]) == ["c", "a", "b"]


def test_rankings_of_different_candidates_are_refused_by_name():
    with pytest.raises(ValueError, match=r"ranking 2 does not order the same documents.*x"):
        rrf_order([["a", "b"], ["a", "x"]])
    with pytest.raises(ValueError, match="appears twice"):
        rrf_order([["a", "a"]])
    with pytest.raises(ValueError, match="at least one ranking"):
        rrf_order([])
