"""A proportion with its confidence interval (e.g. a reviewer's accuracy on known-answer items).

Pure: counts in, numbers out. The interval is Wilson's score interval, computed by scipy, which stays inside
[0, 1] and keeps a sensible width for the small counts a reviewer check works with (10-50 items).
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Proportion:
    successes: int
    n: int
    estimate: float | None  # successes / n; None when n == 0
    low: float | None
    high: float | None
    confidence: float
    method: str


def proportion_interval(successes: int, n: int, *, confidence: float = 0.95) -> Proportion:
    """``successes`` of ``n`` trials, with the Wilson score interval at ``confidence`` (two-sided)."""
    if n < 0 or successes < 0 or successes > n:
        raise ValueError(f"need 0 <= successes <= n, got successes={successes}, n={n}")
    if not 0 < confidence < 1:
        raise ValueError(f"confidence must lie strictly between 0 and 1, got {confidence}")
    if n == 0:
        return Proportion(successes=0, n=0, estimate=None, low=None, high=None, confidence=confidence,
                          method="wilson")
    # local import: scipy.stats costs over 1 s to import: loaded by the handler, not the URL config
    from scipy.stats import binomtest

    interval = binomtest(successes, n).proportion_ci(confidence_level=confidence, method="wilson")
    return Proportion(successes=successes, n=n, estimate=successes / n, low=float(interval.low),
                      high=float(interval.high), confidence=confidence, method="wilson")
