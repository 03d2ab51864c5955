"""Outcomes, tallies, micro figures and the contract bootstrap against plain-loop references."""

from __future__ import annotations

import numpy as np
import pytest

from scoring.cuad.grading import (
    CORRECT,
    HALLUCINATED,
    INCORRECT,
    PARTIAL,
    PairTable,
    Thresholds,
    bootstrap_draws,
    classify,
    grade,
)
from scoring.cuad.pair_scores import score_contract
from scoring.cuad.tokens import token_f1, tokenize
from scoring.stats.bootstrap import cluster_sums, percentile_bounds, resample_indices


def table_from(exts, spans, n_contracts, n_categories):
    """exts: (contract, category, f1, grounding, span); spans: (contract, category)."""
    e = np.array(exts, dtype=float).reshape(-1, 5)
    s = np.array(spans, dtype=int).reshape(-1, 2)
    return PairTable(
        ext_contract=e[:, 0].astype(int),
        ext_category=e[:, 1].astype(int),
        ext_f1=e[:, 2],
        ext_grounding=e[:, 3],
        ext_span=e[:, 4].astype(int),
        span_contract=s[:, 0],
        span_category=s[:, 1],
        n_contracts=n_contracts,
        n_categories=n_categories,
    )


def random_table(rng: np.random.Generator, n_contracts=12, n_categories=4) -> PairTable:
    spans = [(int(rng.integers(n_contracts)), int(rng.integers(n_categories))) for _ in range(int(rng.integers(1, 60)))]
    free = list(range(len(spans)))
    rng.shuffle(free)
    exts = []
    for _ in range(int(rng.integers(0, 80))):
        c, k = int(rng.integers(n_contracts)), int(rng.integers(n_categories))
        candidates = [j for j in free if spans[j] == (c, k)]
        if candidates and rng.random() < 0.7:
            j = candidates[0]
            free.remove(j)
            f1 = float(np.round(rng.random(), 2))
        else:
            j, f1 = -1, 0.0
        exts.append((c, k, f1, float(np.round(rng.random(), 2)), j))
    return table_from(exts, spans, n_contracts, n_categories)


def reference_outcome(f1, ground, span, t: Thresholds):
    if ground < t.grounding:
        return HALLUCINATED, 0.0
    if span >= 0 and f1 >= t.correct:
        return CORRECT, 1.0
    if span >= 0 and f1 >= t.partial:
        return PARTIAL, 0.5
    return INCORRECT, 0.0


def test_it_classifies_each_outcome_on_a_hand_example():
    table = table_from(
        [
            (0, 0, 0.95, 1.0, 0),  # correct
            (0, 0, 0.55, 0.9, 1),  # partial
            (0, 1, 0.20, 1.0, 2),  # incorrect, its span missed
            (0, 1, 1.00, 0.5, 3),  # hallucinated despite F1 1.0
            (0, 1, 0.00, 1.0, -1),  # unmatched duplicate -> incorrect
        ],
        [(0, 0), (0, 0), (0, 1), (0, 1), (0, 1)],
        1,
        2,
    )
    result = grade(table, Thresholds(), replicates=50, seed=1)
    assert result.classified.outcome.tolist() == [CORRECT, PARTIAL, INCORRECT, HALLUCINATED, INCORRECT]
    assert result.classified.span_missed.tolist() == [False, False, True, True, True]
    counts = result.overall.counts
    assert counts == {
        "correct": 1,
        "partial": 1,
        "incorrect": 2,
        "hallucinated": 1,
        "missed": 3,
        "extractions": 5,
        "spans": 5,
    }
    assert result.overall.precision.estimate == pytest.approx(1.5 / 5)
    assert result.overall.recall.estimate == pytest.approx(1.5 / 5)
    assert result.per_category[0].precision.estimate == pytest.approx(1.5 / 2)
    assert result.per_category[1].recall.estimate == 0.0


