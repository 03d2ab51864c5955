"""The batched leaderboard arithmetic equals, to the bit, the per-run path it replaced.

``board_grade`` grades every run in one batch (one draw-count product for all
runs, one percentile call for every interval of the board). The reference here
is the unoptimised path written out again: per run, per clause type and per
metric, replicate sums gathered from the drawn contract indices
(``cluster_sums``) and each interval from its own ``np.percentile`` call
(``percentile_bounds``); per pair, the difference of the two runs' replicate F1.
Every float of the board is compared bit for bit on random tables, thresholds,
replicate counts and seeds.
"""

from __future__ import annotations

import numpy as np
import pytest

from grading.scorecard.leaderboard import board_grade
from scoring.cuad.grading import (
    COUNT_KEYS,
    HALLUCINATED,
    Thresholds,
    classify,
    contract_tallies,
    micro_ratios,
)
from scoring.stats.bootstrap import cluster_sums, percentile_bounds, resample_indices
from scoring.stats.multiple import bootstrap_p_value, holm_adjust
from tests.grading.scorecard.test_leaderboard import _random_tables


def _same(x: float, y: float) -> bool:
    return (np.isnan(x) and np.isnan(y)) or np.float64(x).view(np.int64) == np.float64(y).view(np.int64)


def _interval(point: float, replicate_values: np.ndarray) -> tuple[float, float, float]:
    low, high = percentile_bounds(replicate_values)
    return (float(point), low, high)


def _reference_run(table, thresholds, draws):
    """Per run, the slow way: figures per column, hallucination rate and replicate F1."""
    classified = classify(table, thresholds)
    tallies = contract_tallies(table, classified)
    nk = table.n_categories
    columns = [tallies[:, k] for k in range(nk)] + [tallies.sum(axis=1)]
    figures = []
    for col, per_contract in enumerate(columns):
        point = micro_ratios(per_contract.sum(axis=0))
        reps = micro_ratios(cluster_sums(per_contract, draws))
        in_col = table.ext_category == col if col < nk else np.ones(len(table.ext_category), dtype=bool)
        span_in = table.span_category == col if col < nk else np.ones(len(table.span_category), dtype=bool)
        counts = [int(np.count_nonzero(classified.outcome[in_col] == o)) for o in range(4)]
        counts += [int(classified.span_missed[span_in].sum()), int(in_col.sum()), int(span_in.sum())]
        figures.append(([_interval(point[m], reps[m]) for m in range(3)], dict(zip(COUNT_KEYS, counts, strict=True)),
                        float(per_contract.sum(axis=0)[0])))
    grounded = np.bincount(table.ext_contract, weights=(classified.outcome != HALLUCINATED).astype(float),
                           minlength=table.n_contracts)
    extractions = np.bincount(table.ext_contract, minlength=table.n_contracts).astype(float)
    drawn_g, drawn_e = cluster_sums(grounded, draws), cluster_sums(extractions, draws)
    with np.errstate(invalid="ignore", divide="ignore"):
        share = np.where(drawn_e > 0, drawn_g / drawn_e, np.nan)
    estimate = float(grounded.sum() / extractions.sum()) if extractions.sum() else float("nan")
    g_low, g_high = percentile_bounds(share)
    hallucination = (1.0 - estimate, 1.0 - g_high, 1.0 - g_low)
    return figures, hallucination, micro_ratios(cluster_sums(columns[-1], draws))[2]


def _check_figures(actual, expected) -> None:
    intervals, counts, credit = expected
    for got, (point, low, high) in zip((actual.precision, actual.recall, actual.f1), intervals, strict=True):
        assert _same(got.estimate, point) and _same(got.low, low) and _same(got.high, high), (got, point, low, high)
    assert actual.counts == counts
    assert _same(actual.credit, credit)


@pytest.mark.parametrize("seed", range(8))
def test_the_batched_board_equals_the_per_run_path_bit_for_bit(seed):
    rng = np.random.default_rng(100 + seed)
    runs = int(rng.integers(1, 6))
    tables = _random_tables(rng, runs=runs, contracts=int(rng.integers(3, 25)), categories=int(rng.integers(1, 6)))
    correct = float(rng.uniform(0.3, 1.0))
    thresholds = Thresholds(correct, float(rng.uniform(0, correct)), float(rng.uniform(0.0, 1.0)))
    replicates, boot_seed = int(rng.integers(20, 700)), int(rng.integers(1000))
    board = board_grade(tables, thresholds, replicates=replicates, seed=boot_seed)

    draws = resample_indices(tables[0].n_contracts, replicates=replicates, seed=boot_seed)
    reference = [_reference_run(t, thresholds, draws) for t in tables]
    for standing, (figures, hallucination, replicate_f1) in zip(board.standings, reference, strict=True):
        _check_figures(standing.overall, figures[-1])
        assert len(standing.per_category) == len(figures) - 1
        for actual, expected in zip(standing.per_category, figures[:-1], strict=True):
            _check_figures(actual, expected)
        h = standing.hallucination
        assert all(_same(a, b) for a, b in zip((h.estimate, h.low, h.high), hallucination, strict=True))
        assert np.array_equal(standing.replicates_f1, replicate_f1, equal_nan=True)

    f1 = [figures[-1][0][2][0] for figures, _, _ in reference]
    expected_order = sorted(range(runs), key=lambda i: (np.isnan(f1[i]), 0.0 if np.isnan(f1[i]) else -f1[i], i))
    assert board.order == expected_order
    expected_pairs = []
    for i, a in enumerate(expected_order):
        for b in expected_order[i + 1 :]:
            differences = reference[a][2] - reference[b][2]
            expected_pairs.append((a, b, _interval(f1[a] - f1[b], differences), bootstrap_p_value(differences)))
    adjusted = holm_adjust([p for *_, p in expected_pairs])
    assert [(p.a, p.b) for p in board.pairs] == [(a, b) for a, b, *_ in expected_pairs]
    for pair, (_, _, interval, p), adj in zip(board.pairs, expected_pairs, adjusted, strict=True):
        assert all(_same(x, y) for x, y in zip((pair.f1.estimate, pair.f1.low, pair.f1.high), interval, strict=True))
        assert _same(pair.p_value, p) and _same(pair.p_adjusted, adj)


@pytest.mark.parametrize("scale", [1.0, 0.5, 2.0**22, 0.3])
def test_draw_sums_equal_the_sums_over_the_drawn_contracts(scale):
    # Halves within float32's exact range take the single-precision product; anything else (too large, or not
    # a multiple of 0.5) the float64 one. Both must be the sums over the drawn indices, exactly.
    from scoring.cuad.grading import draw_sums

    rng = np.random.default_rng(7)
    rows = rng.integers(0, 40, (9, 23)) * scale
    got = draw_sums(rows, 300, 5)
    expected = cluster_sums(rows.T, resample_indices(23, replicates=300, seed=5)).T
    if scale == 0.3:  # not halves: float64 sums, equal up to summation order only
        assert np.allclose(got, expected, rtol=1e-12, atol=0)
    else:
        assert np.array_equal(got, expected)
