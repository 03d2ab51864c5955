"""The rerank run page: state that follows the status, and a grades table with pages, sections and a filter."""

from __future__ import annotations

import re

import pytest

from benchmarks.rerank import services as rerank
from benchmarks.rerank.models import RerankGrade
from benchmarks.rerank.views import GRADES_PER_PAGE
from tests.benchmarks.rerank.fixtures import synthetic_retrieval_run


@pytest.fixture
def retrieval(db):
    return synthetic_retrieval_run()


def _grade_rows(html: str) -> list[str]:
    table = html.split('id="grades-table"', 1)[1].split("</table>", 1)[0]
    return re.findall(r'<tr><td class="mono">([^<]+)</td><td>([^<]*)</td>', table)


def _page(client, run, **params) -> str:
    response = client.get(f"/benchmarks/rerank/{run.pk}/", params)
    assert response.status_code == 200
    return response.content.decode()


def test_a_done_run_offers_no_resume_and_pages_its_grades_with_their_sections(retrieval, admin_client_):
    run = rerank.rerank_run_create(retrieval_run=retrieval, provider="local", enqueue=False)
    queued = _page(admin_client_, run)
    assert 'data-testid="queued"' in queued and 'data-testid="resume-form"' not in queued
    assert rerank.rerank_run_execute(run_id=run.pk) == "done"
    html = _page(admin_client_, run)
    assert 'data-testid="queued"' not in html and "Queued:" not in html
    assert 'data-testid="resume-form"' not in html and ">Resume<" not in html
    assert 'hx-trigger="every' not in html  # polling stops once the run is finished
    total = RerankGrade.objects.filter(run=run).count()
    assert total > GRADES_PER_PAGE
    first = _grade_rows(html)
    assert len(first) == GRADES_PER_PAGE
    sections = {c for _, c in first}
    assert all(c.startswith("NRS 999.") for c in sections) and len(sections) > 1
    second = _grade_rows(_page(admin_client_, run, page=2))
    assert len(second) == total - GRADES_PER_PAGE
    assert 'href="?page=1"' in _page(admin_client_, run, page=2)
    assert len(_grade_rows(_page(admin_client_, run, status="failed"))) == 0
    assert "No candidates with this status." in _page(admin_client_, run, status="not_sent")


def test_a_stopped_run_offers_resume_and_filters_its_unsent_candidates(retrieval, admin_client_):
    run = rerank.rerank_run_create(retrieval_run=retrieval, provider="local", max_requests=3, enqueue=False)
    assert rerank.rerank_run_execute(run_id=run.pk) == "stopped"
    html = _page(admin_client_, run)
    assert 'data-testid="resume-form"' in html
    graded = RerankGrade.objects.filter(run=run, status="graded").count()
    assert len(_grade_rows(_page(admin_client_, run, status="graded"))) == graded
    not_sent = _page(admin_client_, run, status="not_sent")
    rows = _grade_rows(not_sent)
    assert len(rows) == min(GRADES_PER_PAGE, run.candidates_planned - graded)
    assert "never sent to the provider" in not_sent and 'href="?status=not_sent&amp;page=2"' in not_sent
    assert '<option value="not_sent" selected>' in not_sent


def test_the_run_page_reads_its_grades_once_whatever_the_page_or_filter(retrieval, admin_client_):
    # The page read the grades twice and every planned candidate with its section: past 300 ms at 1,000 grades.
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    run = rerank.rerank_run_create(retrieval_run=retrieval, provider="local", max_requests=3, enqueue=False)
    assert rerank.rerank_run_execute(run_id=run.pk) == "stopped"
    for params in ({}, {"page": 2}, {"status": "graded"}, {"status": "not_sent"}, {"status": "not_sent", "page": 2}):
        with CaptureQueriesContext(connection) as queries:
            _page(admin_client_, run, **params)
        grade_reads = [q["sql"] for q in queries.captured_queries
                       if q["sql"].startswith('SELECT "benchmarks_rerankgrade"."id"')]
        assert len(grade_reads) == 1, params
        assert not any('"benchmarks_provision"."body"' in q["sql"] for q in queries.captured_queries), params