def test_it_moves_outcomes_when_thresholds_move():
    table = table_from([(0, 0, 0.65, 0.85, 0)], [(0, 0)], 1, 1)
    assert classify(table, Thresholds()).outcome.tolist() == [PARTIAL]
    assert classify(table, Thresholds(correct=0.6)).outcome.tolist() == [CORRECT]
    assert classify(table, Thresholds(grounding=0.9)).outcome.tolist() == [HALLUCINATED]
    assert classify(table, Thresholds(partial=0.7, correct=0.7)).outcome.tolist() == [INCORRECT]


def test_it_refuses_inconsistent_thresholds_and_tables():
    with pytest.raises(ValueError, match="partial floor"):
        Thresholds(correct=0.5, partial=0.6)
    with pytest.raises(ValueError, match="one-to-one"):
        table_from([(0, 0, 1, 1, 0), (0, 0, 1, 1, 0)], [(0, 0)], 1, 1)


@pytest.mark.parametrize("seed", range(5))
def test_it_matches_reference_outcomes_and_micro_figures_on_random_tables(seed):
    rng = np.random.default_rng(seed)
    table = random_table(rng)
    t = Thresholds(correct=0.7, partial=0.4, grounding=float(np.round(rng.random(), 1)))
    result = grade(table, t, replicates=200, seed=seed)
    ref = [
        reference_outcome(f, g, s, t) for f, g, s in zip(table.ext_f1, table.ext_grounding, table.ext_span, strict=True)
    ]
    assert result.classified.outcome.tolist() == [o for o, _ in ref]
    credit = sum(c for _, c in ref)
    credited_spans = {s for (o, c), s in zip(ref, table.ext_span, strict=True) if c > 0}
    assert result.overall.counts["missed"] == len(table.span_contract) - len(credited_spans)
    n_ext, n_spans = len(ref), len(table.span_contract)
    p = credit / n_ext if n_ext else float("nan")
    r = credit / n_spans
    if n_ext:
        assert result.overall.precision.estimate == pytest.approx(p)
        expected_f1 = 0.0 if p + r == 0 else 2 * p * r / (p + r)
        assert result.overall.f1.estimate == pytest.approx(expected_f1)
    assert result.overall.recall.estimate == pytest.approx(r)
    for k, fig in enumerate(result.per_category):
        in_k = [c for (o, c), cat in zip(ref, table.ext_category, strict=True) if cat == k]
        spans_k = int((table.span_category == k).sum())
        assert fig.counts["extractions"] == len(in_k) and fig.counts["spans"] == spans_k
        if spans_k:
            assert fig.recall.estimate == pytest.approx(sum(in_k) / spans_k)


def reference_bootstrap(table: PairTable, credit: np.ndarray, *, replicates: int, seed: int, category=None):
    """Plain loop: per-contract tallies, then one replicate at a time."""
    n = table.n_contracts
    tallies = np.zeros((n, 3))
    for c, k, cr in zip(table.ext_contract, table.ext_category, credit, strict=True):
        if category is None or k == category:
            tallies[c, 0] += cr
            tallies[c, 1] += 1
    for c, k in zip(table.span_contract, table.span_category, strict=True):
        if category is None or k == category:
            tallies[c, 2] += 1
    idx = resample_indices(n, replicates=replicates, seed=seed)
    p, r, f = [], [], []
    for row in idx:
        cr, e, s = tallies[row].sum(axis=0)
        pi = cr / e if e else np.nan
        ri = cr / s if s else np.nan
        p.append(pi)
        r.append(ri)
        if np.isnan(pi) or np.isnan(ri):
            f.append(np.nan if (e + s) == 0 else 0.0 if cr == 0 else np.nan)
        else:
            f.append(0.0 if pi + ri == 0 else 2 * pi * ri / (pi + ri))
    return percentile_bounds(np.array(p)), percentile_bounds(np.array(r)), percentile_bounds(np.array(f))


