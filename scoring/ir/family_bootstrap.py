"""Percentile bootstrap over query families, for one system or two systems paired.

Statistic: the mean of a per-query metric (Hit@k, RR, judged P@5, pooled
nDCG@5, ...) over the included queries of a suite split. Population of the
resampling: query families (topic families), because queries of one family are
correlated. Each replicate draws as many families as there are, with
replacement, takes all included queries of every drawn family, and computes
the query-weighted mean (sum of values / number of queries on that draw). The
interval is the percentile interval (2.5th and 97.5th by default) over the
replicates; 10,000 replicates and seed 20260920 by default.

Excluded values: a per-query value of ``None`` (or NaN) means "not defined for
this query" (e.g. P@5 with an unjudged result). Such a query is left out of the
mean and counted as excluded. A family with no included query is left out of
the resampling as well, so adding an excluded query never moves the estimate
nor the interval; it only changes the excluded count.

Paired: both systems are evaluated on the same index matrix and the same
queries, so on every draw the difference (a - b) is taken between the two
means of that draw. The paired population is the queries defined for both
systems; ``difference.estimate`` equals ``a.estimate - b.estimate`` exactly.

Families are numbered in sorted order of ``str(family)``, so the draw does not
depend on the order in which queries are listed.
"""

from __future__ import annotations

import math
from collections.abc import Hashable, Sequence
from dataclasses import dataclass

import numpy as np

from scoring.stats.bootstrap import DEFAULT_LEVEL, Interval, cluster_sums, percentile_bounds, resample_indices

DEFAULT_REPLICATES = 10_000
DEFAULT_SEED = 20260920


@dataclass(frozen=True)
class FamilyBootstrap:
    """Mean of one system's per-query values with a percentile interval over query families."""

    interval: Interval
    included: int
    excluded: int
    families: int
    replicates: int
    seed: int


@dataclass(frozen=True)
class PairedFamilyBootstrap:
    """Means of two systems and their paired difference (a - b), on the same draws and queries."""

    a: Interval
    b: Interval
    difference: Interval
    included: int
    excluded: int
    families: int
    replicates: int
    seed: int


def _is_missing(value: float | None) -> bool:
    return value is None or (isinstance(value, float) and math.isnan(value))


def _family_codes(families: Sequence[Hashable]) -> tuple[np.ndarray, int]:
    labels = sorted(set(families), key=str)
    code_of = {label: code for code, label in enumerate(labels)}
    return np.fromiter((code_of[f] for f in families), dtype=np.intp, count=len(families)), len(labels)


def _per_family(columns: np.ndarray, family_code: np.ndarray, n_families: int) -> tuple[np.ndarray, np.ndarray]:
    """Per-family sums of each column (shape (F, m)) and per-family query counts (shape (F,))."""
    sums = np.zeros((n_families, columns.shape[1]))
    np.add.at(sums, family_code, columns)
    counts = np.bincount(family_code, minlength=n_families).astype(float)
    return sums, counts


def _check_lengths(families: Sequence[Hashable], *value_lists: Sequence[float | None]) -> None:
    for values in value_lists:
        if len(values) != len(families):
            raise ValueError(f"{len(values)} per-query values but {len(families)} family labels")


def _bootstrap_means(
    columns: np.ndarray,
    families: Sequence[Hashable],
    *,
    replicates: int,
    seed: int,
) -> tuple[np.ndarray, np.ndarray, int]:
    """Point means (m,) and replicate means (replicates, m) of the included columns."""
    family_code, _ = _family_codes(families)
    # Renumber so that only families with an included query take part in the draw.
    present, family_code = np.unique(family_code, return_inverse=True)
    n_families = present.size
    sums, counts = _per_family(columns, family_code, n_families)
    indices = resample_indices(n_families, replicates=replicates, seed=seed)
    replicate_sums = cluster_sums(sums, indices)
    replicate_counts = cluster_sums(counts, indices)
    # Every retained family has at least one query, so no replicate count is zero.
    return columns.mean(axis=0), replicate_sums / replicate_counts[:, None], n_families


def family_bootstrap(
    values: Sequence[float | None],
    families: Sequence[Hashable],
    *,
    replicates: int = DEFAULT_REPLICATES,
    seed: int = DEFAULT_SEED,
    level: float = DEFAULT_LEVEL,
) -> FamilyBootstrap:
    """Mean of one system's per-query metric over included queries, with a family-bootstrap interval.

    Statistic: query-weighted mean over the queries whose value is not None/NaN.
    Interval: percentile ``level`` interval over ``replicates`` family resamples.
    With no included query the estimate and bounds are NaN.
    """
    _check_lengths(families, values)
    keep = [i for i, v in enumerate(values) if not _is_missing(v)]
    excluded = len(values) - len(keep)
    if not keep:
        nan = float("nan")
        return FamilyBootstrap(Interval(nan, nan, nan, level), 0, excluded, 0, replicates, seed)
    columns = np.array([[float(values[i])] for i in keep])
    point, reps, n_families = _bootstrap_means(columns, [families[i] for i in keep], replicates=replicates, seed=seed)
    low, high = percentile_bounds(reps[:, 0], level=level)
    return FamilyBootstrap(
        interval=Interval(float(point[0]), low, high, level),
        included=len(keep),
        excluded=excluded,
        families=n_families,
        replicates=replicates,
        seed=seed,
    )


def paired_family_bootstrap(
    values_a: Sequence[float | None],
    values_b: Sequence[float | None],
    families: Sequence[Hashable],
    *,
    replicates: int = DEFAULT_REPLICATES,
    seed: int = DEFAULT_SEED,
    level: float = DEFAULT_LEVEL,
) -> PairedFamilyBootstrap:
    """Paired family bootstrap of two systems' means and their difference (a - b).

    Population: queries whose value is defined for both systems (a query
    excluded for either is excluded from the pair and counted). On every
    replicate both means come from the same drawn families and the difference
    is taken on that draw. Interval: percentile ``level`` interval over
    ``replicates`` draws. With no query defined for both, every figure is NaN.
    """
    _check_lengths(families, values_a, values_b)
    keep = [i for i in range(len(families)) if not (_is_missing(values_a[i]) or _is_missing(values_b[i]))]
    excluded = len(families) - len(keep)
    if not keep:
        nan = float("nan")
        empty = Interval(nan, nan, nan, level)
        return PairedFamilyBootstrap(empty, empty, empty, 0, excluded, 0, replicates, seed)
    columns = np.array([[float(values_a[i]), float(values_b[i])] for i in keep])
    point, reps, n_families = _bootstrap_means(columns, [families[i] for i in keep], replicates=replicates, seed=seed)
    intervals = []
    for point_value, replicate_values in (
        (point[0], reps[:, 0]),
        (point[1], reps[:, 1]),
        (point[0] - point[1], reps[:, 0] - reps[:, 1]),
    ):
        low, high = percentile_bounds(replicate_values, level=level)
        intervals.append(Interval(float(point_value), low, high, level))
    return PairedFamilyBootstrap(
        a=intervals[0],
        b=intervals[1],
        difference=intervals[2],
        included=len(keep),
        excluded=excluded,
        families=n_families,
        replicates=replicates,
        seed=seed,
    )
