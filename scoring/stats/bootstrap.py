"""Cluster (group-level) percentile bootstrap, vectorised.

Outcomes within a cluster (a CUAD contract, a query family) are correlated, so
the unit of resampling is the cluster: draw as many clusters as there are, with
replacement, and recompute the statistic on that draw. All replicates come from
one ``rng.integers`` index matrix; nothing loops over replicates in Python.

``unit_bootstrap`` applies the same draw to any statistic of additive per-unit
tallies (Brier, ECE, Cohen's kappa, Krippendorff's alpha), and records the
unit, the number of units, the replicates, the seed and the replicates on
which the statistic was undefined.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Hashable, Iterator, Sequence
from dataclasses import dataclass, replace

import numpy as np

from scoring.stats.units import MIN_UNITS, UnitSupport, unit_support

DEFAULT_LEVEL = 0.95


@dataclass(frozen=True)
class Interval:
    """A percentile bootstrap interval: point estimate and [low, high].

    ``note`` says in words what the number of resampling units made of it (``scoring.stats.units``):
    "no interval: 2 query families (at least 3 needed)" with NaN bounds, "few units: 6 query families",
    or '' for a plain interval.
    """

    estimate: float
    low: float
    high: float
    level: float = DEFAULT_LEVEL
    note: str = ""

    @property
    def has_bounds(self) -> bool:
        return not (math.isnan(self.low) or math.isnan(self.high))

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



def supported_interval(interval: Interval, support: UnitSupport) -> Interval:
    """``interval`` as the units allow: bounds removed (NaN) below ``MIN_UNITS``, a note in words when few.

    The estimate is kept: a mean over one family is still that mean; only its interval is not.
    """
    if math.isnan(interval.estimate):
        return interval
    if not support.has_interval:
        return replace(interval, low=math.nan, high=math.nan, note=support.short)
    return replace(interval, note=support.short) if support.few else interval


# Drawn cells per block of ``resample_index_blocks``: a few MB whatever the replicates and units.
BLOCK_CELLS = 1 << 18


def resample_index_blocks(n_clusters: int, *, replicates: int, seed: int) -> Iterator[np.ndarray]:
    """``resample_indices(n_clusters, replicates, seed)`` in consecutive row blocks, never held whole.

    One generator fills the blocks in order; ``Generator.integers`` consumes its
    stream row by row, so the blocks concatenate to exactly the full matrix (a
    test checks it).
    """
    if n_clusters <= 0:
        raise ValueError("the bootstrap needs at least one cluster")
    if replicates <= 0:
        raise ValueError("the bootstrap needs at least one replicate")
    rng = np.random.default_rng(seed)
    rows = max(1, BLOCK_CELLS // n_clusters)
    for start in range(0, replicates, rows):
        yield rng.integers(0, n_clusters, size=(min(rows, replicates - start), n_clusters))


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

    The columns are laid out as rows and handed to ``percentile_bounds_rows``:
    bit-identical to ``percentile_bounds`` per column (a test compares them on
    random matrices with NaN), and several times cheaper than
    ``np.percentile(axis=0)``, which partitions strided columns and sends every
    column holding a NaN through a call of its own.
    """
    values = np.asarray(replicate_values, dtype=float)
    if values.ndim != 2:
        raise ValueError(f"expected a (replicates, k) matrix, got shape {values.shape}")
    return percentile_bounds_rows(values.T, level=level)


def percentile_bounds_rows(
    rows: np.ndarray, *, level: float = DEFAULT_LEVEL, overwrite: bool = False
) -> tuple[np.ndarray, np.ndarray]:
    """``percentile_bounds`` of every row of a (k, replicates) matrix, as two (k,) arrays (low, high).

    numpy's "linear" percentile rule is applied to each row's ``n`` defined
    replicates. When no replicate is NaN (the usual case) every row has the same
    ``n``, so the at most four order statistics the two bounds read are put in
    place by one ``partition`` of all rows (linear time, as ``np.percentile``
    does); the entries at those positions are those a full sort puts there, so
    the bounds are the same floats. Otherwise each row is sorted (NaN sorts
    last, so its first ``n`` entries are its defined replicates in order).
    ``overwrite`` works on a float64 C-contiguous ``rows`` in place (a caller's
    scratch buffer) instead of a copy.
    """
    if np.ndim(rows) != 2:
        raise ValueError(f"expected a (k, replicates) matrix, got shape {np.shape(rows)}")
    in_place = overwrite and rows.dtype == np.float64 and rows.flags.c_contiguous
    if not in_place:
        rows = np.asarray(rows, dtype=float)
    n = rows.shape[1] - np.count_nonzero(np.isnan(rows), axis=1)
    tail = (1.0 - level) / 2.0 * 100.0  # exactly as percentile_bounds computes it
    quantiles = np.true_divide([tail, 100.0 - tail], 100)  # as np.percentile divides q
    if rows.shape[1] and (n == rows.shape[1]).all():
        # The positions _sorted_quantiles reads: floor and floor + 1 of each virtual index, clipped to n - 1.
        virtual = (rows.shape[1] - 1) * quantiles
        previous = np.floor(virtual).astype(np.intp)
        kth = np.unique(np.minimum(np.concatenate([previous, previous + 1]), rows.shape[1] - 1))
        if in_place:
            rows.partition(kth, axis=1)
        else:
            rows = np.partition(rows, kth, axis=1)
    elif in_place:
        rows.sort(axis=1)
    else:
        rows = np.sort(rows, axis=1)
    low, high = np.full(rows.shape[0], np.nan), np.full(rows.shape[0], np.nan)
    defined = np.flatnonzero(n > 0)
    if defined.size:
        low[defined], high[defined] = _sorted_quantiles(rows, defined, n[defined], quantiles)
    return low, high


