"""What to conclude from a report, in one plain sentence generated from its figures and intervals. Pure.

The sentence is about the primary endpoint only (held-out Hit@5, reranked vs keyword order on the same
candidates, paired family bootstrap). It says which order is better when the interval of the paired
difference excludes zero; that the suite cannot tell them apart when it includes zero, or when both
orders score the same on every query (e.g. both saturated at 1.000); or that the run is incomplete or
failed, in which case it draws no conclusion; or that the split has too few query families
for an interval (``scoring.stats.units``), in which case it draws none either. ``comparison`` is the
figure behind it, with its interval.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, TypeGuard

from benchmarks.reports.reading.coverage import RunCoverage
from scoring.stats.bootstrap import Interval
from scoring.stats.units import unit_support

BETTER = "reranked better"
WORSE = "keyword better"
UNDECIDED = "cannot tell apart"
SATURATED = "saturated"
FLOOR = "floor"
IDENTICAL = "identical"
INCOMPLETE = "incomplete"
FAILED = "failed"
KEYWORD_ONLY = "keyword only"
NO_ENDPOINT = "no primary endpoint"
TOO_FEW = "too few units"


@dataclass(frozen=True)
class Conclusion:
    kind: str
    sentence: str
    comparison: str  # the primary figures with their intervals ('' when there are none)

    def as_json(self) -> dict[str, Any]:
        return {"kind": self.kind, "sentence": self.sentence, "comparison": self.comparison}


def _defined(interval: Interval | None) -> TypeGuard[Interval]:
    return interval is not None and not any(math.isnan(x) for x in (interval.estimate, interval.low, interval.high))


def _estimated(interval: Interval | None) -> TypeGuard[Interval]:
    return interval is not None and not math.isnan(interval.estimate)


def _ci(interval: Interval, *, signed: bool = False) -> str:
    if not interval.has_bounds:
        return interval.note or "no interval"
    fmt = "{:+.3f}" if signed else "{:.3f}"
    text = f"{round(interval.level * 100):d}% CI {fmt.format(interval.low)} to {fmt.format(interval.high)}"
    return f"{text}, {interval.note}" if interval.note else text


def _comparison(endpoint: str, keyword: Interval, reranked: Interval, difference: Interval) -> str:
    return (f"{endpoint}: reranked {reranked.estimate:.3f} ({_ci(reranked)}) vs keyword {keyword.estimate:.3f} "
            f"({_ci(keyword)}); difference (reranked − keyword) {difference.estimate:+.3f} "
            f"({_ci(difference, signed=True)})")


def conclusion_sentence(
    *, keyword: Interval | None, reranked: Interval | None, difference: Interval | None,
    queries: int, families: int, coverage: RunCoverage | None, has_rerank: bool,
    endpoint: str = "held-out Hit@5",
) -> Conclusion:
    """One quotable sentence from the primary endpoint's figures (see the module docstring).

    ``queries`` and ``families`` are the population of the endpoint (the held-out ranking queries).
    """
    population = f"{queries} {endpoint.split()[0]} quer{'y' if queries == 1 else 'ies'} in {families} " \
                 f"famil{'y' if families == 1 else 'ies'}"
    if has_rerank and coverage is not None and coverage.withheld:
        run = f"Rerank run #{coverage.run}" if coverage.run is not None else "The rerank run"
        # What happened, not the operator's next command (the run page and banner carry that).
        cause = coverage.error.split(" To finish: ")[0].rstrip(".") if coverage.error else ""
        why = f" ({cause})" if cause else ""
        return Conclusion(FAILED, f"{run} {'failed' if coverage.status == 'failed' else 'graded no candidate'}"
                                  f"{why}, so this report draws no conclusion about the model: "
                                  f"{coverage.ranking_reranked} of {coverage.ranking_total} queries reranked.", "")
    # (keyword, reranked, difference) when the two orders can be compared at all.
    paired = ((keyword, reranked, difference)
              if has_rerank and _estimated(keyword) and _estimated(reranked) and _estimated(difference) and queries > 0
              else None)
    if has_rerank and coverage is not None and not coverage.complete:
        return Conclusion(
            INCOMPLETE,
            f"Incomplete: {coverage.ranking_reranked} of {coverage.ranking_total} queries reranked (rerank run "
            f"{'#' + str(coverage.run) + ' ' if coverage.run is not None else ''}is {coverage.status}), so this "
            "report does not say which order is better; the figures cover only the candidates that were graded.",
            _comparison(endpoint, *paired) if paired else "")
    support = unit_support(families, unit="query family")
    if queries > 0 and _estimated(keyword) and not support.has_interval:
        figures = (f"reranked {paired[1].estimate:.3f} vs keyword {keyword.estimate:.3f}" if paired
                   else f"keyword {keyword.estimate:.3f}")
        return Conclusion(
            TOO_FEW,
            f"{support.sentence[0].upper()}{support.sentence[1:]}, so this report draws no conclusion on {endpoint} "
            f"({figures} over {population}): add families to the split for an interval.",
            _comparison(endpoint, *paired) if paired
            else f"{endpoint}: keyword {keyword.estimate:.3f} ({_ci(keyword)})")
    if not _defined(keyword) or queries == 0:
        return Conclusion(NO_ENDPOINT, f"This suite has no {endpoint.split()[0]} ranking queries, so there is no "
                                       f"primary endpoint ({endpoint}) to conclude on.", "")
    if not has_rerank or not _defined(reranked) or not _defined(difference):
        return Conclusion(
            KEYWORD_ONLY,
            f"Keyword order only: {endpoint} is {keyword.estimate:.3f} ({_ci(keyword)}) over {population}; "
            "there is no reranked order to compare it with.",
            f"{endpoint}: keyword {keyword.estimate:.3f} ({_ci(keyword)})")
    comparison = _comparison(endpoint, keyword, reranked, difference)
    if difference.low == difference.high == 0.0 and keyword.estimate == reranked.estimate:
        if keyword.estimate in (0.0, 1.0):
            ceiling = keyword.estimate == 1.0
            return Conclusion(
                SATURATED if ceiling else FLOOR,
                f"This suite cannot tell the two orders apart on {endpoint}: both score {keyword.estimate:.3f} "
                f"on every one of {population} "
                f"({'the suite is saturated' if ceiling else 'neither finds a target: the suite is at its floor'}),"
                f" so the difference is {difference.estimate:+.3f} ({_ci(difference, signed=True)}).",
                comparison)
        return Conclusion(
            IDENTICAL,
            f"This suite cannot tell the two orders apart on {endpoint}: they score the same on every one of "
            f"{population} ({keyword.estimate:.3f} each), so the difference is {difference.estimate:+.3f} "
            f"({_ci(difference, signed=True)}).",
            comparison)
    if difference.low > 0 or difference.high < 0:
        better, worse = ("reranked", "keyword") if difference.low > 0 else ("keyword", "reranked")
        high, low = (reranked, keyword) if difference.low > 0 else (keyword, reranked)
        return Conclusion(
            BETTER if difference.low > 0 else WORSE,
            f"On {endpoint} the {better} order is better than the {worse} order: {high.estimate:.3f} vs "
            f"{low.estimate:.3f}, a difference of {difference.estimate:+.3f} whose {_ci(difference, signed=True)} "
            f"excludes zero, over {population}.",
            comparison)
    return Conclusion(
        UNDECIDED,
        f"On {endpoint} this suite cannot tell the two orders apart: reranked {reranked.estimate:.3f} vs keyword "
        f"{keyword.estimate:.3f}, a difference of {difference.estimate:+.3f} whose {_ci(difference, signed=True)} "
        f"includes zero, over {population}.",
        comparison)
