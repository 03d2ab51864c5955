"""The leaderboard's arithmetic on random plain inputs, against a hand-written bootstrap and statsmodels' Holm.

No database: random queries with 30 candidates each, random targets, splits and families, and several rerank
runs with random P(useful) (some ungraded). Per-query values are checked against a direct computation of the
first target's rank; every pair's interval and p-value against a replicate loop on the same index matrix; the
adjusted p-values against ``statsmodels.stats.multitest.multipletests(method="holm")`` over the pairs of one
metric in one split.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from benchmarks.reports.figures import METRICS
from benchmarks.reports.inputs import (
    Candidate,
    QueryInput,
    RerankMeta,
    RerankScores,
    RetrievalMeta,
    SuiteMeta,
    rerank_apply,
)
from benchmarks.reports.leaderboard import KEYWORD, LeaderboardInputs, RerankEntry, leaderboard_compute
from scoring.stats.units import MIN_UNITS
from tests.references import multipletests
from tests.scoring.ir.test_family_bootstrap_pairs import hand_p, hand_pairs

SUITE = SuiteMeta(pk=None, name="random", version=1, corpus="nrs", sha256="0" * 64, sources_sha256="0" * 64,
                  frozen_at="2026-01-01T00:00:00", snapshots=())
RETRIEVAL = RetrievalMeta(pk=1, engine="bm25", configuration="keyword-v1", description="", k=30, passage_rule="",
                          index_documents=100, status="done", error="", candidates_sha256="0" * 64)


def random_inputs(rng: np.random.Generator, n_reranks: int, *, failed: bool = False) -> LeaderboardInputs:
    queries = []
    for q in range(int(rng.integers(8, 20))):
        docs = [f"d{int(x)}" for x in rng.choice(200, size=30, replace=False)]
        targets = tuple(d for d in docs if rng.random() < 0.08) or ((docs[int(rng.integers(0, 30))],)
                                                                      if rng.random() < 0.7 else ())
        candidates = tuple(Candidate(docid=d, provision_id=int(d[1:]), citation=d, heading="", keyword_rank=i,
                                     keyword_score=30.0 - i, via_fallback=False, passage_sha256="")
                           for i, d in enumerate(docs, start=1))
        split = "dev" if q % 2 else "heldout"
        queries.append(QueryInput(qid=f"q{q:02d}", text="", kind="ranking", split=split,
                                  family=f"{split}-{int(rng.integers(0, 4))}", targets=targets,
                                  target_citations=targets, candidates=candidates))
    entries = []
    for r in range(n_reranks):
        status = "failed" if failed and r == n_reranks - 1 else "done"
        meta = RerankMeta(pk=10 + r, provider="local", provider_label="local heuristic", model_id=f"m{r}",
                          question_version="v1", question_sha256="0" * 64, status=status)
        p_useful = {} if status == "failed" else {
            q.qid: {c.provision_id: round(float(rng.random()), 2) for c in q.candidates if rng.random() > 0.02}
            for q in queries}
        entries.append(RerankEntry(meta=meta, queries=rerank_apply(queries, RerankScores(meta, p_useful, {}))))
    return LeaderboardInputs(suite=SUITE, retrieval=RETRIEVAL, queries=tuple(queries), reranks=tuple(entries))


def _first_rank(ranked, targets):
    return next((i for i, d in enumerate(ranked, start=1) if d in targets), 0)


@pytest.mark.parametrize("case", range(6))
def test_every_pair_and_holm_p_value_matches_a_hand_bootstrap_and_statsmodels(case):
    rng = np.random.default_rng(500 + case)
    inputs = random_inputs(rng, n_reranks=int(rng.integers(2, 5)))
    replicates, seed = 200, int(rng.integers(0, 2**31))  # an exact comparison: 200 replicates suffice
    board = leaderboard_compute(inputs, replicates=replicates, seed=seed)
    keys = [s.key for s in board.systems]
    for q in board.queries:
        for key in keys:
            first = _first_rank(q.rankings[key], set(q.targets))
            assert q.values[key] == {"Hit@1": float(0 < first <= 1), "Hit@5": float(0 < first <= 5),
                                     "Hit@10": float(0 < first <= 10), "RR": 1 / first if first else 0.0}
    for split in board.splits:
        in_split = [q for q in board.queries if q.split == split.split]
        families = [q.family for q in in_split]
        if len(set(families)) < MIN_UNITS:  # the rule: no interval and no p-value, said in words
            for pair in split.pairs:
                assert not pair.difference.has_bounds and math.isnan(pair.p_value) and pair.difference.note
            continue
        for metric in METRICS:
            systems = {key: [q.values[key][metric] for q in in_split] for key in keys}
            # Listed order: keyword first, so (later, earlier) is hand_pairs' (b, a) reversed.
            reference = hand_pairs(systems, families, replicates=replicates, seed=seed)
            pairs = split.pairs_of(metric)
            assert len(pairs) == len(keys) * (len(keys) - 1) // 2
            expected_p = []
            for pair in pairs:
                diffs, point = reference[pair.b, pair.a]
                diffs, point = -diffs, -point
                low, high = np.percentile(diffs, [2.5, 97.5])
                assert pair.difference.estimate == pytest.approx(point, abs=1e-12)
                assert (pair.difference.low, pair.difference.high) == pytest.approx((low, high), abs=1e-12)
                assert pair.p_value == pytest.approx(hand_p(diffs), abs=1e-12)
                expected_p.append(hand_p(diffs))
            holm = multipletests(expected_p, method="holm")[1]
            assert [p.p_adjusted for p in pairs] == pytest.approx(list(holm), abs=1e-12)
            for row in split.rows:
                if row.system.key != KEYWORD:
                    assert row.vs_keyword[metric] == next(p for p in pairs if (p.a, p.b) == (row.system.key,
                                                                                            KEYWORD))


def test_a_failed_run_gets_no_figures_and_takes_no_part_in_the_pairs():
    inputs = random_inputs(np.random.default_rng(9), n_reranks=3, failed=True)
    board = leaderboard_compute(inputs, replicates=1000, seed=1)
    failed = board.systems[-1]
    assert not failed.has_figures and "No headline figures" in failed.withheld_reason
    for split in board.splits:
        assert [r.system.key for r in split.rows] == [s.key for s in board.systems[:-1]]
        assert all(failed.key not in (p.a, p.b) for p in split.pairs)
        assert len(split.pairs_of("Hit@5")) == 3  # keyword and two runs
    label, interval, note = board.forest_rows()[-1]
    assert label.startswith(failed.key.replace("-", " #"))
    assert interval is None and note == "no figures"

