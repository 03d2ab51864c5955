"""CUAD clause-extraction grading: pair scores once, then outcomes and figures as array work.

Two stages, so that a threshold change never recomputes text similarity:

1. ``pair_scores.score_contract`` (slow part, once per run): for each
   extraction, its grounding in the contract and, for each matcher, the CUAD
   span it is assigned to within its (contract, category) cell and that pair's
   token F1.
2. ``classify`` / ``grade`` (fast part, every threshold change): a flat
   ``PairTable`` of those stored numbers -> Correct / Partial / Incorrect /
   Hallucinated per extraction, Missed per span, per-contract tallies, micro
   precision / recall / F1 and contract-bootstrap intervals, overall and per
   clause type.

Outcome rules: grounding below the grounding threshold ->
Hallucinated (no credit, whatever its F1); else matched F1 >= correct ->
Correct (credit 1); else matched F1 >= partial floor -> Partial (credit 0.5);
else Incorrect. Only an extraction that has a matched span can earn credit, so
credit never exceeds the spans it is set against. A CUAD span whose assigned
extraction earned no credit, or that has none, is Missed.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from typing import Any

import numpy as np
from numpy.typing import NDArray

from scoring.stats.bootstrap import Interval, percentile_bounds_rows, resample_indices, supported_interval
from scoring.stats.units import unit_support

UNIT = "contract"

DEFAULT_REPLICATES = 1000

CORRECT, PARTIAL, INCORRECT, HALLUCINATED = 0, 1, 2, 3
OUTCOME_NAMES = ("correct", "partial", "incorrect", "hallucinated")
COUNT_KEYS = ("correct", "partial", "incorrect", "hallucinated", "missed", "extractions", "spans")


@dataclass(frozen=True)
class Thresholds:
    correct: float = 0.70
    partial: float = 0.40
    grounding: float = 0.80

    def __post_init__(self) -> None:
        for name in ("correct", "partial", "grounding"):
            value = getattr(self, name)
            if not 0.0 <= value <= 1.0:
                raise ValueError(f"threshold {name} must lie in [0, 1], got {value}")
        if self.partial > self.correct:
            raise ValueError(f"partial floor {self.partial} is above the correct threshold {self.correct}")

    def as_dict(self) -> dict[str, float]:
        return {"correct": self.correct, "partial": self.partial, "grounding": self.grounding}


# ---------------------------------------------------------------------------
# Stage 2: outcomes and figures from stored pair scores


@dataclass(frozen=True)
class PairTable:
    """Stored pair scores for one matcher as flat arrays; spans are the gold of the graded contracts.

    ``ext_span`` indexes into the span arrays (-1 = unmatched); contracts and
    categories are dense indices ``0..n_contracts-1`` and ``0..n_categories-1``.
    """

    ext_contract: np.ndarray
    ext_category: np.ndarray
    ext_f1: np.ndarray
    ext_grounding: np.ndarray
    ext_span: np.ndarray
    span_contract: np.ndarray
    span_category: np.ndarray
    n_contracts: int
    n_categories: int

    def __post_init__(self) -> None:
        e = len(self.ext_contract)
        for name in ("ext_category", "ext_f1", "ext_grounding", "ext_span"):
            if len(getattr(self, name)) != e:
                raise ValueError(f"{name} has {len(getattr(self, name))} entries, expected {e}")
        if len(self.span_category) != len(self.span_contract):
            raise ValueError("span_category and span_contract differ in length")
        if self.n_contracts <= 0:
            raise ValueError("a grade needs at least one contract")
        matched = self.ext_span[self.ext_span >= 0]
        if len(np.unique(matched)) != len(matched):
            raise ValueError("a span is matched to more than one extraction; matching must be one-to-one")


@dataclass(frozen=True)
class Classified:
    outcome: np.ndarray  # (E,) int8, codes CORRECT..HALLUCINATED
    credit: np.ndarray  # (E,) float: 1, 0.5 or 0
    span_missed: np.ndarray  # (S,) bool


def classify(table: PairTable, thresholds: Thresholds) -> Classified:
    """Outcome of every extraction and Missed flag of every span at ``thresholds``."""
    matched = table.ext_span >= 0
    hallucinated = table.ext_grounding < thresholds.grounding
    correct = ~hallucinated & matched & (table.ext_f1 >= thresholds.correct)
    partial = ~hallucinated & matched & ~correct & (table.ext_f1 >= thresholds.partial)
    outcome = np.full(len(matched), INCORRECT, dtype=np.int8)
    outcome[partial] = PARTIAL
    outcome[correct] = CORRECT
    outcome[hallucinated] = HALLUCINATED
    credit = correct * 1.0 + partial * 0.5
    credited = np.zeros(len(table.span_contract), dtype=bool)
    credited[table.ext_span[credit > 0]] = True
    return Classified(outcome, credit, ~credited)


@dataclass(frozen=True)
class Figures:
    """Micro precision / recall / F1 with 95% contract-bootstrap intervals, and outcome counts.

    Estimates are NaN when undefined (no extractions for precision, no spans
    for recall, neither for F1).
    """

    precision: Interval
    recall: Interval
    f1: Interval
    counts: dict[str, int]
    credit: float

    def as_dict(self) -> dict[str, Any]:
        def num(x: float) -> float | None:
            return None if np.isnan(x) else float(x)

        return {
            "precision": num(self.precision.estimate),
            "recall": num(self.recall.estimate),
            "f1": num(self.f1.estimate),
            "ci": {
                name: [num(i.low), num(i.high)]
                for name, i in (("precision", self.precision), ("recall", self.recall), ("f1", self.f1))
            },
            "counts": dict(self.counts),
        }


@dataclass(frozen=True)
class Grade:
    overall: Figures
    per_category: tuple[Figures, ...]  # indexed by category index
    classified: Classified
    thresholds: Thresholds
    replicates: int
    seed: int


def micro_ratios(sums: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Precision, recall, F1 from ``[..., (credit, extractions, spans)]`` sums; NaN where undefined.

    F1 = 2·credit/(extractions+spans), which equals 2PR/(P+R) whenever both are
    defined and is 0 (not undefined) when there is no credit.
    """
    credit, ext, spans = sums[..., 0], sums[..., 1], sums[..., 2]
    with np.errstate(invalid="ignore", divide="ignore"):
        precision = np.where(ext > 0, credit / ext, np.nan)
        recall = np.where(spans > 0, credit / spans, np.nan)
        f1 = np.where(ext + spans > 0, 2.0 * credit / (ext + spans), np.nan)
    return precision, recall, f1


