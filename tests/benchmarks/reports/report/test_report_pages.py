"""The report of a stored (suite, retrieval run, rerank run): adapter, page, exports, API, permissions."""

from __future__ import annotations

import csv
import io
import json
import re

import ir_measures
import pytest
from django.utils.html import escape
from ir_measures import RR, Success

from benchmarks.reports.figures import METRICS
from benchmarks.reports.selectors import report_build, rerank_scores_load, secondary_run_default
from tests.benchmarks.conftest import freeze_suite, import_synthetic

WORDS = ["tenant", "landlord", "deposit", "court", "guardian", "child", "notice", "hearing", "appeal", "fee",
         "record", "agency", "report", "custody", "petition", "order", "judge", "filing", "service", "lien"]
# Three families per split (q0-q1 share the first): the fewest that carry an interval (scoring.stats.units).
FAMILIES = [{"id": "dev-a", "split": "dev"}, {"id": "dev-b", "split": "dev"}, {"id": "dev-c", "split": "dev"},
            {"id": "ho-a", "split": "heldout"}, {"id": "ho-b", "split": "heldout"}, {"id": "ho-c", "split": "heldout"}]
FAMILY_OF_QUERY = [0, 0, 1, 2, 3, 3, 4, 5]
QS = "?replicates=1000&seed=7"


def _stored_report_inputs(*, families=None, family_of_query=None, n_queries: int = 8):
    """A synthetic chapter, a two-split suite, keyword and heading retrieval runs, and a rerank run with failures.

    ``families`` / ``family_of_query`` (one family index per query) change how the queries are grouped."""
    families = families or FAMILIES
    family_of_query = family_of_query or FAMILY_OF_QUERY
    import random

    from benchmarks.rerank.models import RerankGrade, RerankRun
    from benchmarks.retrieval.models import RetrievalCandidate
    from benchmarks.retrieval.services import retrieval_run_create
    from benchmarks.suites.models import QueryKind
    from reviewapp.providers.models import Ledger

    rng = random.Random(3)
    rows = []
    for i in range(50):
        heading = " ".join(rng.sample(WORDS, 3)).capitalize() + "."
        rows.append((f"999.{100 + i * 10}", heading, " ".join(rng.choice(WORDS) for _ in range(40)) + "."))
    import_synthetic(rows, key="report-synthetic.html")
    queries = []
    for i in range(n_queries):
        family = families[family_of_query[i]]
        queries.append({"id": f"q{i}", "kind": "ranking", "split": family["split"], "family": family["id"],
                        "text": f"When must the {WORDS[i % 11]} give {WORDS[i % 11 + 5]} notice to the "
                                f"{WORDS[i % 11 + 9]}?" + (f" (case {i})" if i >= 11 else ""),
                        "targets": [f"NRS {rows[i % 20][0]}", f"NRS {rows[i % 20 + 20][0]}"]})
    queries.append({"id": "oc1", "kind": "outside_corpus", "text": "What fee applies to a gasoline tax appeal?"})
    queries.append({"id": "ec1", "kind": "exact_citation", "text": f"NRS {rows[0][0]}",
                    "expected_citation": f"NRS {rows[0][0]}"})
    suite = freeze_suite(queries, name="report-synthetic", families=families)
    # keyword-v1 as the primary run: these expectations were written for it, and the automatic secondary
    # baseline (reports.selectors.secondary_run_default) is looked up on the primary run's engine.
    run = retrieval_run_create(suite=suite, configuration="keyword-v1", k=30)
    secondary = retrieval_run_create(suite=suite, configuration="heading-v1", k=30)
    assert run.status == "done" and secondary.status == "done"

    ledger = Ledger.objects.create(purpose="tests", provider="local", model_id="minilm", max_requests=272,
                                   max_input_tokens=2_000_000)
    rerank = RerankRun.objects.create(
        suite=suite, retrieval_run=run, ledger=ledger, provider="local", model_id="minilm", method="local",
        question_version="statute-relevance-v1", question_sha256="0" * 64, status="done")
    candidates = (RetrievalCandidate.objects.filter(result__run=run, result__query__kind__in=[
        QueryKind.RANKING, QueryKind.OUTSIDE_CORPUS]).select_related("result__query").order_by("id"))
    grades = []
    for n, cand in enumerate(candidates):
        qid = cand.result.query.qid
        common = {"run": rerank, "query": cand.result.query, "candidate": cand, "request_index": n // 4,
                  "position_in_request": n % 4 + 1, "request_key": f"k{n // 4}"}
        p = 0.9 if (qid == "oc1" and cand.rank == 3) else round(((cand.rank * 37) % 30) / 40, 3)
        if qid == "q0":  # the whole query failed
            grades.append(RerankGrade(**common, status="failed", error="HTTP 500 from provider"))
        elif qid == "q5" and cand.rank <= 4:  # partly: one unknown, the rest never sent
            if cand.rank == 1:
                grades.append(RerankGrade(**common, status="unknown", error="sent, no answer"))
        elif qid == "q1" and cand.rank == 2:  # failed first, graded on the re-attempt: the latest attempt counts
            grades.append(RerankGrade(**common, status="failed", error="timeout"))
            grades.append(RerankGrade(**{**common, "attempt": 2}, status="graded", p_useful=0.99))
        else:
            grades.append(RerankGrade(**common, status="graded", p_useful=p))
    RerankGrade.objects.bulk_create(grades)
    return {"suite": suite, "run": run, "secondary": secondary, "rerank": rerank}


