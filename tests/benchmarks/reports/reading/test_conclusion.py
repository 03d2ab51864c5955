"""The one sentence a report opens with, from constructed figures: saturated, significant, not significant, etc."""

from __future__ import annotations

import pytest

from benchmarks.reports.reading import conclusion as c
from benchmarks.reports.reading.conclusion import conclusion_sentence
from benchmarks.reports.reading.coverage import RunCoverage, UncoveredQuery
from scoring.stats.bootstrap import Interval


def iv(estimate: float, low: float, high: float) -> Interval:
    return Interval(estimate, low, high, 0.95)


def coverage(*, status: str = "done", reranked: int = 24, graded: int = 720, uncovered=()) -> RunCoverage:
    return RunCoverage(run=9, status=status, error="", ranking_total=24, ranking_reranked=reranked,
                       controls_total=4, controls_reranked=4, candidates_total=720, candidates_graded=graded,
                       uncovered=tuple(uncovered), counts={})


def sentence(keyword, reranked, difference, cov=None, *, has_rerank=True):
    return conclusion_sentence(keyword=keyword, reranked=reranked, difference=difference, queries=24, families=8,
                               coverage=cov if cov is not None else (coverage() if has_rerank else None),
                               has_rerank=has_rerank)


def test_both_orders_saturated_at_one_cannot_be_told_apart():
    out = sentence(iv(1.0, 1.0, 1.0), iv(1.0, 1.0, 1.0), iv(0.0, 0.0, 0.0))
    assert out.kind == c.SATURATED
    assert out.sentence == (
        "This suite cannot tell the two orders apart on held-out Hit@5: both score 1.000 on every one of "
        "24 held-out queries in 8 families (the suite is saturated), so the difference is +0.000 "
        "(95% CI +0.000 to +0.000).")
    assert "difference (reranked − keyword) +0.000 (95% CI +0.000 to +0.000)" in out.comparison


def test_an_interval_above_zero_says_the_reranked_order_is_better():
    out = sentence(iv(0.6, 0.45, 0.75), iv(0.8, 0.65, 0.9), iv(0.2, 0.05, 0.35))
    assert out.kind == c.BETTER
    assert out.sentence == (
        "On held-out Hit@5 the reranked order is better than the keyword order: 0.800 vs 0.600, a difference "
        "of +0.200 whose 95% CI +0.050 to +0.350 excludes zero, over 24 held-out queries in 8 families.")
    assert out.comparison == ("held-out Hit@5: reranked 0.800 (95% CI 0.650 to 0.900) vs keyword 0.600 "
                              "(95% CI 0.450 to 0.750); difference (reranked − keyword) +0.200 "
                              "(95% CI +0.050 to +0.350)")


def test_an_interval_below_zero_says_the_keyword_order_is_better():
    out = sentence(iv(0.7, 0.5, 0.85), iv(0.5, 0.3, 0.7), iv(-0.2, -0.35, -0.05))
    assert out.kind == c.WORSE
    assert out.sentence.startswith("On held-out Hit@5 the keyword order is better than the reranked order: "
                                   "0.700 vs 0.500, a difference of -0.200 whose 95% CI -0.350 to -0.050 excludes")


@pytest.mark.parametrize("difference", [iv(0.05, -0.05, 0.15), iv(0.04, 0.0, 0.1), iv(-0.04, -0.1, 0.0)])
def test_an_interval_that_includes_zero_cannot_tell_them_apart(difference):
    out = sentence(iv(0.65, 0.5, 0.8), iv(0.65 + difference.estimate, 0.5, 0.85), difference)
    assert out.kind == c.UNDECIDED
    assert out.sentence.startswith("On held-out Hit@5 this suite cannot tell the two orders apart: ")
    assert "includes zero, over 24 held-out queries in 8 families." in out.sentence
    assert "better" not in out.sentence


def test_both_orders_at_zero_are_at_the_floor_not_saturated():
    out = sentence(iv(0.0, 0.0, 0.0), iv(0.0, 0.0, 0.0), iv(0.0, 0.0, 0.0))
    assert out.kind == c.FLOOR and "saturated" not in out.sentence and "at its floor" in out.sentence


def test_identical_orders_below_the_ceiling_are_not_called_saturated():
    out = sentence(iv(0.5, 0.3, 0.7), iv(0.5, 0.3, 0.7), iv(0.0, 0.0, 0.0))
    assert out.kind == c.IDENTICAL and "saturated" not in out.sentence and "(0.500 each)" in out.sentence


def test_an_incomplete_run_concludes_nothing_even_with_a_clear_interval():
    partial = coverage(status="stopped", reranked=20, graded=600,
                       uncovered=[UncoveredQuery("q3", "ranking", "heldout", "partial", "8 never sent")])
    out = sentence(iv(0.6, 0.45, 0.75), iv(0.8, 0.65, 0.9), iv(0.2, 0.05, 0.35), partial)
    assert out.kind == c.INCOMPLETE
    assert out.sentence.startswith("Incomplete: 20 of 24 queries reranked (rerank run #9 is stopped), so this "
                                   "report does not say which order is better")
    assert "+0.200" in out.comparison  # the figures stay next to it, labelled by the sentence


def test_a_failed_run_has_no_comparison():
    failed = coverage(status="failed", reranked=0, graded=0)
    out = sentence(None, None, None, failed)
    assert out.kind == c.FAILED and out.comparison == ""
    assert out.sentence.startswith("Rerank run #9 failed") and "0 of 24 queries reranked" in out.sentence


def test_a_done_run_that_graded_nothing_is_treated_as_failed():
    out = sentence(None, None, None, coverage(status="done", reranked=0, graded=0))
    assert out.kind == c.FAILED and "graded no candidate" in out.sentence


def test_a_keyword_only_report_says_there_is_nothing_to_compare():
    out = sentence(iv(0.62, 0.5, 0.75), None, None, has_rerank=False)
    assert out.kind == c.KEYWORD_ONLY
    assert out.sentence == ("Keyword order only: held-out Hit@5 is 0.620 (95% CI 0.500 to 0.750) over 24 held-out "
                            "queries in 8 families; there is no reranked order to compare it with.")


def test_no_held_out_queries_means_no_primary_endpoint():
    nan = float("nan")
    out = conclusion_sentence(keyword=iv(nan, nan, nan), reranked=None, difference=None, queries=0, families=0,
                              coverage=coverage(), has_rerank=True)
    assert out.kind == c.NO_ENDPOINT and "no held-out ranking queries" in out.sentence