def _sorted_quantiles(rows: np.ndarray, which: np.ndarray, n: np.ndarray, quantiles: np.ndarray) -> np.ndarray:
    """Quantiles (0..1) of the first ``n[i]`` (sorted) entries of each row ``which[i]``: (len(quantiles), rows).

    Replicates numpy's ``_quantile`` for method "linear" step by step (virtual
    index ``(n - 1) * q``, its floor, the last element when the index reaches
    ``n - 1`` with gamma taken against index -1 as numpy does, and ``_lerp``'s
    two-sided formula), so the floats are those of ``np.percentile`` on each
    row's defined values. Only the picked entries are gathered, never whole rows.
    """
    virtual = (n - 1) * quantiles[:, None]  # numpy: (n - 1) * quantiles, an int times a float64
    previous = np.floor(virtual)
    above = virtual >= n - 1
    previous[above] = -1.0
    gamma = virtual - previous
    last = np.broadcast_to(n - 1, virtual.shape)
    prev_index = np.where(above, last, previous.astype(np.intp))
    next_index = np.where(above, last, previous.astype(np.intp) + 1)
    a, b = rows[which, prev_index], rows[which, next_index]
    diff = b - a
    result = a + diff * gamma
    upper = gamma >= 0.5
    result[upper] = (b - diff * (1 - gamma))[upper]
    quantiles_of_rows: np.ndarray = result
    return quantiles_of_rows


def cluster_sums(values_per_cluster: np.ndarray, indices: np.ndarray) -> np.ndarray:
    """Sum of per-cluster values over each replicate's drawn clusters.

    ``values_per_cluster`` has shape (n_clusters,) or (n_clusters, k); the result
    has shape (replicates,) or (replicates, k).
    """
    values = np.asarray(values_per_cluster, dtype=float)
    sums: np.ndarray = values[indices].sum(axis=1)
    return sums


def unit_codes(units: Sequence[Hashable]) -> tuple[np.ndarray, int]:
    """Number each observation's unit in sorted order of ``str(unit)``, as the family bootstrap does.

    The draw then does not depend on the order in which observations are listed.
    """
    labels = sorted(set(units), key=str)
    code_of = {label: code for code, label in enumerate(labels)}
    return np.fromiter((code_of[u] for u in units), dtype=np.intp, count=len(units)), len(labels)


def draw_counts(indices: np.ndarray, n_units: int) -> np.ndarray:
    """Count form of an index matrix: (replicates, n_units), how many times each unit is drawn per replicate.

    ``draw_counts(indices, n) @ values`` equals ``cluster_sums(values, indices)``
    without building a replicates x units x k array.
    """
    replicates = indices.shape[0]
    flat = (indices + n_units * np.arange(replicates)[:, None]).ravel()
    return np.bincount(flat, minlength=replicates * n_units).reshape(replicates, n_units).astype(float)


def _plural(noun: str) -> str:
    return noun[:-1] + "ies" if noun.endswith("y") else noun + "s"


