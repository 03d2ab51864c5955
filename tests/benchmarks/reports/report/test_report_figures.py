"""The report's figures against independent references, on random inputs (no database).

- Per-query Hit@k and RR of both systems equal ir_measures (Success@k, RR) run on
  the report's own exported TREC run and qrels files.
- Every interval equals scoring's paired family bootstrap fed with
  ir_measures' per-query values.
- Failures and fallbacks stay in the population; every export parses.
"""

from __future__ import annotations

import csv
import io
import json
from dataclasses import replace

import ir_measures
import numpy as np
import pytest
from ir_measures import RR, Success

from benchmarks.reports.exports.report import (
    report_as_json,
    report_csv,
    report_families,
    report_trec_qrels,
    report_trec_run,
)
from benchmarks.reports.figures import METRICS, report_compute
from benchmarks.reports.inputs import (
    Candidate,
    QueryInput,
    ReportInputs,
    RerankMeta,
    RetrievalMeta,
    SuiteMeta,
    reranked_order,
)
from benchmarks.reports.params import ReportParameterError, report_parameters
from scoring.ir.family_bootstrap import family_bootstrap, paired_family_bootstrap
from scoring.ir.trec_evaluation import parse_families
from scoring.ir.trec_io import parse_qrels, parse_run

MEASURES = {"Hit@1": Success @ 1, "Hit@5": Success @ 5, "Hit@10": Success @ 10, "RR": RR}
SUITE = SuiteMeta(1, "random", 1, "nrs", "a" * 64, "b" * 64, "2026-09-20T00:00:00+00:00", (("NRS-001.html", "c" * 64),))
RETRIEVAL = RetrievalMeta(7, "sqlite-fts5", "keyword-v1", "", 30, "passage-v1", 300, "done", "", "d" * 64)
SECONDARY = RetrievalMeta(8, "sqlite-fts5", "heading-v1", "", 30, "passage-v1", 300, "done", "", "e" * 64)
RERANK = RerankMeta(3, "local", "local heuristic", "minilm", "statute-relevance-v1", "f" * 64, "done")


def _candidates(rng: np.random.Generator, qid: int, n: int, *, graded: bool) -> tuple[Candidate, ...]:
    docs = rng.choice(60, size=n, replace=False)
    out = []
    for rank, d in enumerate(docs, start=1):
        # Few distinct probabilities, so P(useful) ties (broken by keyword rank) are common.
        p = float(rng.choice([0.05, 0.3, 0.3, 0.8, 0.95])) if graded and rng.random() > 0.1 else None
        out.append(Candidate(docid=f"NRS_{qid}.{d}", provision_id=int(d), citation=f"NRS {qid}.{d}", heading="h",
                             keyword_rank=rank, keyword_score=float(100 - rank), via_fallback=rank > 20,
                             passage_sha256="0" * 64, p_useful=p))
    return tuple(out)


def random_inputs(seed: int, *, rerank: bool = True, secondary: bool = False) -> ReportInputs:
    rng = np.random.default_rng(seed)
    queries, secondary_queries = [], []
    for i in range(int(rng.integers(4, 31))):
        split = "dev" if i % 3 == 0 else "heldout"
        family = f"{split}-fam{int(rng.integers(0, 4))}"
        status = str(rng.choice(["ok", "fallback", "fallback", "short", "failed"]))
        n = 0 if status == "failed" else int(rng.integers(1, 30)) if status == "short" else 30
        rerank_state = str(rng.choice(["ok", "ok", "ok", "failed"]))
        candidates = _candidates(rng, i, n, graded=rerank and rerank_state == "ok")
        pool = [c.docid for c in candidates]
        targets = list(rng.choice(pool, size=min(len(pool), int(rng.integers(0, 3))), replace=False)) if pool else []
        if rng.random() < 0.3:
            targets.append(f"NRS_{i}.absent")  # a nominated target the pool missed
        graded = sum(c.p_useful is not None for c in candidates)
        queries.append(QueryInput(
            qid=f"q{i:02d}", text=f"question {i}", kind="ranking", split=split, family=family,
            targets=tuple(targets), target_citations=tuple(t.replace("_", " ") for t in targets),
            candidates=candidates, retrieval_status=status, fallback_used=status in {"fallback", "short"},
            retrieval_error="no provision matched" if status == "failed" else "",
            rerank_status=("ok" if graded == len(candidates) else "partial" if graded else "failed") if rerank
            else "not run",
        ))
        if secondary:
            secondary_queries.append(replace_candidates(queries[-1], _candidates(rng, i, 30, graded=False)))
    queries.append(QueryInput(qid="oc1", text="outside", kind="outside_corpus", split="", family="oc1", targets=(),
                              target_citations=(), candidates=_candidates(rng, 99, 30, graded=rerank),
                              rerank_status="ok" if rerank else "not run"))
    queries.append(QueryInput(qid="ec1", text="NRS 1.010", kind="exact_citation", split="", family="ec1",
                              targets=(), target_citations=(),
                              candidates=(Candidate("NRS_1.010", 1, "NRS 1.010", "h", 1, 1.0, False, "0" * 64),),
                              retrieval_status="resolved", method="citation-parser", parsed_citation="NRS 1.010",
                              expected_citation="NRS 1.010"))
    return ReportInputs(suite=SUITE, retrieval=RETRIEVAL, queries=tuple(queries), rerank=RERANK if rerank else None,
                        secondary=SECONDARY if secondary else None, secondary_queries=tuple(secondary_queries))