@pytest.mark.parametrize("seed", range(3))
def test_the_contract_bootstrap_matches_a_plain_loop_overall_and_per_category(seed):
    rng = np.random.default_rng(100 + seed)
    table = random_table(rng)
    result = grade(table, Thresholds(), replicates=300, seed=seed)
    p, r, f = reference_bootstrap(table, result.classified.credit, replicates=300, seed=seed)
    o = result.overall
    assert [o.precision.low, o.precision.high] == pytest.approx(list(p), nan_ok=True)
    assert [o.recall.low, o.recall.high] == pytest.approx(list(r), nan_ok=True)
    assert [o.f1.low, o.f1.high] == pytest.approx(list(f), nan_ok=True)
    for k, fig in enumerate(result.per_category):
        p, r, _ = reference_bootstrap(table, result.classified.credit, replicates=300, seed=seed, category=k)
        assert [fig.precision.low, fig.precision.high] == pytest.approx(list(p), nan_ok=True)
        assert [fig.recall.low, fig.recall.high] == pytest.approx(list(r), nan_ok=True)


def test_the_bootstrap_is_reproducible_with_its_seed_and_moves_with_another():
    rng = np.random.default_rng(5)
    spans = [(c, 0) for c in range(30) for _ in range(3)]
    exts = [(c, 0, float(rng.random()), 1.0, 3 * c + j) for c in range(30) for j in range(3)]
    table = table_from(exts, spans, 30, 1)
    a = grade(table, Thresholds(), seed=3).overall
    b = grade(table, Thresholds(), seed=3).overall
    c = grade(table, Thresholds(), seed=4).overall
    assert a == b
    assert (a.f1.low, a.f1.high) != (c.f1.low, c.f1.high)


def test_the_count_form_of_the_draws_equals_cluster_sums():
    values = np.random.default_rng(0).random((17, 5))
    indices, counts = bootstrap_draws(17, 400, 9)
    assert np.allclose(counts @ values, cluster_sums(values, indices))
    assert counts.sum(axis=1).tolist() == [17.0] * 400


def test_it_scores_a_contract_with_both_matchers_and_grounding():
    text = "Licensee shall not assign this Agreement. This Agreement is governed by the laws of Delaware."
    spans = [(0, "Licensee shall not assign this Agreement."), (1, "governed by the laws of Delaware")]
    extractions = [
        (0, "Licensee shall not assign this Agreement."),
        (1, "laws of Delaware"),
        (1, "the moon shall pay royalties to Mars"),
        (0, "Licensee shall not assign this Agreement."),
    ]
    scores = score_contract(text, extractions, spans)
    assert scores.grounding.tolist() == [1.0, 1.0, 0.0, 1.0]
    assert scores.matched_span["hungarian"].tolist() == [0, 1, -1, -1]
    assert scores.matched_f1["hungarian"][1] == pytest.approx(
        token_f1(tokenize("laws of Delaware"), tokenize(spans[1][1]))
    )
    assert scores.matched_span["greedy"].tolist() == [0, 1, -1, -1]
    assert scores.best_f1[3] == 1.0 and scores.best_span[3] == 0


@pytest.mark.parametrize("seed", range(4))
def test_column_percentile_bounds_equal_percentile_bounds_of_each_column(seed):
    from scoring.stats.bootstrap import percentile_bounds_columns

    rng = np.random.default_rng(seed)
    values = rng.random((int(rng.integers(1, 400)), int(rng.integers(1, 12))))
    values[rng.random(values.shape) < 0.02] = np.nan  # some columns carry NaN replicates
    values[:, 0] = np.nan  # and one has nothing else
    low, high = percentile_bounds_columns(values)
    for k in range(values.shape[1]):
        expected = percentile_bounds(values[:, k])
        assert (low[k], high[k]) == pytest.approx(expected, rel=0, abs=0, nan_ok=True)
