"""Cluster (group-level) percentile bootstrap, vectorised.

Outcomes within a cluster (a CUAD contract, a query family) are correlated, so
the unit of resampling is the cluster: draw as many clusters as there are, with
replacement, and recompute the statistic on that draw. All replicates come from
one ``rng.integers`` index matrix; nothing loops over replicates in Python.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

DEFAULT_LEVEL = 0.95


@dataclass(frozen=True)
class Interval:
    """A percentile bootstrap interval: point estimate and [low, high]."""

    estimate: float
    low: float
    high: float
    level: float = DEFAULT_LEVEL

    def as_list(self) -> list[float]:
        return [self.low, self.high]


def resample_indices(n_clusters: int, *, replicates: int, seed: int) -> np.ndarray:
    """Index matrix of shape (replicates, n_clusters): row b lists the clusters drawn in replicate b.

    The seed is explicit so that the same seed and sizes give the same draws,
    and two systems evaluated on the same matrix are paired.
    """
    if n_clusters <= 0:
        raise ValueError("the bootstrap needs at least one cluster")
    if replicates <= 0:
        raise ValueError("the bootstrap needs at least one replicate")
    rng = np.random.default_rng(seed)
    return rng.integers(0, n_clusters, size=(replicates, n_clusters))


def percentile_bounds(replicate_values: np.ndarray, *, level: float = DEFAULT_LEVEL) -> tuple[float, float]:
    """Percentile interval (e.g. 2.5th and 97.5th) over replicate statistics, ignoring NaN replicates.

    NaN arises when a replicate's denominator is zero (e.g. a resample with no
    extractions); such replicates carry no information about the ratio.
    """
    values = np.asarray(replicate_values, dtype=float)
    values = values[~np.isnan(values)]
    if values.size == 0:
        return (float("nan"), float("nan"))
    tail = (1.0 - level) / 2.0 * 100.0
    low, high = np.percentile(values, [tail, 100.0 - tail])
    return (float(low), float(high))


def percentile_bounds_columns(
    replicate_values: np.ndarray, *, level: float = DEFAULT_LEVEL
) -> tuple[np.ndarray, np.ndarray]:
    """``percentile_bounds`` of every column of a (replicates, k) matrix, as two (k,) arrays (low, high).

    Columns without NaN go through one ``np.percentile(..., axis=0)`` call (the
    same per-column arithmetic, so the same numbers as ``percentile_bounds``);
    a column with NaN replicates goes through ``percentile_bounds`` itself.
    Dozens of intervals then cost one call instead of one call each.
    """
    values = np.asarray(replicate_values, dtype=float)
    if values.ndim != 2:
        raise ValueError(f"expected a (replicates, k) matrix, got shape {values.shape}")
    low = np.empty(values.shape[1])
    high = np.empty(values.shape[1])
    has_nan = np.isnan(values).any(axis=0)
    clean = ~has_nan
    if clean.any():
        tail = (1.0 - level) / 2.0 * 100.0  # exactly as percentile_bounds computes it
        low[clean], high[clean] = np.percentile(values[:, clean], [tail, 100.0 - tail], axis=0)
    for k in np.flatnonzero(has_nan):
        low[k], high[k] = percentile_bounds(values[:, k], level=level)
    return low, high


def cluster_sums(values_per_cluster: np.ndarray, indices: np.ndarray) -> np.ndarray:
    """Sum of per-cluster values over each replicate's drawn clusters.

    ``values_per_cluster`` has shape (n_clusters,) or (n_clusters, k); the result
    has shape (replicates,) or (replicates, k).
    """
    values = np.asarray(values_per_cluster, dtype=float)
    return values[indices].sum(axis=1)