def replace_candidates(query: QueryInput, candidates: tuple[Candidate, ...]) -> QueryInput:
    return replace(query, candidates=candidates)


def _ir_measures_per_query(qrels_text: str, run_text: str, qids: list[str]) -> dict[str, dict[str, float]]:
    qrels = list(ir_measures.read_trec_qrels(io.StringIO(qrels_text))) if qrels_text else []
    run = list(ir_measures.read_trec_run(io.StringIO(run_text))) if run_text else []
    out = {qid: dict.fromkeys(METRICS, 0.0) for qid in qids}  # a query ir_measures skips scores 0 for us
    if qrels and run:
        names = {v: k for k, v in MEASURES.items()}
        for metric in ir_measures.iter_calc(list(MEASURES.values()), qrels, run):
            out[metric.query_id][names[metric.measure]] = metric.value
    return out


@pytest.mark.parametrize("seed", range(40))
def test_per_query_figures_equal_ir_measures_on_the_exported_trec_files(seed):
    report = report_compute(random_inputs(seed, secondary=seed % 2 == 0), replicates=1000, seed=seed)
    qids = [r.query.qid for r in report.queries]
    qrels = report_trec_qrels(report)
    systems = ["keyword", "reranked"] + (["secondary"] if seed % 2 == 0 else [])
    for system in systems:
        reference = _ir_measures_per_query(qrels, report_trec_run(report, system=system), qids)
        for row in report.queries:
            ours = getattr(row, system)
            for metric in METRICS:
                assert ours[metric] == pytest.approx(reference[row.query.qid][metric]), (system, row.query.qid, metric)


@pytest.mark.parametrize("seed", range(12))
def test_every_interval_equals_grading_scorings_bootstrap_of_ir_measures_values(seed):
    replicates, boot_seed = 2000, 1000 + seed
    report = report_compute(random_inputs(seed, secondary=True), replicates=replicates, seed=boot_seed)
    qrels = report_trec_qrels(report)
    qids = [r.query.qid for r in report.queries]
    reference = {s: _ir_measures_per_query(qrels, report_trec_run(report, system=s), qids)
                 for s in ("keyword", "reranked", "secondary")}
    for split in report.splits:
        rows = [r for r in report.queries if r.query.split == split.split]
        assert split.queries == len(rows)
        if not rows:
            continue
        families = [r.query.family for r in rows]
        for metric in METRICS:
            expected = paired_family_bootstrap(
                [reference["reranked"][r.query.qid][metric] for r in rows],
                [reference["keyword"][r.query.qid][metric] for r in rows],
                families, replicates=replicates, seed=boot_seed,
            )
            got = split.row(metric)
            for mine, theirs in ((got.keyword, expected.b), (got.reranked, expected.a),
                                 (got.difference, expected.difference)):
                assert (mine.estimate, mine.low, mine.high) == pytest.approx((theirs.estimate, theirs.low, theirs.high),
                                                                           nan_ok=True)
        coverage = family_bootstrap([r.coverage for r in rows], families, replicates=replicates, seed=boot_seed)
        assert split.coverage.note == coverage.interval.note
        assert split.coverage.as_list() == pytest.approx(coverage.interval.as_list(), nan_ok=True)
        secondary = next(s for s in report.secondary_splits if s.split == split.split)
        for metric in METRICS:
            expected_single = family_bootstrap([reference["secondary"][r.query.qid][metric] for r in rows], families,
                                               replicates=replicates, seed=boot_seed)
            assert secondary.means[metric].estimate == pytest.approx(expected_single.interval.estimate)
            assert secondary.means[metric].as_list() == pytest.approx(expected_single.interval.as_list(), nan_ok=True)


def test_without_a_rerank_run_the_keyword_intervals_are_single_system_bootstraps():
    report = report_compute(random_inputs(3, rerank=False), replicates=1000, seed=5)
    for split in report.splits:
        rows = [r for r in report.queries if r.query.split == split.split]
        for metric in METRICS:
            expected = family_bootstrap([r.keyword[metric] for r in rows], [r.query.family for r in rows],
                                        replicates=1000, seed=5)
            assert split.row(metric).keyword == expected.interval
            assert split.row(metric).reranked is None and split.row(metric).difference is None
    with pytest.raises(ValueError, match="no 'reranked' system"):
        report_trec_run(report, system="reranked")


