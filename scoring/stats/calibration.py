"""Calibration of the model's P(useful) against human passage labels.

Population: labelled (query, passage) items of one split. A label is a
completed human passage grade 0-3; ``None`` means not judged and the item is
excluded (counted, never read as 0). Model probabilities are never labels.

- P(useful) = (P(grade 2) + P(grade 3)) / sum of the four probabilities.
- useful = label >= 2.
- Brier score: mean over included items of (P(useful) - useful)^2 (unit:
  squared probability, 0 best, 1 worst).
- Reliability table: five equal-width bins of P(useful) over [0, 1], each
  closed on the left and open on the right, except the last, [0.8, 1.0], which
  includes 1.0 (so "at or above the 0.8 diagnostic" is exactly the last bin).
  Per bin: count, mean predicted P(useful), observed rate of useful.
- ECE: sum over bins of (bin count / total) * |mean predicted - observed rate|.
- Confidence: the concentration of a grade distribution, measured as its
  largest probability (max_g P(g), in [0.25, 1] for four grades). It says how
  peaked the distribution is; it is NOT a probability of being correct.
  Confidence-vs-agreement bins it with the same five bins and reports how often
  the most probable grade (argmax; ties go to the lower grade) equals the human
  grade.

Intervals (``calibration_intervals``): percentile bootstrap of Brier and ECE
resampling units (query families on the statute benchmark), both statistics
on the same draws (``scoring.stats.bootstrap.unit_bootstrap``). Each unit
carries its squared-error sum and its per-bin count, P(useful) sum and useful
count; a replicate's ECE is sum over bins of |sum predicted - sum useful| /
total, which is the definition above written with sums. Units without a
labelled item take no part in the draw. Neither statistic is undefined on a
non-empty resample, so no replicate is ever left out.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Sequence
from dataclasses import dataclass

import numpy as np

from scoring.stats.bootstrap import DEFAULT_LEVEL, UnitBootstrap, unit_bootstrap, unit_codes

N_BINS = 5
# Interior bin edges written as decimals: np.linspace(0, 1, 6) gives 0.6000000000000001.
BIN_EDGES = (0.0, 0.2, 0.4, 0.6, 0.8, 1.0)
DIAGNOSTIC_THRESHOLD = 0.8
USEFUL_GRADE = 2


def p_useful(distribution: Sequence[float]) -> float:
    """P(useful) of one grade distribution over 0..3: (P(2) + P(3)) / sum, renormalised.

    The one definition in the project: the rerank job stores it and calibration reads it.
    """
    probs = np.asarray(distribution, dtype=float)
    if probs.shape != (4,) or np.any(probs < 0) or not np.all(np.isfinite(probs)):
        raise ValueError(f"a grade distribution is four non-negative probabilities, got {distribution!r}")
    total = probs.sum()
    if total <= 0:
        raise ValueError("a grade distribution must have positive total mass")
    return float((probs[2] + probs[3]) / total)


def distribution_confidence(distribution: Sequence[float]) -> float:
    """Confidence of one grade distribution: its largest probability after renormalising.

    A measure of concentration in [0.25, 1] for four grades, not P(correct).
    """
    probs = np.asarray(distribution, dtype=float)
    if probs.ndim != 1 or probs.size == 0 or np.any(probs < 0) or probs.sum() <= 0:
        raise ValueError(f"not a probability distribution: {distribution!r}")
    return float(probs.max() / probs.sum())


def bin_index(values: Sequence[float] | np.ndarray) -> np.ndarray:
    """Reliability bin (0..4) of each value in [0, 1]: [0,.2) [.2,.4) [.4,.6) [.6,.8) [.8,1]."""
    array = np.asarray(values, dtype=float)
    if np.any((array < 0) | (array > 1)) or not np.all(np.isfinite(array)):
        raise ValueError("probabilities must lie in [0, 1]")
    return np.searchsorted(np.array(BIN_EDGES[1:-1]), array, side="right")


def _included(p: Sequence[float], labels: Sequence[int | None]) -> tuple[np.ndarray, np.ndarray, int]:
    if len(p) != len(labels):
        raise ValueError(f"{len(p)} probabilities but {len(labels)} labels")
    keep = [i for i, label in enumerate(labels) if label is not None]
    for i in keep:
        if isinstance(labels[i], bool) or labels[i] not in (0, 1, 2, 3):
            raise ValueError(f"item {i}: label must be a grade 0-3 or None, got {labels[i]!r}")
    probs = np.array([p[i] for i in keep], dtype=float)
    grades = np.array([labels[i] for i in keep], dtype=int)
    return probs, grades, len(labels) - len(keep)


def brier_score(p_useful_values: Sequence[float], labels: Sequence[int | None]) -> float | None:
    """Brier score of P(useful) vs useful = label >= 2, over labelled items; None if none is labelled."""
    probs, grades, _ = _included(p_useful_values, labels)
    bin_index(probs)  # validates the range
    if probs.size == 0:
        return None
    useful = (grades >= USEFUL_GRADE).astype(float)
    return float(np.mean((probs - useful) ** 2))


@dataclass(frozen=True)
class ReliabilityBin:
    """One reliability bin: [low, high) (the last bin is [0.8, 1.0]); mean/observed are None when empty."""

    low: float
    high: float
    count: int
    mean_predicted: float | None
    observed_rate: float | None


def _bins(x: np.ndarray, outcome: np.ndarray) -> list[ReliabilityBin]:
    index = bin_index(x)
    counts = np.bincount(index, minlength=N_BINS)
    x_sums = np.bincount(index, weights=x, minlength=N_BINS)
    outcome_sums = np.bincount(index, weights=outcome, minlength=N_BINS)
    table = []
    for b in range(N_BINS):
        count = int(counts[b])
        table.append(
            ReliabilityBin(
                low=BIN_EDGES[b],
                high=BIN_EDGES[b + 1],
                count=count,
                mean_predicted=float(x_sums[b] / count) if count else None,
                observed_rate=float(outcome_sums[b] / count) if count else None,
            )
        )
    return table


def reliability_table(p_useful_values: Sequence[float], labels: Sequence[int | None]) -> list[ReliabilityBin]:
    """Five equal-width bins of P(useful): count, mean predicted P(useful), observed rate of label >= 2."""
    probs, grades, _ = _included(p_useful_values, labels)
    return _bins(probs, (grades >= USEFUL_GRADE).astype(float))


def expected_calibration_error(table: Sequence[ReliabilityBin]) -> float | None:
    """ECE: sum over bins of (count / total) * |mean predicted - observed rate|; None if the table is empty."""
    total = sum(b.count for b in table)
    if total == 0:
        return None
    return float(
        sum(
            b.count / total * abs(b.mean_predicted - b.observed_rate)
            for b in table
            if b.mean_predicted is not None and b.observed_rate is not None  # None exactly when the bin is empty
        )
    )


@dataclass(frozen=True)
class ThresholdDiagnostic:
    """How many labelled items reach the diagnostic P(useful) threshold, and how many of those are useful."""

    threshold: float
    at_or_above: int
    judged_useful: int

    @property
    def useful_rate(self) -> float | None:
        return self.judged_useful / self.at_or_above if self.at_or_above else None


def threshold_diagnostic(
    p_useful_values: Sequence[float],
    labels: Sequence[int | None],
    *,
    threshold: float = DIAGNOSTIC_THRESHOLD,
) -> ThresholdDiagnostic:
    """Counts at or above ``threshold`` (0.8 by default) among labelled items. A diagnostic, not a cutoff."""
    probs, grades, _ = _included(p_useful_values, labels)
    above = probs >= threshold
    return ThresholdDiagnostic(
        threshold=threshold,
        at_or_above=int(above.sum()),
        judged_useful=int((grades[above] >= USEFUL_GRADE).sum()),
    )


@dataclass(frozen=True)
class AgreementBin:
    """One confidence bin: count, mean confidence, share whose most probable grade equals the human grade."""

    low: float
    high: float
    count: int
    mean_confidence: float | None
    exact_agreement: float | None


def confidence_agreement_table(
    distributions: Sequence[Sequence[float]], labels: Sequence[int | None]
) -> list[AgreementBin]:
    """Confidence (max probability) vs exact-grade agreement (argmax grade == human grade), five bins."""
    if len(distributions) != len(labels):
        raise ValueError(f"{len(distributions)} distributions but {len(labels)} labels")
    keep = [i for i, label in enumerate(labels) if label is not None]
    confidence = np.array([distribution_confidence(distributions[i]) for i in keep], dtype=float)
    predicted = np.array([int(np.argmax(distributions[i])) for i in keep], dtype=int)
    grades = np.array([labels[i] for i in keep], dtype=int)
    return [
        AgreementBin(b.low, b.high, b.count, b.mean_predicted, b.observed_rate)
        for b in _bins(confidence, (predicted == grades).astype(float))
    ]


@dataclass(frozen=True)
class CalibrationSummary:
    """Brier, reliability table, ECE and the 0.8 diagnostic of one split, with included/excluded counts."""

    included: int
    excluded: int
    brier: float | None
    ece: float | None
    bins: list[ReliabilityBin]
    agreement_bins: list[AgreementBin]
    diagnostic: ThresholdDiagnostic


def calibration_summary(
    distributions: Sequence[Sequence[float]],
    labels: Sequence[int | None],
    *,
    threshold: float = DIAGNOSTIC_THRESHOLD,
) -> CalibrationSummary:
    """Every calibration figure of one split from grade distributions and human passage labels (None = unjudged)."""
    p = [p_useful(d) for d in distributions]
    probs, _, excluded = _included(p, labels)
    table = reliability_table(p, labels)
    return CalibrationSummary(
        included=int(probs.size),
        excluded=excluded,
        brier=brier_score(p, labels),
        ece=expected_calibration_error(table),
        bins=table,
        agreement_bins=confidence_agreement_table(distributions, labels),
        diagnostic=threshold_diagnostic(p, labels, threshold=threshold),
    )


@dataclass(frozen=True)
class CalibrationIntervals:
    """Brier and ECE of one split, each with its percentile interval over the same unit resamples."""

    brier: UnitBootstrap
    ece: UnitBootstrap


def _brier_of_sums(sums: np.ndarray) -> np.ndarray:
    brier: np.ndarray = sums[:, 0] / sums[:, 1]
    return brier


def _ece_of_sums(sums: np.ndarray) -> np.ndarray:
    # sums[:, 0] counts, [:, 1] P(useful) sums, [:, 2] useful counts, per bin.
    ece: np.ndarray = np.abs(sums[:, 1] - sums[:, 2]).sum(axis=1) / sums[:, 0].sum(axis=1)
    return ece


def calibration_intervals(
    p_useful_values: Sequence[float],
    labels: Sequence[int | None],
    units: Sequence[Hashable],
    *,
    unit: str,
    replicates: int,
    seed: int,
    level: float = DEFAULT_LEVEL,
) -> CalibrationIntervals:
    """Brier and ECE over labelled items with percentile intervals resampling ``units`` (one label per item).

    Population: items whose label is not None; ``units[i]`` is item i's unit
    (e.g. its query family). Both statistics come from the same index matrix.
    """
    if len(units) != len(labels):
        raise ValueError(f"{len(labels)} labels but {len(units)} unit labels")
    probs, grades, _ = _included(p_useful_values, labels)
    index = bin_index(probs)
    kept_units = [units[i] for i, label in enumerate(labels) if label is not None]
    code, n_units = unit_codes(kept_units)
    useful = (grades >= USEFUL_GRADE).astype(float)
    brier_tallies = np.zeros((n_units, 2))
    np.add.at(brier_tallies, code, np.stack([(probs - useful) ** 2, np.ones_like(probs)], axis=1))
    cell = code * N_BINS + index
    size = n_units * N_BINS
    ece_tallies = np.stack(
        [
            np.bincount(cell, minlength=size).astype(float),
            np.bincount(cell, weights=probs, minlength=size),
            np.bincount(cell, weights=useful, minlength=size),
        ],
        axis=1,
    ).reshape(n_units, N_BINS, 3).transpose(0, 2, 1)

    def bootstrap(tallies: np.ndarray, statistic: Callable[[np.ndarray], np.ndarray], name: str) -> UnitBootstrap:
        return unit_bootstrap(
            tallies, statistic, name=name, unit=unit, observation="labelled item", observations=int(probs.size),
            undefined_when="no labelled item", replicates=replicates, seed=seed, level=level,
        )

    return CalibrationIntervals(
        brier=bootstrap(brier_tallies, _brier_of_sums, "Brier score"),
        ece=bootstrap(ece_tallies, _ece_of_sums, "ECE"),
    )
