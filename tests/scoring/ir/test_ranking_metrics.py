"""Hit@k, RR, judged P@5 and pooled nDCG@5 against ir_measures (pytrec_eval) on random runs and qrels.

Mapping to ir_measures, made exact on purpose:
- Order: ir_measures (trec_eval) ranks by score descending, ties by docid
  descending, ignoring the rank column. Random scores here are small integers,
  so ties are frequent; our lists come from ``ranked_docids`` (the same rule).
- Targets = documents with qrels relevance >= 1 (trec_eval's default level).
- Queries in the qrels but absent from the run: ir_measures reports 0 for them,
  as we do for an empty list. Queries with no relevant document: 0 both sides.
- Judged P@5 = ir_measures ``P(rel=2)@5`` whenever ours is defined (all five
  results judged); trec_eval would also score unjudged results as
  non-relevant, which we refuse, hence the "defined" condition.
- Pooled nDCG@5 = ir_measures ``nDCG@5`` with qrels restricted to the
  declared pool's grades, whenever ours is defined.
"""

from __future__ import annotations

import math

import ir_measures
import numpy as np
import pytest
from ir_measures import RR, P, Qrel, ScoredDoc, Success, nDCG

from scoring.ir.ranking import (
    hit_at_k,
    judged_precision_at_5,
    pooled_ndcg_at_5,
    query_ranking_metrics,
    reciprocal_rank,
    target_coverage,
)
from scoring.ir.trec_io import RunRow, ranked_docids

N_CASES = 400
DOCS = [f"d{i:02d}" for i in range(40)]


def _random_case(rng: np.random.Generator, case: int):
    """Run rows and qrels for a few queries; ties, short runs and queries without relevant docs included."""
    rows: dict[str, list[RunRow]] = {}
    qrels: dict[str, dict[str, int]] = {}
    for q in range(int(rng.integers(1, 6))):
        qid = f"c{case}q{q}"
        length = int(rng.integers(0, 16))
        docs = list(rng.choice(DOCS, size=length, replace=False))
        rows[qid] = [RunRow(qid, d, rank + 1, float(rng.integers(0, 6)), "t") for rank, d in enumerate(docs)]
        judged = set(rng.choice(DOCS, size=int(rng.integers(1, 20)), replace=False))
        if rng.random() < 0.6:
            judged |= set(docs[: int(rng.integers(4, 8))])  # often the whole top 5 is judged
        kind = rng.random()
        qrels[qid] = {d: (0 if kind < 0.15 else int(rng.choice([0, 0, 1, 2, 3]))) for d in sorted(judged)}
        if not rows[qid] or rng.random() < 0.05:
            rows.pop(qid)  # a qrels query the run never answered
    return rows, qrels


def _ir_measures_values(measures, qrels, rows):
    ir_qrels = [Qrel(q, d, r) for q, judged in qrels.items() for d, r in judged.items()]
    ir_run = [ScoredDoc(row.qid, row.docid, row.score) for query_rows in rows.values() for row in query_rows]
    values: dict[tuple[str, str], float] = {}
    for metric in ir_measures.iter_calc(measures, ir_qrels, ir_run):
        values[(metric.query_id, str(metric.measure))] = metric.value
    return values


@pytest.fixture(scope="module")
def random_cases():
    rng = np.random.default_rng(7)
    rows: dict[str, list[RunRow]] = {}
    qrels: dict[str, dict[str, int]] = {}
    for case in range(N_CASES):
        case_rows, case_qrels = _random_case(rng, case)
        rows.update(case_rows)
        qrels.update(case_qrels)
    return rows, qrels


def test_hit_at_k_and_rr_equal_ir_measures_success_and_rr_on_hundreds_of_random_queries(random_cases):
    rows, qrels = random_cases
    measures = [Success @ 1, Success @ 5, Success @ 10, RR]
    reference = _ir_measures_values(measures, qrels, rows)
    compared = 0
    for qid, judged in qrels.items():
        targets = {d for d, rel in judged.items() if rel >= 1}
        ranked = ranked_docids(rows.get(qid, []))
        ours = query_ranking_metrics(ranked, targets)
        assert ours.hit_at_1 == reference[(qid, "Success@1")]
        assert ours.hit_at_5 == reference[(qid, "Success@5")]
        assert ours.hit_at_10 == reference[(qid, "Success@10")]
        assert math.isclose(ours.reciprocal_rank, reference[(qid, "RR")], rel_tol=1e-12, abs_tol=1e-15)
        compared += 1
    assert compared > 1000
    # The random data exercise the awkward conventions, not only easy queries.
    assert any(not any(r >= 1 for r in j.values()) for j in qrels.values())
    assert any(qid not in rows for qid in qrels)
    assert any(0 < len(r) < 5 for r in rows.values())
    assert any(len({row.score for row in r}) < len(r) for r in rows.values())