def test_the_reranked_order_is_p_useful_descending_ties_by_keyword_rank_and_ungraded_last():
    def c(rank, p):
        return Candidate(f"d{rank}", rank, f"d{rank}", "", rank, 0.0, False, "", p)

    ranked = reranked_order([c(1, 0.2), c(2, None), c(3, 0.9), c(4, 0.2), c(5, 0.9), c(6, None)])
    assert [x.keyword_rank for x in ranked] == [3, 5, 1, 4, 2, 6]
    assert [x.keyword_rank for x in reranked_order([c(1, None), c(2, None)])] == [1, 2]


def test_failed_reranks_fallbacks_and_short_pools_stay_in_the_comparison_and_are_listed():
    inputs = random_inputs(11)
    queries = list(inputs.queries)
    # Make sure one query's rerank failed entirely (no candidate graded).
    index = next(i for i, q in enumerate(queries) if q.kind == "ranking" and q.candidates)
    queries[index] = replace(queries[index], rerank_status="failed", rerank_error="HTTP 500",
                             candidates=tuple(replace(c, p_useful=None) for c in queries[index].candidates))
    inputs = replace(inputs, queries=tuple(queries))
    report = report_compute(inputs, replicates=1000, seed=1)
    ranking = [q for q in inputs.queries if q.kind == "ranking"]
    assert len(report.queries) == len(ranking)
    assert sum(s.queries for s in report.splits) == len(ranking)
    listed = {(f.qid, f.stage) for f in report.failures}
    for q in ranking:
        if q.rerank_status != "ok":
            assert (q.qid, "rerank") in listed
        if q.retrieval_status in {"failed", "short"}:
            assert (q.qid, "retrieval") in listed
        if q.fallback_used:
            assert q.qid in {f.qid for f in report.fallbacks}
    failed = [r for r in report.queries if r.query.rerank_status == "failed" and r.query.candidates]
    assert failed, "the random suite should contain a failed rerank"
    for row in failed:  # nothing graded: the reranked order is the keyword order, and it is scored
        assert [c.docid for c in row.reranked_ranked] == [c.docid for c in row.keyword_ranked]
        assert row.reranked == row.keyword


def test_coverage_is_the_same_for_both_systems_and_counts_targets_missing_from_the_pool():
    report = report_compute(random_inputs(5), replicates=1000, seed=1)
    for row in report.queries:
        if row.query.targets:
            present = {c.docid for c in row.keyword_ranked}
            assert row.coverage == pytest.approx(sum(t in present for t in row.query.targets) / len(row.query.targets))
            assert len(row.missing_targets) == sum(t not in present for t in row.query.targets)


def test_outside_corpus_controls_flag_p_useful_at_or_above_the_diagnostic_threshold():
    report = report_compute(random_inputs(2), replicates=1000, seed=1)
    (control,) = report.outside_controls
    for t in control.top:
        assert t.flagged == (t.p_useful is not None and t.p_useful >= 0.8)
    (exact,) = report.exact_controls
    assert exact.resolved and exact.matches_expected


def test_every_export_parses():
    report = report_compute(random_inputs(8, secondary=True), replicates=1000, seed=1)
    data = json.loads(json.dumps(report_as_json(report), allow_nan=False))
    assert data["bootstrap"]["replicates"] == 1000 and data["bootstrap"]["seed"] == 1
    assert [q["qid"] for q in data["queries"]] == [r.query.qid for r in report.queries]
    lines = report_csv(report).splitlines(keepends=True)
    assert not report.coverage.complete  # some reranks failed: the banner comes first, as comment lines
    assert lines[0] == f"# {report.coverage.headline_label}\n" and lines[1].startswith("# This report is built")
    rows = list(csv.DictReader(line for line in lines if not line.startswith("#")))
    assert [r["qid"] for r in rows] == [r.query.qid for r in report.queries]
    assert {f"reranked_{m}" for m in METRICS} <= set(rows[0])
    for system in ("keyword", "reranked", "secondary"):
        parsed = parse_run(report_trec_run(report, system=system).splitlines(), source=system)
        for run_rows in parsed.values():
            assert [r.rank for r in run_rows] == list(range(1, len(run_rows) + 1))
            assert [r.score for r in run_rows] == sorted((r.score for r in run_rows), reverse=True)
    assert parse_qrels(report_trec_qrels(report).splitlines())
    assert set(parse_families(report_families(report).splitlines())) == {r.query.qid for r in report.queries}


@pytest.mark.parametrize(("kwargs", "message"), [
    ({"replicates": 10}, "replicates must be between 1,000 and 100,000"),
    ({"replicates": 10**7}, "replicates must be between"),
    ({"replicates": "many"}, "replicates must be a whole number"),
    ({"seed": -1}, "seed must be between 0 and"),
    ({"seed": 2**40}, "seed must be between 0 and"),
])
def test_absurd_bootstrap_settings_are_refused_with_a_message(kwargs, message):
    with pytest.raises(ReportParameterError, match=message):
        report_parameters(**kwargs)
    with pytest.raises(ReportParameterError, match=message):
        report_compute(random_inputs(1), **kwargs)
