"""The leaderboards' one sentence across N systems: one test per case."""

from __future__ import annotations

import math

from scoring.stats.bootstrap import Interval
from scoring.stats.units import unit_support
from scoring.stats.verdict import (
    BEST,
    FLOOR,
    IDENTICAL,
    INCOMPLETE,
    NO_SYSTEM,
    SATURATED,
    SINGLE,
    TOO_FEW,
    UNDECIDED,
    Contender,
    Duel,
    verdict_sentence,
)

NAN = math.nan


def _verdict(contenders, duels, units=12):
    return verdict_sentence(metric="held-out Hit@5", contenders=contenders, duels=duels,
                            population="24 held-out queries in 12 query families",
                            support=unit_support(units, unit="query family"), replicates=9_999)


def _three(p_bc=0.3, p_ac=0.001, p_ab=0.2):
    contenders = [Contender("keyword", 0.40), Contender("rerank-1", 0.70), Contender("rerank-2", 0.65)]
    duels = [
        Duel("rerank-1", "keyword", Interval(0.30, 0.10, 0.50), p_ac),
        Duel("rerank-2", "keyword", Interval(0.25, 0.05, 0.45), p_bc if p_bc != 0.3 else 0.004),
        Duel("rerank-2", "rerank-1", Interval(-0.05, -0.20, 0.10), p_ab),
    ]
    return contenders, duels


def test_it_names_the_best_systems_and_those_it_cannot_tell_apart_after_holm():
    verdict = _verdict(*_three())
    assert verdict.kind == BEST and verdict.best == ("rerank-1", "rerank-2")
    assert verdict.sentence == (
        "On held-out Hit@5 rerank-1 and rerank-2 are best and cannot be told apart after Holm's adjustment; "
        "keyword is worse, over 24 held-out queries in 12 query families: rerank-1 0.700; rerank-2 0.650; "
        "keyword 0.400; top difference rerank-1 − rerank-2 +0.050 [-0.100, +0.200], Holm p 0.200.")


def test_it_names_one_best_system_when_it_beats_every_other():
    verdict = _verdict(*_three(p_ab=0.01))
    assert verdict.kind == BEST and verdict.best == ("rerank-1",)
    assert verdict.sentence.startswith("On held-out Hit@5 rerank-1 is best, ahead of rerank-2 and keyword after "
                                       "Holm's adjustment")
    assert "Holm p 0.010" in verdict.sentence


def test_it_says_when_no_system_can_be_told_apart():
    verdict = _verdict(*_three(p_ac=0.2, p_bc=0.5, p_ab=0.9))
    assert verdict.kind == UNDECIDED
    assert verdict.sentence.startswith("On held-out Hit@5 these 3 systems cannot be told apart after Holm's "
                                       "adjustment over 24 held-out queries in 12 query families")


def test_it_draws_no_conclusion_when_a_system_is_incomplete():
    contenders, duels = _three()
    contenders[2] = Contender("rerank-2", 0.65, "incomplete: 3 of 24 queries reranked")
    verdict = _verdict(contenders, duels)
    assert verdict.kind == INCOMPLETE and verdict.best == ()
    assert verdict.sentence.startswith("Incomplete: rerank-2 is incomplete: 3 of 24 queries reranked, so this "
                                       "leaderboard names no best system")


def test_it_draws_no_conclusion_on_too_few_units_and_says_why():
    contenders = [Contender("keyword", 0.0), Contender("rerank-2", 0.667)]
    duels = [Duel("rerank-2", "keyword", Interval(0.667, NAN, NAN), NAN)]
    verdict = _verdict(contenders, duels, units=1)
    assert verdict.kind == TOO_FEW
    assert verdict.sentence.startswith("1 query family: too few for an interval or a p-value (at least 3 needed), "
                                       "so this leaderboard names no best system")
    assert "[" not in verdict.sentence and "p " not in verdict.sentence.replace("p-value", "")


def test_it_calls_every_system_at_one_saturated():
    contenders = [Contender("keyword", 1.0), Contender("rerank-1", 1.0)]
    duels = [Duel("rerank-1", "keyword", Interval(0.0, 0.0, 0.0), 1.0)]
    verdict = _verdict(contenders, duels)
    assert verdict.kind == SATURATED and "the suite is saturated" in verdict.sentence


def test_it_calls_every_system_at_zero_the_floor():
    contenders = [Contender("keyword", 0.0), Contender("rerank-1", 0.0)]
    duels = [Duel("rerank-1", "keyword", Interval(0.0, 0.0, 0.0), 1.0)]
    verdict = _verdict(contenders, duels)
    assert verdict.kind == FLOOR and "at its floor" in verdict.sentence


def test_it_calls_systems_that_score_the_same_everywhere_identical():
    contenders = [Contender("keyword", 0.5), Contender("rerank-1", 0.5), Contender("rerank-2", 0.5)]
    duels = [Duel(a, b, Interval(0.0, 0.0, 0.0), 1.0)
             for a, b in (("rerank-1", "keyword"), ("rerank-2", "keyword"), ("rerank-2", "rerank-1"))]
    verdict = _verdict(contenders, duels)
    assert verdict.kind == IDENTICAL and "(0.500 each)" in verdict.sentence


def test_it_marks_few_units_in_the_sentence():
    verdict = _verdict(*_three(), units=6)
    assert verdict.kind == BEST
    assert verdict.sentence.endswith("(few units (n=6 query families): percentile-bootstrap intervals under-cover "
                                     "with so few units).")


def test_it_has_nothing_to_compare_with_one_system_or_none():
    assert _verdict([Contender("keyword", 0.4)], []).kind == SINGLE
    assert _verdict([], []).kind == NO_SYSTEM