def test_judged_p_at_5_equals_ir_measures_p_rel2_at_5_whenever_all_five_are_judged(random_cases):
    rows, qrels = random_cases
    reference = _ir_measures_values([P(rel=2) @ 5], qrels, rows)
    defined = excluded = 0
    for qid, judged in qrels.items():
        ranked = ranked_docids(rows.get(qid, []))
        ours = judged_precision_at_5(ranked, judged)
        if ours is None:
            excluded += 1
            assert len(ranked) < 5 or any(d not in judged for d in ranked[:5])
            continue
        defined += 1
        assert math.isclose(ours, reference[(qid, "P(rel=2)@5")], rel_tol=1e-12)
    assert defined >= 100
    assert excluded >= 100


def test_pooled_ndcg_at_5_equals_ir_measures_ndcg_at_5_on_the_judged_pool():
    rng = np.random.default_rng(11)
    rows: dict[str, list[RunRow]] = {}
    pool_qrels: dict[str, dict[str, int]] = {}
    ours: dict[str, float] = {}
    for case in range(600):
        qid = f"q{case}"
        length = int(rng.integers(1, 12))
        docs = list(rng.choice(DOCS, size=length, replace=False))
        rows[qid] = [RunRow(qid, d, i + 1, float(rng.integers(0, 4)), "t") for i, d in enumerate(docs)]
        ranked = ranked_docids(rows[qid])
        other = list(rng.choice(DOCS, size=5, replace=False))
        pool = set(ranked[:5]) | set(other)  # union of two systems' top 5, as the review pool is declared
        all_zero = rng.random() < 0.1
        labels = {d: 0 if all_zero else int(rng.integers(0, 4)) for d in pool}
        value = pooled_ndcg_at_5(ranked, pool, labels)
        assert value is not None
        ours[qid] = value
        pool_qrels[qid] = labels
    reference = _ir_measures_values([nDCG @ 5], pool_qrels, rows)
    for qid, value in ours.items():
        assert math.isclose(value, reference[(qid, "nDCG@5")], rel_tol=1e-12, abs_tol=1e-15)
    assert any(v == 0.0 for v in ours.values())


def test_an_unjudged_pool_member_makes_ndcg_excluded_and_never_changes_other_values():
    ranked = ["a", "b", "c", "d", "e", "f"]
    pool = ["a", "b", "c", "d", "e", "x"]
    labels = {"a": 3, "b": 0, "c": 2, "d": 1, "e": 0, "x": 3}
    full = pooled_ndcg_at_5(ranked, pool, labels)
    assert full is not None
    assert pooled_ndcg_at_5(ranked, pool, {**labels, "x": None}) is None
    assert pooled_ndcg_at_5(ranked, pool, {k: v for k, v in labels.items() if k != "x"}) is None
    # A judgment outside the pool and beyond rank 5 changes nothing.
    assert pooled_ndcg_at_5(ranked, pool, {**labels, "f": 3}) == full
    # A top-5 result outside the declared pool has no usable grade: excluded.
    assert pooled_ndcg_at_5(["z", *ranked], pool, {**labels, "z": 3}) is None


def test_an_unjudged_result_below_rank_5_changes_nothing_and_in_the_top_5_excludes_the_query():
    ranked = ["a", "b", "c", "d", "e", "f"]
    labels = {"a": 3, "b": 0, "c": 2, "d": 1, "e": 2}
    assert judged_precision_at_5(ranked, labels) == pytest.approx(3 / 5)
    assert judged_precision_at_5(ranked, {**labels, "f": None}) == pytest.approx(3 / 5)
    assert judged_precision_at_5(ranked, {**labels, "c": None}) is None
    assert judged_precision_at_5(ranked[:4], labels) is None


def test_reciprocal_rank_is_zero_when_no_target_is_in_the_list_and_coverage_counts_targets_in_the_pool():
    assert reciprocal_rank(["a", "b"], {"z"}) == 0.0
    assert reciprocal_rank(["a", "b", "z"], {"z", "b"}) == pytest.approx(0.5)
    assert hit_at_k(["a", "b"], {"b"}, 10) == 1
    assert target_coverage(["a", "b", "c"], {"a", "z"}) == pytest.approx(0.5)
    assert target_coverage(["a"], set()) is None


def test_a_ranked_list_with_a_repeated_document_is_refused():
    with pytest.raises(ValueError, match="'a' appears twice"):
        hit_at_k(["a", "b", "a"], {"a"}, 5)


def test_grades_outside_0_to_3_are_refused():
    with pytest.raises(ValueError, match="grade must be one of"):
        judged_precision_at_5(["a", "b", "c", "d", "e"], dict.fromkeys("abcde", 4))
