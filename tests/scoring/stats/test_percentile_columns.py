"""The column-wise percentile interval is the per-column ``percentile_bounds``, to the bit.

``percentile_bounds_columns`` sorts rows and applies numpy's "linear" rule itself
(every CUAD interval, the leaderboard and the IR family bootstrap go through it),
so it is compared bit for bit with ``np.percentile`` on each column's defined
replicates, on shapes and values that exercise every branch: NaN replicates,
columns with none or one defined value, ties, infinities and other levels.
"""

from __future__ import annotations

import numpy as np
import pytest

from scoring.stats.bootstrap import percentile_bounds, percentile_bounds_columns, percentile_bounds_rows


def _bits(x: np.ndarray) -> np.ndarray:
    return np.asarray(x, dtype=float).view(np.int64)


def _same(actual: np.ndarray, expected: np.ndarray) -> bool:
    nan = np.isnan(actual) & np.isnan(expected)
    return bool(((_bits(actual) == _bits(expected)) | nan).all())


@pytest.mark.parametrize("seed", range(40))
def test_every_column_matches_percentile_bounds_bit_for_bit(seed):
    rng = np.random.default_rng(seed)
    replicates, k = int(rng.integers(1, 1500)), int(rng.integers(1, 60))
    kind = seed % 4
    if kind == 0:
        values = rng.random((replicates, k))
    elif kind == 1:  # ratios of small counts, as CUAD replicate F1: many ties
        values = rng.integers(0, 9, (replicates, k)) / rng.integers(1, 9, (replicates, k))
    elif kind == 2:  # paired differences, signs mixed
        values = rng.normal(size=(replicates, k)) * 10.0 ** rng.integers(-6, 6)
    else:
        values = rng.integers(-3, 4, (replicates, k)).astype(float)
    values[rng.random(values.shape) < rng.choice([0.0, 0.01, 0.5, 0.99])] = np.nan
    values[:, 0] = np.nan  # a column with no defined replicate
    if k > 1:
        values[:, 1] = np.nan
        values[int(rng.integers(replicates)), 1] = 0.25  # one defined replicate
    if k > 2 and seed % 5 == 0:
        values[0, 2] = np.inf
    level = float(rng.choice([0.95, 0.9, 0.5, 0.99, 0.8]))
    low, high = percentile_bounds_columns(values, level=level)
    expected = np.array([percentile_bounds(values[:, j], level=level) for j in range(k)])
    assert _same(low, expected[:, 0]), (seed, low, expected[:, 0])
    assert _same(high, expected[:, 1]), (seed, high, expected[:, 1])


def test_a_vector_is_refused():
    with pytest.raises(ValueError, match="replicates, k"):
        percentile_bounds_columns(np.zeros(5))


# inf - inf in numpy's own interpolation (and so in ours) is NaN with a warning: both give the same NaN.
@pytest.mark.filterwarnings("ignore:invalid value encountered:RuntimeWarning")
@pytest.mark.parametrize("seed", range(40))
@pytest.mark.parametrize("overwrite", [False, True])
def test_columns_with_no_missing_replicate_take_the_partition_path_and_still_match_bit_for_bit(seed, overwrite):
    # No NaN anywhere: every row has the same n, so the bounds come from one partition instead of a sort.
    rng = np.random.default_rng(1000 + seed)
    replicates, k = int(rng.choice([1, 2, 3, 39, 40, 41, int(rng.integers(4, 3000))])), int(rng.integers(1, 40))
    kind = seed % 3
    if kind == 0:
        values = rng.random((replicates, k))
    elif kind == 1:  # many ties
        values = rng.integers(0, 5, (replicates, k)) / rng.integers(1, 5, (replicates, k))
    else:
        values = rng.normal(size=(replicates, k)) * 10.0 ** rng.integers(-6, 6)
    if seed % 7 == 0:
        values[0, 0] = np.inf
        values[-1, -1] = -np.inf
    level = float(rng.choice([0.95, 0.9, 0.5, 0.99, 0.8, 0.999]))
    expected = np.array([percentile_bounds(values[:, j], level=level) for j in range(k)])
    rows = np.ascontiguousarray(values.T)
    low, high = percentile_bounds_rows(rows, level=level, overwrite=overwrite)
    assert _same(low, expected[:, 0]), (seed, low, expected[:, 0])
    assert _same(high, expected[:, 1]), (seed, high, expected[:, 1])
    if not overwrite:
        assert _same(rows, np.ascontiguousarray(values.T))  # the caller's matrix is left as it was