@dataclass(frozen=True)
class UnitBootstrap:
    """A statistic with its percentile interval over resampled units, and everything needed to read it.

    ``units``: how many units took part in the draw (those with at least one
    observation); ``observations``: what the point estimate is computed over.
    ``undefined``: replicates on which the statistic is undefined (e.g. a
    kappa whose resample holds one category); they are left out of the
    percentile and counted here, never dropped silently. ``caveat`` says in
    words what the data made of the interval (None when nothing to say).
    """

    statistic: str
    interval: Interval
    unit: str
    units: int
    observation: str
    observations: int
    replicates: int
    seed: int
    undefined: int
    caveat: str | None

    @property
    def defined(self) -> bool:
        return not math.isnan(self.interval.estimate)

    @property
    def has_interval(self) -> bool:
        return not (math.isnan(self.interval.low) or math.isnan(self.interval.high))

    @property
    def population(self) -> str:
        """E.g. "12 query families (87 labelled items), 10000 resamples, seed 20260920"."""
        obs = self.observation if self.observations == 1 else _plural(self.observation)
        unit = self.unit if self.units == 1 else _plural(self.unit)
        return (
            f"{self.units} {unit} ({self.observations} {obs}), "
            f"{self.replicates} resamples of {_plural(self.unit)}, seed {self.seed}"
        )

    @property
    def description(self) -> str:
        """E.g. "95% percentile bootstrap interval over 12 query families (87 labelled items), ..."; caveat appended."""
        text = f"{self.interval.level * 100:g}% percentile bootstrap interval over {self.population}"
        return f"{text}; {self.caveat}" if self.caveat else text

    def as_dict(self) -> dict[str, object]:
        def clean(x: float) -> float | None:
            return None if math.isnan(x) else round(float(x), 6)

        return {
            "estimate": clean(self.interval.estimate),
            "low": clean(self.interval.low),
            "high": clean(self.interval.high),
            "level": self.interval.level,
            "method": "percentile bootstrap",
            "unit": self.unit,
            "units": self.units,
            "observation": self.observation,
            "observations": self.observations,
            "replicates": self.replicates,
            "seed": self.seed,
            "undefined_replicates": self.undefined,
            "caveat": self.caveat,
        }


def unit_bootstrap(
    per_unit: np.ndarray,
    statistic: Callable[[np.ndarray], np.ndarray],
    *,
    name: str,
    unit: str,
    observation: str,
    observations: int,
    undefined_when: str,
    replicates: int,
    seed: int,
    level: float = DEFAULT_LEVEL,
) -> UnitBootstrap:
    """Percentile bootstrap of a statistic of additive per-unit tallies, resampling units.

    ``per_unit`` has shape (n_units, ...): each unit's sufficient statistics
    (a confusion table, squared errors and counts, a coincidence matrix) that
    add up over units. ``statistic`` maps summed tallies of shape (r, ...) to
    r values, NaN where undefined. The point estimate is the statistic of the
    sum over all units; replicate b sums the units of row b of
    ``resample_indices(n_units, replicates, seed)``, the same draw as the
    family and contract bootstraps. Units must all carry at least one
    observation (callers leave empty ones out, as the family bootstrap does).

    Degenerate cases, stated in ``caveat``: an undefined point estimate gets
    no interval; fewer than ``scoring.stats.units.MIN_UNITS`` units get no
    interval, and fewer than ``FEW_UNITS`` an interval marked "few units";
    replicates on which the statistic is undefined (``undefined_when`` says
    when) are left out of the percentile and counted in ``undefined``.
    """
    values = np.asarray(per_unit, dtype=float)
    n_units = values.shape[0] if values.ndim else 0
    nan = float("nan")

    def result(estimate: float, low: float, high: float, undefined: int, caveat: str | None) -> UnitBootstrap:
        note = unit_support(n_units, unit=unit).short if n_units and not math.isnan(estimate) else ""
        return UnitBootstrap(
            statistic=name, interval=Interval(estimate, low, high, level, note), unit=unit, units=n_units,
            observation=observation, observations=observations, replicates=replicates, seed=seed,
            undefined=undefined, caveat=caveat,
        )

    if n_units == 0:
        return result(nan, nan, nan, 0, f"no {_plural(observation)}: {name} is not computed")
    estimate = float(statistic(values.sum(axis=0)[None])[0])
    if math.isnan(estimate):
        return result(nan, nan, nan, 0, f"{name} is undefined on these data ({undefined_when}): no interval")
    support = unit_support(n_units, unit=unit)
    if n_units < MIN_UNITS:
        return result(estimate, nan, nan, 0, support.sentence)
    per_unit_flat = values.reshape(n_units, -1)
    replicate_values = np.concatenate([
        np.asarray(statistic((draw_counts(block, n_units) @ per_unit_flat).reshape((-1, *values.shape[1:]))),
                   dtype=float)
        for block in resample_index_blocks(n_units, replicates=replicates, seed=seed)
    ])
    undefined = int(np.isnan(replicate_values).sum())
    low, high = percentile_bounds(replicate_values, level=level)
    caveats = [support.sentence] if support.few else []
    if undefined:
        caveats.append(
            f"{undefined} of {replicates} resamples had {undefined_when}, where {name} is undefined; they are left "
            f"out and the interval is the percentile over the other {replicates - undefined}"
        )
    return result(estimate, low, high, undefined, "; ".join(caveats) or None)
