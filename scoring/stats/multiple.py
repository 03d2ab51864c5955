"""Many systems compared at once: paired-bootstrap p-values and Holm's step-down adjustment.

A leaderboard compares every pair of systems on the same bootstrap draws (the same resampled query
families or contracts for every pair), so the pairwise intervals are consistent with each other. Each
pair's two-sided p-value comes from the bootstrap distribution of its difference; Holm's rule then
controls the family-wise error over all pairs shown, and is named on the page next to the p-values.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

MULTIPLE_COMPARISON_METHOD = (
    "Holm step-down adjustment of two-sided paired-bootstrap p-values over every pair shown "
    "(family-wise error rate 5%)"
)


def bootstrap_p_value(replicate_differences: np.ndarray) -> float:
    """Two-sided p-value of "no difference" from a paired bootstrap distribution of differences.

    Twice the smaller tail share at zero, each tail counting replicates equal to zero (so a metric that
    often ties is treated conservatively) and adding one to numerator and denominator, so a finite number
    of replicates never claims p = 0. NaN replicates (undefined resamples) are left out; with none left,
    the p-value is NaN.
    """
    values = np.asarray(replicate_differences, dtype=float)
    values = values[~np.isnan(values)]
    if values.size == 0:
        return float("nan")
    below = (np.count_nonzero(values <= 0) + 1) / (values.size + 1)
    above = (np.count_nonzero(values >= 0) + 1) / (values.size + 1)
    return float(min(1.0, 2.0 * min(below, above)))


def holm_adjust(p_values: Sequence[float]) -> list[float]:
    """Holm's step-down adjusted p-values, in the input order (NaN stays NaN and takes no part).

    Sorted ascending, the i-th smallest of m becomes max over j <= i of min(1, (m - j) * p_(j)), which is
    what ``statsmodels.stats.multitest.multipletests(method="holm")`` returns.
    """
    p = np.asarray(p_values, dtype=float)
    adjusted = np.full(p.shape, np.nan)
    valid = np.flatnonzero(~np.isnan(p))
    m = valid.size
    order = valid[np.argsort(p[valid], kind="stable")]
    running = 0.0
    for rank, index in enumerate(order):
        running = max(running, min(1.0, (m - rank) * p[index]))
        adjusted[index] = running
    in_order: list[float] = adjusted.tolist()
    return in_order
