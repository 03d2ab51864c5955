"""A report says what its run covered: banner and "incomplete" headline for a partial run, no headline figures
for a failed one, and a conclusion sentence first, with the comparison next to it."""

from __future__ import annotations

import csv
import io
import json
import random
import re

import pytest
from django.utils.html import escape

from benchmarks.reports.selectors import report_build, rerank_scores_load, secondary_run_default
from tests.benchmarks.conftest import freeze_suite, import_synthetic
from tests.reviewapp.providers.conftest import PLANTED, fixture_bytes

WORDS = ["tenant", "landlord", "deposit", "court", "guardian", "child", "notice", "hearing", "appeal", "fee",
         "record", "agency", "report", "custody", "petition", "order", "judge", "filing", "service", "lien"]
FAMILIES = [{"id": "dev-a", "split": "dev"}, {"id": "dev-b", "split": "dev"},
            {"id": "ho-a", "split": "heldout"}, {"id": "ho-b", "split": "heldout"}]
QS = "?replicates=1000&seed=7"


@pytest.fixture
def retrieval(db):
    """Eight ranking queries (four per split, two families each) and an outside-corpus control, k=30."""
    from benchmarks.retrieval.services import retrieval_run_create

    rng = random.Random(4)
    rows = [(f"999.{100 + i * 10}", " ".join(rng.sample(WORDS, 3)).capitalize() + ".",
             " ".join(rng.choice(WORDS) for _ in range(40)) + ".") for i in range(50)]
    import_synthetic(rows, key="coverage-synthetic.html")
    queries = [{"id": f"q{i}", "kind": "ranking", "split": FAMILIES[i // 2]["split"], "family": FAMILIES[i // 2]["id"],
                "text": rows[i][1] + " " + " ".join(rows[i][2].split()[:6]),  # its target's own words
                "targets": [f"NRS {rows[i][0]}"]} for i in range(8)]
    queries.append({"id": "oc1", "kind": "outside_corpus", "text": "What fee applies to a gasoline tax appeal?"})
    suite = freeze_suite(queries, name="coverage-synthetic", families=FAMILIES)
    return retrieval_run_create(suite=suite, configuration="keyword-v1", k=30)


def _stored_rerank(retrieval, *, status: str, leave_out=lambda qid, rank: False):
    """A rerank run with a grade for every candidate except those ``leave_out`` names (never sent)."""
    from benchmarks.rerank.models import RerankGrade, RerankRun
    from benchmarks.retrieval.models import RetrievalCandidate
    from reviewapp.providers.models import Ledger

    ledger = Ledger.objects.create(purpose="tests", provider="local", model_id="all-MiniLM-L6-v2-onnx-int8",
                                   max_requests=272, max_input_tokens=2_000_000)
    run = RerankRun.objects.create(
        suite=retrieval.suite, retrieval_run=retrieval, ledger=ledger, provider="local",
        model_id="all-MiniLM-L6-v2-onnx-int8", method="local heuristic", question_version="statute-relevance-v1",
        question_sha256="0" * 64, status=status, stop_reason="budget reached" if status == "stopped" else "")
    grades = []
    candidates = RetrievalCandidate.objects.filter(result__run=retrieval).exclude(
        result__query__kind="exact_citation").select_related("result__query").order_by("id")
    for n, cand in enumerate(candidates):
        if leave_out(cand.result.query.qid, cand.rank):
            continue
        grades.append(RerankGrade(run=run, query=cand.result.query, candidate=cand, request_index=n // 4,
                                  position_in_request=n % 4 + 1, request_key=f"k{n // 4}", status="graded",
                                  p_useful=round(((cand.rank * 37) % 30) / 40, 3)))
    RerankGrade.objects.bulk_create(grades)
    return run


def _report(run):
    scores, retrieval = rerank_scores_load(pk=run.pk)
    return report_build(run=retrieval, rerank=scores, secondary=secondary_run_default(run=retrieval),
                        replicates=1000, seed=7)


def _section(html: str, section: str) -> str:
    return re.search(rf'<section id="{section}".*?</section>', html, re.S).group(0)


def test_a_complete_run_opens_with_its_conclusion_and_the_comparison_next_to_it(retrieval, stakeholder_client):
    run = _stored_rerank(retrieval, status="done")
    report = _report(run)
    assert report.coverage.complete and report.conclusion.kind not in ("incomplete", "failed")
    html = stakeholder_client.get(f"/benchmarks/reports/rerank/{run.pk}/{QS}").content.decode()
    assert 'id="coverage-banner"' not in html and "queries reranked" not in _section(html, "headline")
    headline = _section(html, "headline")
    conclusion = headline.index(escape(report.conclusion.sentence))
    comparison = headline.index('id="primary-endpoint"')
    # First the sentence, then the comparison with its interval, then the population box and the tables.
    assert conclusion < comparison < headline.index('id="population"') < headline.index('id="headline-dev"')
    primary = report.primary
    assert f"{primary.difference.estimate:+.3f}" in headline[comparison:headline.index('id="population"')]

    data = json.loads(stakeholder_client.get(f"/benchmarks/reports/rerank/{run.pk}/report.json{QS}").content)
    assert data["conclusion"]["sentence"] == report.conclusion.sentence
    assert data["coverage"]["complete"] is True and data["coverage"]["banner"] == ""
    body = stakeholder_client.get(f"/benchmarks/reports/rerank/{run.pk}/queries.csv").content.decode()
    assert body.startswith("qid,")  # no banner lines on a complete run


def test_a_partial_run_carries_a_banner_and_an_incomplete_headline(retrieval, stakeholder_client):
    # Stopped by its budget: q6 half done, q7 and the control never sent.
    run = _stored_rerank(retrieval, status="stopped",
                         leave_out=lambda qid, rank: qid in {"q7", "oc1"} or (qid == "q6" and rank > 15))
    html = stakeholder_client.get(f"/benchmarks/reports/rerank/{run.pk}/{QS}").content.decode()
    banner = re.search(r'<div class="warning" id="coverage-banner".*?</div>', html, re.S).group(0)
    assert html.index('id="coverage-banner"') < html.index('<section id="headline"')  # at the top
    assert "Incomplete: 6 of 8 queries reranked." in banner
    assert f"rerank run #{run.pk} is stopped (budget reached)" in banner
    assert "6 of 8 ranking queries and 0 of 1 outside-corpus controls were completely reranked" in banner
    assert "0 failed, 0 sent with no answer recorded, 75 never sent" in banner
    for qid in ("q6", "q7", "oc1"):
        assert f'<a href="#q-{qid}">{qid}</a>' in banner
    assert '<a href="#q-q5">' not in banner
    headline = _section(html, "headline")
    assert "Headline — incomplete: 6 of 8 queries reranked" in headline
    assert "Incomplete: 6 of 8 queries reranked (rerank run" in headline  # the conclusion says so, not a winner
    assert "order is better than" not in headline and "cannot tell" not in headline
    primary = re.search(r'<p class="primary-figure" id="primary-endpoint">.*?</p>', headline, re.S).group(0)
    assert "Incomplete: 6 of 8 queries reranked" in primary  # no clean headline figure

    data = json.loads(stakeholder_client.get(f"/benchmarks/reports/rerank/{run.pk}/report.json{QS}").content)
    assert data["coverage"]["complete"] is False
    assert data["coverage"]["headline_label"] == "incomplete: 6 of 8 queries reranked"
    assert [q["qid"] for q in data["coverage"]["queries_not_completely_reranked"]] == ["q6", "q7", "oc1"]
    assert data["conclusion"]["kind"] == "incomplete"
    lines = stakeholder_client.get(f"/benchmarks/reports/rerank/{run.pk}/queries.csv").content.decode().splitlines()
    assert lines[0] == "# incomplete: 6 of 8 queries reranked" and "75 never sent" in lines[1]
    assert [r["qid"] for r in csv.DictReader(io.StringIO("\n".join(lines[2:])))][-2:] == ["q6", "q7"]


def test_a_failed_run_has_no_headline_figures(retrieval, stakeholder_client, settings):
    from benchmarks.rerank import services as rerank
    from reviewapp.providers.loopback import LoopbackServer, Reply

    settings.PROVIDER_KEYS = dict(PLANTED)
    with LoopbackServer(lambda p, h, b: Reply(status=401, body=fixture_bytes("openrouter_error_401.json"))) as server:
        run = rerank.rerank_run_create(retrieval_run=retrieval, provider="openai_compatible", model_id="m",
                                       base_url=server.url + "/v1", enqueue=False)
        assert rerank.rerank_run_execute(run_id=run.pk) == "failed"
    html = stakeholder_client.get(f"/benchmarks/reports/rerank/{run.pk}/{QS}").content.decode()
    headline = _section(html, "headline")
    assert 'id="no-headline"' in headline and 'id="primary-endpoint"' not in headline
    assert 'id="headline-heldout"' not in headline and "<svg" not in headline
    assert f"Rerank run #{run.pk} failed (provider error: authentication refused: HTTP 401: No auth credentials " \
           "found), so this report draws no conclusion about the model: 0 of 8 queries reranked." in headline
    banner = re.search(r'<div class="warning" id="coverage-banner".*?</div>', html, re.S).group(0)
    assert "Requests: 1 sent, 0 answered, 1 failed, 0 unknown, 0 not sent" in banner
    assert "No headline figures" in banner

    data = json.loads(stakeholder_client.get(f"/benchmarks/reports/rerank/{run.pk}/report.json{QS}").content)
    assert data["primary_endpoint"]["keyword"] is None and data["primary_endpoint"]["reranked"] is None
    assert data["primary_endpoint"]["difference_reranked_minus_keyword"] is None
    assert data["coverage"]["headline_figures"] is False and data["conclusion"]["kind"] == "failed"
    for split in data["splits"]:
        for figures in split["metrics"].values():
            assert figures["reranked"] is None and figures["difference"] is None  # never a +0.000 artefact
    api = stakeholder_client.get(f"/api/v1/benchmarks/reports/rerank/{run.pk}/{QS}").json()
    assert api["coverage"] == data["coverage"] and api["conclusion"] == data["conclusion"]


def test_a_done_run_that_graded_nothing_gets_no_headline_either(retrieval):
    run = _stored_rerank(retrieval, status="done", leave_out=lambda qid, rank: True)
    report = _report(run)
    assert report.coverage.withheld and report.primary is None and report.conclusion.kind == "failed"
    assert "graded no candidate" in report.conclusion.sentence