@pytest.fixture
def stored(db):
    return _stored_report_inputs()


def _url(stored, suffix: str = "") -> str:
    return f"/benchmarks/reports/rerank/{stored['rerank'].pk}/{suffix}"


def test_the_adapter_reads_the_latest_attempt_and_discloses_failed_and_partial_queries(stored):
    scores, run = rerank_scores_load(pk=stored["rerank"].pk)
    assert run == stored["run"]
    report = report_build(run=run, rerank=scores, replicates=1000, seed=1)
    by_qid = {r.query.qid: r for r in report.queries}
    assert by_qid["q0"].query.rerank_status == "failed" and "HTTP 500" in by_qid["q0"].query.rerank_error
    assert by_qid["q5"].query.rerank_status == "partial"
    assert "1 unknown" in by_qid["q5"].query.rerank_error and "never sent" in by_qid["q5"].query.rerank_error
    assert by_qid["q1"].query.rerank_status == "ok"
    assert by_qid["q1"].reranked_ranked[0].p_useful == 0.99 and by_qid["q1"].reranked_ranked[0].keyword_rank == 2
    failed = {(f.qid, f.stage) for f in report.failures}
    assert {("q0", "rerank"), ("q5", "rerank")} <= failed
    assert ("q1", "rerank") not in failed
    # Failed queries stay in the population: 4 per split.
    assert [s.queries for s in report.splits] == [4, 4]
    (control,) = report.outside_controls
    assert control.flagged == 1 and control.top[0].p_useful == 0.9 and control.top[0].flagged


def test_a_stakeholder_reads_the_primary_endpoint_with_population_and_caveats_next_to_it(stakeholder_client, stored):
    response = stakeholder_client.get(_url(stored) + QS)
    assert response.status_code == 200
    html = response.content.decode()
    headline = re.search(r'<section id="headline".*?</section>', html, re.S).group(0)
    report = report_build(run=stored["run"], rerank=rerank_scores_load(pk=stored["rerank"].pk)[0],
                          secondary=secondary_run_default(run=stored["run"]), replicates=1000, seed=7)
    assert escape(report.population) in headline
    assert "of 8 ranking queries (4 development, 4 held-out)" in headline
    assert "not a lawyer" in headline and "not generalisation" in headline
    for caveat in report.caveats:
        assert escape(caveat) in headline
    primary = report.primary
    assert 'id="primary-endpoint"' in headline
    assert f"{primary.keyword.estimate:.3f}" in headline and f"{primary.reranked.estimate:.3f}" in headline
    assert "1000</strong> replicates, seed <strong>7" in headline
    assert "<svg" in headline and "primary endpoint" in headline
    failures = re.search(r'<section id="failures".*?</section>', html, re.S).group(0)
    assert "q0" in failures and "q5" in failures and "HTTP 500" in failures
    assert 'id="reproducibility"' in html and stored["suite"].sha256 in html and "minilm" in html


def test_reviewers_get_403_on_every_report_page_export_and_api(reviewer_client, client, stored):
    urls = ["/benchmarks/reports/", _url(stored), _url(stored, "report.json"), _url(stored, "keyword.run"),
            f"/benchmarks/reports/retrieval/{stored['run'].pk}/",
            f"/api/v1/benchmarks/reports/rerank/{stored['rerank'].pk}/",
            f"/api/v1/benchmarks/reports/retrieval/{stored['run'].pk}/"]
    for url in urls:
        assert reviewer_client.get(url).status_code == 403, url
    assert client.get(_url(stored)).status_code == 302  # anonymous: to the login page
    assert client.get(f"/api/v1/benchmarks/reports/rerank/{stored['rerank'].pk}/").status_code in (401, 403)


