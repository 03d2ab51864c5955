"""Permutation tests of "an order carries no signal": is a position independent of a covariate?

The data are the positions of n items in an order (0 .. n-1) and, per item, covariates fixed beforehand (a
system's rank of the item, whether it is in a system's top k). The statistic is any function of the
positions (vectorised: it takes an array of shape (B, n) and returns B values); large absolute values
speak against independence. The null distribution comes from drawing positions again under the design's
own randomisation:

- ``shuffle``: every order of the n items equally likely (an order that is one keyed shuffle);
- ``blocks``: groups (queries) in a random order, each group's items contiguous and shuffled within it (an
  order that takes whole queries one after another). Testing such an order with ``shuffle`` would be
  anti-conservative when a covariate differs between groups: the reference must match the design.

The p-value counts resamples at least as extreme as the observed statistic (absolute values), plus one in
numerator and denominator (``scipy.stats.permutation_test`` does the same), so a finite number of
resamples never claims p = 0 and the test stays valid. With ``shuffle`` and n! at most ``n_resamples``,
every order is enumerated and the p-value is exact (the observed order is one of them).
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np
from scipy import stats as sps

Statistic = Callable[[np.ndarray], np.ndarray]
SHUFFLE = "shuffle"
BLOCKS = "blocks"


@dataclass(frozen=True)
class PermutationResult:
    statistic: float
    p_value: float
    resamples: int
    exact: bool


def _average_ranks(values: Sequence[float]) -> np.ndarray:
    return sps.rankdata(np.asarray(values, dtype=float))


def spearman_statistic(covariate: Sequence[float]) -> Statistic:
    """Spearman's correlation between position and ``covariate`` (average ranks for ties; 0 if constant)."""
    y = _average_ranks(covariate)
    y = y - y.mean()
    y_norm = float(np.sqrt((y * y).sum()))

    def statistic(positions: np.ndarray) -> np.ndarray:
        x = sps.rankdata(np.atleast_2d(positions), axis=-1)
        x = x - x.mean(axis=-1, keepdims=True)
        x_norm = np.sqrt((x * x).sum(axis=-1))
        denom = x_norm * y_norm
        with np.errstate(invalid="ignore", divide="ignore"):
            out = np.where(denom > 0, (x * y).sum(axis=-1) / np.where(denom > 0, denom, 1.0), 0.0)
        return out

    return statistic


def mean_difference_statistic(member: Sequence[bool]) -> Statistic:
    """Mean position of the members minus that of the others, over the number of items (0 if one side is empty).

    Divided by n so that it lies in (-1, 1) like a correlation, whatever the queue length.
    """
    mask = np.asarray(member, dtype=bool)
    n = mask.size
    inside, outside = int(mask.sum()), int((~mask).sum())

    def statistic(positions: np.ndarray) -> np.ndarray:
        p = np.atleast_2d(positions).astype(float)
        if not inside or not outside:
            return np.zeros(p.shape[0])
        difference: np.ndarray = (p[:, mask].mean(axis=1) - p[:, ~mask].mean(axis=1)) / n
        return difference

    return statistic


def within_groups_statistic(covariate: Sequence[float], groups: Sequence[object]) -> Statistic:
    """Mean over groups of the squared correlation of position and ``covariate`` within the group.

    It sees any order inside a query that follows the covariate, whichever its direction in each query (one
    system's top five first here, another's there) and even when queries interleave, where a correlation over
    the whole queue would average it away. Groups where the covariate is constant take no part; 0 if none is left.
    """
    labels = {g: i for i, g in enumerate(dict.fromkeys(groups))}
    one_hot = np.zeros((len(labels), len(groups)))
    one_hot[[labels[g] for g in groups], np.arange(len(groups))] = 1.0
    averaging = (one_hot / one_hot.sum(axis=1, keepdims=True)).T @ one_hot  # (n, n): item -> its group's mean
    y = np.asarray(covariate, dtype=float)
    y = y - averaging @ y
    y_square = one_hot @ (y * y)  # per group
    varying = y_square > 1e-12

    def statistic(positions: np.ndarray) -> np.ndarray:
        x = np.atleast_2d(positions).astype(float)
        x = x - x @ averaging.T
        if not varying.any():
            return np.zeros(x.shape[0])
        covariance = ((x * y) @ one_hot.T)[:, varying]
        x_square = ((x * x) @ one_hot.T)[:, varying]
        r_square = covariance ** 2 / np.maximum(x_square * y_square[varying], 1e-300)
        mean_r_square: np.ndarray = r_square.mean(axis=1)
        return mean_r_square

    return statistic


