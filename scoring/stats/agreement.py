"""Agreement between human raters: Cohen's kappa, raw agreement, Krippendorff's alpha.

Population: the items both raters (kappa) or at least two raters (alpha) have
graded. ``None`` (or NaN) means "not graded" and the item is left out and
counted, never read as a category.

- Raw agreement: share of items on which the two grades are equal.
- Cohen's kappa: (p_o - p_e) / (1 - p_e), written in its weighted form
  1 - sum(w * observed) / sum(w * expected), with w = 1 - [i == j]
  (unweighted) or w = (i - j)^2 (quadratic, for ordinal grades), where i, j are
  positions in the declared category list. The category list matters for the
  quadratic weights: grades 0-3 are always positioned 0..3 even when a grade is
  absent from the data (scikit-learn, given no ``labels``, would renumber the
  observed grades). Undefined (None) when the expected disagreement is 0.
- Landis-Koch bands, as in ARCHITECTURE.md: < 0 poor, 0-0.20 slight,
  0.21-0.40 fair, 0.41-0.60 moderate, 0.61-0.80 substantial, 0.81-1 almost
  perfect. The printed bands are two-decimal, so each band's upper bound is
  inclusive and a value between them (e.g. 0.205) belongs to the next band.
- Krippendorff's alpha (ordinal): 1 - D_o / D_e from the coincidence matrix of
  pairable values (units with at least two grades), with the ordinal distance
  delta(c, k)^2 = (sum of n_g for g from c to k - (n_c + n_k) / 2)^2. Any
  number of raters, missing grades allowed. Undefined (None) when D_e = 0.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

import numpy as np

GRADES = (0, 1, 2, 3)

LANDIS_KOCH_BANDS = (
    (0.20, "slight"),
    (0.40, "fair"),
    (0.60, "moderate"),
    (0.80, "substantial"),
    (1.00, "almost perfect"),
)


def _missing(value: object) -> bool:
    return value is None or (isinstance(value, float) and math.isnan(value))


def _paired(
    a: Sequence[object], b: Sequence[object], categories: Sequence[object]
) -> tuple[np.ndarray, np.ndarray, int]:
    if len(a) != len(b):
        raise ValueError(f"rater a graded {len(a)} items but rater b {len(b)}")
    position = {category: i for i, category in enumerate(categories)}
    index_a: list[int] = []
    index_b: list[int] = []
    excluded = 0
    for item, (x, y) in enumerate(zip(a, b, strict=True)):
        if _missing(x) or _missing(y):
            excluded += 1
            continue
        for rater, value in (("a", x), ("b", y)):
            if value not in position:
                raise ValueError(f"item {item}: rater {rater}'s grade {value!r} is not one of {list(categories)}")
        index_a.append(position[x])
        index_b.append(position[y])
    return np.array(index_a, dtype=int), np.array(index_b, dtype=int), excluded


def confusion_table(a: Sequence[object], b: Sequence[object], *, categories: Sequence[object] = GRADES) -> np.ndarray:
    """Counts of (rater a's grade, rater b's grade) over items both graded; rows a, columns b."""
    index_a, index_b, _ = _paired(a, b, categories)
    k = len(categories)
    return np.bincount(index_a * k + index_b, minlength=k * k).reshape(k, k)


def raw_agreement(a: Sequence[object], b: Sequence[object], *, categories: Sequence[object] = GRADES) -> float | None:
    """Share of items both graded on which the two grades are equal; None if no item was graded by both."""
    index_a, index_b, _ = _paired(a, b, categories)
    if index_a.size == 0:
        return None
    return float(np.mean(index_a == index_b))


def _kappa_from_table(table: np.ndarray, weights: Literal["quadratic"] | None) -> float | None:
    n = table.sum()
    if n == 0:
        return None
    k = table.shape[0]
    i, j = np.indices((k, k))
    if weights is None:
        w = (i != j).astype(float)
    elif weights == "quadratic":
        w = ((i - j) ** 2).astype(float)
    else:
        raise ValueError(f"weights must be None or 'quadratic', got {weights!r}")
    expected = np.outer(table.sum(axis=1), table.sum(axis=0)) / n
    expected_disagreement = float((w * expected).sum())
    if expected_disagreement == 0.0:
        return None
    return 1.0 - float((w * table).sum()) / expected_disagreement


def cohen_kappa(
    a: Sequence[object],
    b: Sequence[object],
    *,
    weights: Literal["quadratic"] | None = None,
    categories: Sequence[object] = GRADES,
) -> float | None:
    """Cohen's kappa of two raters over items both graded (unweighted, or quadratic-weighted).

    Unit: dimensionless, 1 = perfect agreement, 0 = chance. None when
    undefined (no shared item, or both raters used one and the same category).
    """
    return _kappa_from_table(confusion_table(a, b, categories=categories), weights)


def landis_koch_band(kappa: float | None) -> str | None:
    """Landis-Koch label of a kappa (see the module docstring); None for an undefined kappa."""
    if kappa is None or math.isnan(kappa):
        return None
    # Round away float noise so that a kappa of exactly 0.2 computed as 0.20000000000000004 stays "slight".
    value = round(kappa, 10)
    if value < 0:
        return "poor"
    for upper, band in LANDIS_KOCH_BANDS:
        if value <= upper:
            return band
    return "almost perfect"


@dataclass(frozen=True)
class PairAgreement:
    """Agreement of two raters over the items both graded."""

    n: int
    excluded: int
    raw_agreement: float | None
    kappa: float | None
    kappa_quadratic: float | None
    band: str | None
    band_quadratic: str | None
    table: np.ndarray


def pair_agreement(a: Sequence[object], b: Sequence[object], *, categories: Sequence[object] = GRADES) -> PairAgreement:
    """Raw agreement, unweighted and quadratic kappa with Landis-Koch bands, and the confusion table."""
    _, _, excluded = _paired(a, b, categories)
    table = confusion_table(a, b, categories=categories)
    kappa = _kappa_from_table(table, None)
    kappa_q = _kappa_from_table(table, "quadratic")
    n = int(table.sum())
    return PairAgreement(
        n=n,
        excluded=excluded,
        raw_agreement=float(np.trace(table) / n) if n else None,
        kappa=kappa,
        kappa_quadratic=kappa_q,
        band=landis_koch_band(kappa),
        band_quadratic=landis_koch_band(kappa_q),
        table=table,
    )


def krippendorff_alpha_ordinal(reliability_data: Sequence[Sequence[object]]) -> float | None:
    """Krippendorff's alpha, ordinal metric, for any number of raters with missing grades.

    ``reliability_data`` is raters x units (one row per rater); None/NaN = not
    graded. Values must be orderable (grades 0-3). Units with fewer than two
    grades are not pairable and drop out. None when undefined (fewer than two
    pairable values, or no variation at all).
    """
    rows = [list(row) for row in reliability_data]
    if not rows:
        return None
    n_units = len(rows[0])
    if any(len(row) != n_units for row in rows):
        raise ValueError("every rater row must have one entry per unit")
    observed = sorted({v for row in rows for v in row if not _missing(v)})
    position = {v: i for i, v in enumerate(observed)}
    k = len(observed)
    if k == 0:
        return None
    # counts[u, c]: how many raters gave unit u the value c.
    counts = np.zeros((n_units, k))
    for row in rows:
        for unit, value in enumerate(row):
            if not _missing(value):
                counts[unit, position[value]] += 1
    m = counts.sum(axis=1)
    pairable = m >= 2
    counts, m = counts[pairable], m[pairable]
    if counts.size == 0:
        return None
    coincidence = np.einsum("uc,uk->ck", counts / (m - 1)[:, None], counts)
    coincidence -= np.diag((counts / (m - 1)[:, None]).sum(axis=0))
    n_c = coincidence.sum(axis=1)
    n = n_c.sum()
    cumulative = np.concatenate([[0.0], np.cumsum(n_c)])
    lo = np.minimum.outer(np.arange(k), np.arange(k))
    hi = np.maximum.outer(np.arange(k), np.arange(k))
    between = cumulative[hi + 1] - cumulative[lo]
    delta = (between - (n_c[:, None] + n_c[None, :]) / 2.0) ** 2
    disagreement_observed = float((coincidence * delta).sum())
    disagreement_expected = float((np.outer(n_c, n_c) * delta).sum()) / (n - 1)
    if disagreement_expected == 0.0:
        return None
    return 1.0 - disagreement_observed / disagreement_expected