def test_the_exports_parse_and_the_trec_files_agree_with_the_json_under_ir_measures(stakeholder_client, stored):
    data = json.loads(stakeholder_client.get(_url(stored, "report.json") + QS).content)
    api = stakeholder_client.get(f"/api/v1/benchmarks/reports/rerank/{stored['rerank'].pk}/" + QS).json()
    # The same report, but for the held-out ledger block: the API read is the second held-out computation.
    assert api.pop("heldout_exposure")["times"] == data.pop("heldout_exposure")["times"] + 1
    assert api == data
    assert data["bootstrap"] == {"replicates": 1000, "seed": 7, "level": 0.95, "unit": "query family",
                                 "method": "paired percentile"}
    qrels = list(ir_measures.read_trec_qrels(io.StringIO(stakeholder_client.get(_url(stored, "qrels.txt")).content
                                                          .decode())))
    measures = {Success @ 1: "Hit@1", Success @ 5: "Hit@5", Success @ 10: "Hit@10", RR: "RR"}
    for system in ("keyword", "reranked", "secondary"):
        response = stakeholder_client.get(_url(stored, f"{system}.run"))
        assert response.status_code == 200 and "attachment" in response["Content-Disposition"]
        run = list(ir_measures.read_trec_run(io.StringIO(response.content.decode())))
        reference = {(m.query_id, measures[m.measure]): m.value
                     for m in ir_measures.iter_calc(list(measures), qrels, run)}
        for q in data["queries"]:
            for metric in METRICS:
                assert q["metrics"][system][metric] == pytest.approx(reference.get((q["qid"], metric), 0.0))
    lines = stakeholder_client.get(_url(stored, "queries.csv")).content.decode().splitlines(keepends=True)
    # The run is partial: its banner comes first, as comment lines.
    assert lines[0] == "# incomplete: 6 of 8 queries reranked\n" and lines[1].startswith("# This report is built")
    rows = list(csv.DictReader(line for line in lines if not line.startswith("#")))
    assert [r["qid"] for r in rows] == [q["qid"] for q in data["queries"]]
    assert {r["qid"]: r["rerank_status"] for r in rows}["q0"] == "failed"
    families = stakeholder_client.get(_url(stored, "families.txt")).content.decode().split()
    assert families[:2] == ["q0", "dev-a"]


def test_absurd_bootstrap_settings_get_a_message_not_a_report(stakeholder_client, stored):
    response = stakeholder_client.get(_url(stored) + "?replicates=50")
    assert response.status_code == 400
    assert "replicates must be between 1,000 and 100,000" in response.content.decode()
    api = stakeholder_client.get(f"/api/v1/benchmarks/reports/rerank/{stored['rerank'].pk}/?seed=-4")
    assert api.status_code == 400 and "seed must be between" in api.json()["error"]
    assert stakeholder_client.get(_url(stored) + "?secondary=999999").status_code == 400


def test_a_retrieval_run_alone_reports_the_keyword_order_and_has_no_reranked_file(stakeholder_client, stored):
    url = f"/benchmarks/reports/retrieval/{stored['run'].pk}/"
    response = stakeholder_client.get(url + QS)
    assert response.status_code == 200 and "no rerank run" in response.content.decode()
    assert stakeholder_client.get(url + "reranked.run").status_code == 404
    assert stakeholder_client.get(url + "keyword.run").status_code == 200
    index = stakeholder_client.get("/benchmarks/reports/").content.decode()
    assert url in index and _url(stored) in index


def test_the_example_suite_reports_30_ranking_queries_by_split(example_suite):
    from benchmarks.retrieval.services import retrieval_run_create

    run = retrieval_run_create(suite=example_suite, k=30)
    report = report_build(run=run, replicates=1000, seed=20260920)
    assert [(s.split, s.queries) for s in report.splits] == [("dev", 12), ("heldout", 18)]
    assert len(report.exact_controls) == 6 and len(report.outside_controls) == 4
    assert all(c.resolved and c.matches_expected for c in report.exact_controls)
    assert "Suite nrs_v1 v1 of 30 ranking queries (12 development, 18 held-out)" in report.population


def test_a_sqlite_report_says_its_keyword_order_depends_on_what_else_is_indexed(stakeholder_client, stored):
    html = stakeholder_client.get(_url(stored) + QS).content.decode()
    caveat = "bm25 term statistics span every provision in the index"
    # The caveat belongs to the engine that made the run: FTS5's bm25 uses collection statistics,
    # PostgreSQL's ts_rank_cd does not.
    assert (caveat in html) == (stored["run"].engine == "sqlite-fts5")