def max_abs_statistic(*statistics: Statistic) -> Statistic:
    """The largest absolute value of several statistics: one test for "any of them", no multiplicity to adjust."""

    def statistic(positions: np.ndarray) -> np.ndarray:
        largest: np.ndarray = np.max(np.abs(np.stack([s(positions) for s in statistics])), axis=0)
        return largest

    return statistic


def draw_positions(design: str, n: int, rng: np.random.Generator, size: int,
                   groups: Sequence[object] | None = None) -> np.ndarray:
    """``size`` position vectors (shape (size, n)) drawn under ``design`` (see the module doc)."""
    if design == SHUFFLE:
        return np.argsort(rng.random((size, n)), axis=1).argsort(axis=1)
    if design != BLOCKS:
        raise ValueError(f"design must be {SHUFFLE!r} or {BLOCKS!r}, got {design!r}")
    if groups is None or len(groups) != n:
        raise ValueError("blocks: one group per item is required")
    labels = {g: i for i, g in enumerate(dict.fromkeys(groups))}
    group = np.array([labels[g] for g in groups])
    # Sort by (random key of the item's group, random key of the item): groups contiguous, in a random order,
    # items in a random order within each.
    group_keys = rng.random((size, len(labels)))[:, group]
    item_keys = rng.random((size, n))
    order = np.lexsort((item_keys, group_keys))
    return order.argsort(axis=1)


def permutation_test(statistic: Statistic, positions: Sequence[int], *, design: str = SHUFFLE,
                     groups: Sequence[object] | None = None, n_resamples: int = 9999,
                     seed: int | np.random.Generator = 0) -> PermutationResult:
    """Two-sided test of independence between ``positions`` and what ``statistic`` measures (see the module doc)."""
    observed_positions = np.asarray(positions)
    n = observed_positions.size
    observed = float(statistic(observed_positions[None, :])[0])
    tolerance = 1e-12 * max(1.0, abs(observed))  # the observed order recomputed must count as "as extreme"
    if design == SHUFFLE and math.factorial(n) <= n_resamples:
        every = np.array(list(itertools.permutations(range(n))))
        values = np.abs(statistic(observed_positions[every]))
        extreme = int(np.count_nonzero(values >= abs(observed) - tolerance))
        return PermutationResult(statistic=observed, p_value=extreme / len(every), resamples=len(every), exact=True)
    rng = seed if isinstance(seed, np.random.Generator) else np.random.default_rng(seed)
    extreme = 0
    done = 0
    while done < n_resamples:
        size = min(2000, n_resamples - done)
        drawn = draw_positions(design, n, rng, size, groups)
        extreme += int(np.count_nonzero(np.abs(statistic(drawn)) >= abs(observed) - tolerance))
        done += size
    return PermutationResult(statistic=observed, p_value=(extreme + 1) / (n_resamples + 1), resamples=n_resamples,
                             exact=False)


def fisher_combined(p_values: Sequence[float]) -> float:
    """Fisher's method: one p-value for "every null holds" from independent tests' p-values."""
    return float(sps.combine_pvalues(np.asarray(p_values, dtype=float), method="fisher").pvalue)


def binomial_excess(count: int, trials: int, level: float) -> float:
    """P-value of seeing ``count`` or more of ``trials`` independent p-values below ``level`` when all nulls hold."""
    return float(sps.binomtest(count, trials, level, alternative="greater").pvalue)