@lru_cache(maxsize=16)
def bootstrap_draws(n_contracts: int, replicates: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """The seeded contract resample and its count form (replicates x contracts: times each contract drawn).

    ``counts @ values`` equals ``cluster_sums(values, indices)``; the product
    is used for the per-category tallies, where ``cluster_sums`` would build a
    replicates x contracts x (categories·3) array. Cached: a threshold change
    reuses the same draws, which also keeps intervals paired across settings.
    """
    indices = resample_indices(n_contracts, replicates=replicates, seed=seed)
    counts = np.zeros((replicates, n_contracts), dtype=float)
    np.add.at(counts, (np.repeat(np.arange(replicates), n_contracts), indices.ravel()), 1.0)
    indices.setflags(write=False)
    counts.setflags(write=False)
    return indices, counts


def contract_tallies(table: PairTable, classified: Classified) -> np.ndarray:
    """Per (contract, category) tallies, shape (n_contracts, n_categories, 3): credit, extractions, spans."""
    nc, nk = table.n_contracts, table.n_categories
    ext_cell = table.ext_contract * nk + table.ext_category
    span_cell = table.span_contract * nk + table.span_category
    size = nc * nk
    tallies = np.stack(
        [
            np.bincount(ext_cell, weights=classified.credit, minlength=size),
            np.bincount(ext_cell, minlength=size).astype(float),
            np.bincount(span_cell, minlength=size).astype(float),
        ],
        axis=-1,
    )
    return tallies.reshape(nc, nk, 3)


def tally_columns(table: PairTable, classified: Classified) -> np.ndarray:
    """``contract_tallies`` with the overall column appended: shape (n_contracts, n_categories + 1, 3)."""
    tallies = contract_tallies(table, classified)
    return np.concatenate([tallies, tallies.sum(axis=1, keepdims=True)], axis=1)


def tally_rows(flat: np.ndarray) -> np.ndarray:
    """``tally_columns`` as rows (3 tallies x columns, contracts): credit rows, then extraction rows, then span rows."""
    return np.ascontiguousarray(flat.transpose(2, 1, 0)).reshape(-1, flat.shape[0])


@lru_cache(maxsize=16)
def _draw_counts_single(n_contracts: int, replicates: int, seed: int) -> np.ndarray:
    counts = bootstrap_draws(n_contracts, replicates, seed)[1].astype(np.float32)
    counts.setflags(write=False)
    return counts


# float32 holds every multiple of 0.5 up to 2**23 exactly
_SINGLE_EXACT = 2.0**23


def draw_sums(rows: np.ndarray, replicates: int, seed: int) -> np.ndarray:
    """Per-contract ``rows`` (k, contracts) summed over each seeded resample: (k, replicates), float64.

    Exact, so the same numbers as ``cluster_sums`` on the drawn indices: the
    values are tallies (integers or halves) and each resample draws as many
    contracts as there are, so no partial sum exceeds contracts x the largest
    value. When the values are halves and that bound fits float32's exact
    range the product runs in single precision (every product and partial sum
    is still exact, and it halves the bytes moved); otherwise in float64.
    """
    n = rows.shape[1]
    largest = float(np.abs(rows).max()) if rows.size else 0.0
    halves = rows * 2.0
    if n * largest <= _SINGLE_EXACT and np.array_equal(halves, np.round(halves)):
        counts = _draw_counts_single(n, replicates, seed)
        single: NDArray[np.float32] = rows.astype(np.float32) @ counts.T
        return single.astype(np.float64)
    sums: NDArray[np.float64] = rows @ bootstrap_draws(n, replicates, seed)[1].T
    return sums


def ratio_rows(sums: np.ndarray, out: np.ndarray) -> None:
    """``micro_ratios`` on rows: ``sums`` (..., 3 tallies, columns, replicates) -> ``out`` (..., 3 metrics, ...).

    The same divisions as ``micro_ratios`` (so the same floats), written into
    a caller's buffer with replicates contiguous, ready to sort for intervals.
    """
    credit, ext, spans = sums[..., 0, :, :], sums[..., 1, :, :], sums[..., 2, :, :]
    out.fill(np.nan)
    np.divide(credit, ext, out=out[..., 0, :, :], where=ext > 0)
    np.divide(credit, spans, out=out[..., 1, :, :], where=spans > 0)
    both = ext + spans
    np.divide(2.0 * credit, both, out=out[..., 2, :, :], where=both > 0)


def grade(
    table: PairTable,
    thresholds: Thresholds,
    *,
    replicates: int = DEFAULT_REPLICATES,
    seed: int = 0,
) -> Grade:
    """Outcomes, micro figures and 95% percentile intervals resampling contracts (B = ``replicates``, seeded).

    The population is the table's contracts: each replicate draws as many
    contracts as there are, with replacement, and recomputes the micro ratios
    from the drawn contracts' summed tallies.

    Computed as array work over all clause types and the overall column at
    once: replicate sums as one exact product of the tallies with the draw
    counts (``draw_sums``), the ratios of every column and resample as rows,
    and every interval from one row sort (``percentile_bounds_rows``, the same
    numbers as ``percentile_bounds`` per column).
    """
    classified = classify(table, thresholds)
    flat = tally_columns(table, classified)  # (contracts, categories + 1, 3); column nk is overall
    columns = table.n_categories + 1
    sums = draw_sums(tally_rows(flat), replicates, seed).reshape(3, columns, replicates)
    rows = np.empty((3, columns, replicates))
    ratio_rows(sums, rows)
    low, high = percentile_bounds_rows(rows.reshape(3 * columns, replicates), overwrite=True)
    return grade_figures(
        table, classified, flat, low.reshape(3, columns), high.reshape(3, columns),
        thresholds=thresholds, replicates=replicates, seed=seed,
    )


def grade_figures(
    table: PairTable,
    classified: Classified,
    flat: np.ndarray,
    low: np.ndarray,
    high: np.ndarray,
    *,
    thresholds: Thresholds,
    replicates: int,
    seed: int,
) -> Grade:
    """The ``Grade`` of a classified table from its ``tally_columns`` and interval bounds (3 metrics x columns).

    Shared by ``grade`` and by boards that compute the bounds of many runs in
    one batch, so both build the same figures from the same numbers.
    """
    nk = table.n_categories
    totals = flat.sum(axis=0)  # (nk+1, 3)
    point = np.array(micro_ratios(totals)).tolist()  # (3, nk+1) as Python floats
    low_list, high_list, credit = low.tolist(), high.tolist(), totals[:, 0].tolist()
    outcome = classified.outcome
    missed = classified.span_missed
    outcome_counts = np.bincount(
        table.ext_category * 4 + outcome, minlength=nk * 4
    ).reshape(nk, 4).tolist()
    outcome_counts.append([sum(column) for column in zip(*outcome_counts, strict=True)] if nk else [0, 0, 0, 0])
    missed_by = np.bincount(table.span_category[missed], minlength=nk).tolist()
    missed_by.append(int(missed.sum()))
    ext_by = np.bincount(table.ext_category, minlength=nk).tolist()
    ext_by.append(len(outcome))
    spans_by = np.bincount(table.span_category, minlength=nk).tolist()
    spans_by.append(len(missed))

    # Below the minimum number of contracts no interval is shown (scoring.stats.units), whatever the draws gave.
    support = unit_support(table.n_contracts, unit=UNIT)

    def figures(col: int) -> Figures:
        counts = dict(zip(COUNT_KEYS, (*outcome_counts[col], missed_by[col], ext_by[col], spans_by[col]), strict=True))
        precision, recall, f1 = (supported_interval(Interval(point[m][col], low_list[m][col], high_list[m][col]),
                                                    support) for m in range(3))
        return Figures(precision, recall, f1, counts=counts, credit=credit[col])

    return Grade(figures(nk), tuple(figures(k) for k in range(nk)), classified, thresholds, replicates, seed)
