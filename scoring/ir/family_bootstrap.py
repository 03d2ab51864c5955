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

Too few families (``scoring.stats.units``): below ``MIN_UNITS`` retained
families every interval loses its bounds (NaN) and says why in its ``note``,
and a pair keeps no replicate differences, so it gets no p-value; below
``FEW_UNITS`` the interval is kept and noted "few units".
"""

from __future__ import annotations

import math
from collections.abc import Hashable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TypeVar, cast

import numpy as np

from scoring.stats.bootstrap import (
    DEFAULT_LEVEL,
    Interval,
    percentile_bounds_columns,
    percentile_bounds_rows,
    resample_index_blocks,
    supported_interval,
)
from scoring.stats.units import unit_support

UNIT = "query family"

DEFAULT_REPLICATES = 10_000
DEFAULT_SEED = 20260920

S = TypeVar("S", bound=Hashable)
P = TypeVar("P", bound=Hashable)


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
    # The (replicates,) differences a - b, one per draw, when asked for (``keep_replicates``): what a
    # bootstrap p-value of the pair is read from. Not part of equality, so stored results compare as before.
    replicate_differences: np.ndarray | None = field(default=None, compare=False, repr=False)


def _is_missing(value: float | None) -> bool:
    return value is None or (isinstance(value, float) and math.isnan(value))


def _check_lengths(families: Sequence[Hashable], *value_lists: Sequence[float | None]) -> None:
    for values in value_lists:
        if len(values) != len(families):
            raise ValueError(f"{len(values)} per-query values but {len(families)} family labels")


def _family_codes(families: Sequence[Hashable]) -> np.ndarray:
    labels = sorted(set(families), key=str)
    code_of = {label: code for code, label in enumerate(labels)}
    return np.fromiter((code_of[f] for f in families), dtype=np.intp, count=len(families))


def draw_blocks(n_families: int, *, replicates: int, seed: int) -> Iterator[tuple[int, int, np.ndarray]]:
    """Row blocks ``(start, stop, indices[start:stop])`` of ``resample_indices(n_families, replicates, seed)``.

    The blocks are ``scoring.stats.bootstrap.resample_index_blocks``: they concatenate to exactly the full
    index matrix (a test checks it) without ever holding replicates x families.
    """
    start = 0
    for block in resample_index_blocks(n_families, replicates=replicates, seed=seed):
        stop = start + len(block)
        yield start, stop, block
        start = stop


@dataclass
class _Group:
    """Columns that keep the same queries, so they share family numbering, draws and per-draw query counts.

    ``singles`` holds (n, 1) columns of one system; ``pairs`` (n, 2) columns of
    two systems. Their replicate sums are added in the order the first
    implementation added them, so stored intervals come back bit for bit: a
    single column as a (r, F) gather summed along the row (numpy sums a
    contiguous row pairwise), a pair family after family in draw order (as
    numpy summed the first implementation's (r, F, 2) gather).
    """

    keep: list[int]
    singles: list[np.ndarray] = field(default_factory=list)
    pairs: list[np.ndarray] = field(default_factory=list)
    n_families: int = 0
    # (replicates, columns) replicate means, sized and filled by ``prepare`` and ``_replicate_means``.
    single_reps: np.ndarray = field(default_factory=lambda: np.empty((0, 0)))
    pair_reps: np.ndarray = field(default_factory=lambda: np.empty((0, 0)))

    def prepare(self, families: Sequence[Hashable], replicates: int) -> tuple[np.ndarray, list[np.ndarray], np.ndarray]:
        """Per-family query counts (F,), single sums [(F,)], pair sums (2 * pairs, F) with each system's column
        contiguous; sets n_families."""
        family_code = _family_codes([families[i] for i in self.keep])
        # Renumber so that only families with an included query take part in the draw.
        present, code = np.unique(family_code, return_inverse=True)
        self.n_families = n = present.size
        counts = np.bincount(code, minlength=n).astype(float)
        single_sums = []
        for column in self.singles:
            sums = np.zeros((n, 1))
            np.add.at(sums, code, column)
            single_sums.append(sums[:, 0].copy())
        pair_sums = np.zeros((n, 2 * len(self.pairs)))
        for k, column in enumerate(self.pairs):
            sums = np.zeros((n, 2))
            np.add.at(sums, code, column)
            pair_sums[:, 2 * k : 2 * k + 2] = sums
        self.single_reps = np.empty((replicates, len(self.singles)))
        self.pair_reps = np.empty((replicates, pair_sums.shape[1]))
        return counts, single_sums, np.ascontiguousarray(pair_sums.T)


def _sum_rows_in_order(drawn: np.ndarray) -> np.ndarray:
    """The (r,) sums of a (F, r) matrix's rows added first to last. numpy adds whole rows in order when r > 1;
    a single column it would see as one contiguous run and add pairwise (other roundings), so that one is
    accumulated explicitly."""
    return drawn.sum(axis=0) if drawn.shape[1] > 1 else np.add.accumulate(drawn[:, 0])[-1:]


# Up to this many families a pair column is summed family by family straight from the drawn indices: the same
# additions in the same order, without laying the index block out by family first (6x faster at 10 families,
# measured; from about a hundred families on the contiguous gather is faster).
FAMILY_LOOP_MAX = 64


def _sum_families_in_order(column: np.ndarray, indices: np.ndarray) -> np.ndarray:
    """The (r,) sums of ``column`` over each replicate's drawn families (an (r, F) index block), added family
    after family in draw order: bit for bit ``_sum_rows_in_order(column[indices.T])``."""
    total: np.ndarray = column[indices[:, 0]]
    for family in range(1, indices.shape[1]):
        total += column[indices[:, family]]
    return total


def _replicate_means(groups: list[_Group], families: Sequence[Hashable], *, replicates: int, seed: int) -> None:
    """Fill each group's replicate means, drawing each (n_families, replicates, seed) index matrix once."""
    by_size: dict[int, list[tuple[_Group, np.ndarray, list[np.ndarray], np.ndarray]]] = {}
    for group in groups:
        counts, single_sums, pair_columns = group.prepare(families, replicates)
        by_size.setdefault(group.n_families, []).append((group, counts, single_sums, pair_columns))
    for n_families, members in by_size.items():
        for start, stop, indices in draw_blocks(n_families, replicates=replicates, seed=seed):
            # Families down the rows, replicates along them: summing over axis 0 adds whole rows in draw
            # order, the order the first implementation's (r, F, 2) sum used, and vectorises across replicates.
            # Laid out contiguously once per block: numpy gathers through a contiguous index several times
            # faster than through the transposed view.
            family_loop = n_families <= FAMILY_LOOP_MAX
            laid_out = not family_loop and any(m[3].shape[0] for m in members)
            by_family = np.ascontiguousarray(indices.T) if laid_out else indices.T
            for group, counts, single_sums, pair_columns in members:
                # Whole numbers: any order sums them exactly. When every family holds as many queries, every
                # draw holds that many times the families, and nothing needs gathering.
                if bool((counts == counts[0]).all()):
                    replicate_counts = np.full(stop - start, counts[0] * n_families)
                elif family_loop:
                    replicate_counts = _sum_families_in_order(counts, indices)
                else:
                    replicate_counts = counts[indices].sum(axis=1)
                for j, column in enumerate(pair_columns):
                    # A (F, r) gather from one contiguous column, summed down its rows: family after family in
                    # draw order, the additions the (F, r, columns) gather made, without its 16-byte strides.
                    sums = (_sum_families_in_order(column, indices) if family_loop
                            else _sum_rows_in_order(column[by_family]))
                    np.divide(sums, replicate_counts, out=group.pair_reps[start:stop, j])
                for k, sums in enumerate(single_sums):
                    group.single_reps[start:stop, k] = sums[indices].sum(axis=1) / replicate_counts


def _intervals(points: Sequence[float], replicate_values: np.ndarray, level: float) -> list[Interval]:
    """One percentile interval per column of a (replicates, k) matrix; one percentile call for all of them."""
    lows, highs = percentile_bounds_columns(replicate_values, level=level)
    return [Interval(float(p), float(lo), float(hi), level) for p, lo, hi in zip(points, lows, highs, strict=True)]


def family_bootstraps(
    singles: Mapping[S, Sequence[float | None]],
    pairs: Mapping[P, tuple[Sequence[float | None], Sequence[float | None]]],
    families: Sequence[Hashable],
    *,
    replicates: int = DEFAULT_REPLICATES,
    seed: int = DEFAULT_SEED,
    level: float = DEFAULT_LEVEL,
    keep_replicates: bool = False,
) -> tuple[dict[S, FamilyBootstrap], dict[P, PairedFamilyBootstrap]]:
    """Many family bootstraps over the same queries and families, on shared draws.

    ``singles`` maps a name to one system's per-query values and gets
    :func:`family_bootstrap` of each; ``pairs`` maps a name to (values a,
    values b) and gets :func:`paired_family_bootstrap` of each. Every figure is
    the one those functions give with the same seed, bit for bit. The index
    matrix for a number of retained families is drawn once for every metric
    and system, in blocks of replicates, so memory grows with replicates x
    metrics, never replicates x families x metrics.

    With ``keep_replicates`` every pair also carries its replicate differences
    (``replicate_differences``, one per draw): pairs over the same queries share
    the draws, so their differences are replicate by replicate comparable (the
    p-values of a leaderboard come from them). The intervals are unchanged.
    """
    for values in singles.values():
        _check_lengths(families, values)
    for values_a, values_b in pairs.values():
        _check_lengths(families, values_a, values_b)
    planner = _Planner()
    single_plan = planner.plan_singles(singles)
    pair_plan = planner.plan_pairs(pairs, len(families))
    _replicate_means(list(planner.groups.values()), families, replicates=replicates, seed=seed)
    return (_single_results(single_plan, replicates=replicates, seed=seed, level=level),
            _pair_results(pair_plan, replicates=replicates, seed=seed, level=level, keep_replicates=keep_replicates))


# Where a metric's replicate means will be: its group of retained families (None: no value kept), its column
# there, its point estimate(s), and the number of queries it was asked over.
_SinglePlan = tuple[_Group | None, int, float, int]
_PairPlan = tuple[_Group | None, int, np.ndarray, int]


class _Planner:
    """Puts every metric in the group of the families its defined values retain (one group per retained set)."""

    def __init__(self) -> None:
        self.missing_of: dict[int, np.ndarray] = {}
        self.groups: dict[bytes, _Group] = {}

    def missing(self, values: Sequence[float | None]) -> np.ndarray:
        if id(values) not in self.missing_of:
            self.missing_of[id(values)] = np.fromiter(map(_is_missing, values), dtype=bool, count=len(values))
        return self.missing_of[id(values)]

    def group_of(self, keep_mask: np.ndarray) -> _Group:
        key = np.packbits(keep_mask).tobytes()
        if key not in self.groups:
            self.groups[key] = _Group(keep=np.flatnonzero(keep_mask).tolist())
        return self.groups[key]

    def plan_singles(self, singles: Mapping[S, Sequence[float | None]]) -> dict[S, _SinglePlan]:
        plan: dict[S, _SinglePlan] = {}
        for name, values in singles.items():
            keep_mask = ~self.missing(values)
            if not keep_mask.any():
                plan[name] = (None, 0, float("nan"), len(values))
                continue
            group = self.group_of(keep_mask)
            # The kept values are defined: ``missing`` left out every None.
            column = np.array([[float(cast(float, values[i]))] for i in group.keep])
            group.singles.append(column)
            plan[name] = (group, len(group.singles) - 1, float(column.mean(axis=0)[0]), len(values))
        return plan

    def plan_pairs(self, pairs: Mapping[P, tuple[Sequence[float | None], Sequence[float | None]]],
                   n_queries: int) -> dict[P, _PairPlan]:
        plan: dict[P, _PairPlan] = {}
        for pair_name, (values_a, values_b) in pairs.items():
            keep_mask = ~(self.missing(values_a) | self.missing(values_b))
            if not keep_mask.any():
                plan[pair_name] = (None, 0, np.full(2, float("nan")), n_queries)
                continue
            group = self.group_of(keep_mask)
            columns = np.array([[float(cast(float, values_a[i])), float(cast(float, values_b[i]))]
                                for i in group.keep])
            group.pairs.append(columns)
            plan[pair_name] = (group, len(group.pairs) - 1, columns.mean(axis=0), n_queries)
        return plan


def _single_results(plan: dict[S, _SinglePlan], *, replicates: int, seed: int,
                    level: float) -> dict[S, FamilyBootstrap]:
    nan = float("nan")
    results: dict[S, FamilyBootstrap] = {}
    for name, (group, k, point, total) in plan.items():
        if group is None:
            results[name] = FamilyBootstrap(Interval(nan, nan, nan, level), 0, total, 0, replicates, seed)
            continue
        (interval,) = _intervals([point], group.single_reps[:, k : k + 1], level)
        interval = supported_interval(interval, unit_support(group.n_families, unit=UNIT))
        results[name] = FamilyBootstrap(
            interval=interval,
            included=len(group.keep),
            excluded=total - len(group.keep),
            families=group.n_families,
            replicates=replicates,
            seed=seed,
        )
    return results


def _pair_results(plan: dict[P, _PairPlan], *, replicates: int, seed: int, level: float,
                  keep_replicates: bool) -> dict[P, PairedFamilyBootstrap]:
    nan = float("nan")
    empty = Interval(nan, nan, nan, level)
    results: dict[P, PairedFamilyBootstrap] = {}
    for pair_name, (group, k, points, total) in plan.items():
        if group is None:
            results[pair_name] = PairedFamilyBootstrap(empty, empty, empty, 0, total, 0, replicates, seed)
            continue
        # Replicates along contiguous rows (a, b, a - b): the percentile routine partitions them in place.
        rows = np.empty((3, replicates))
        rows[0], rows[1] = group.pair_reps[:, 2 * k], group.pair_reps[:, 2 * k + 1]
        np.subtract(rows[0], rows[1], out=rows[2])
        support = unit_support(group.n_families, unit=UNIT)
        replicate_differences = rows[2].copy() if keep_replicates and support.has_interval else None
        lows, highs = percentile_bounds_rows(rows, level=level, overwrite=True)
        a, b, difference = (
            supported_interval(Interval(float(point), float(low), float(high), level), support)
            for point, low, high in zip([points[0], points[1], points[0] - points[1]], lows, highs, strict=True)
        )
        results[pair_name] = PairedFamilyBootstrap(
            a=a,
            b=b,
            difference=difference,
            included=len(group.keep),
            excluded=total - len(group.keep),
            families=group.n_families,
            replicates=replicates,
            seed=seed,
            replicate_differences=replicate_differences,
        )
    return results


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
    singles, _ = family_bootstraps({0: values}, {}, families, replicates=replicates, seed=seed, level=level)
    return singles[0]


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
    _, pairs = family_bootstraps({}, {0: (values_a, values_b)}, families, replicates=replicates, seed=seed, level=level)
    return pairs[0]
