"""Pages and API: stakeholders and admins read; admins launch; reviewers get 403."""

from __future__ import annotations

import pytest
from django.urls import reverse

from benchmarks.corpus.models import Provision
from benchmarks.retrieval.models import RetrievalRun
from benchmarks.retrieval.services import retrieval_run_create


@pytest.fixture
def run(example_suite):
    return retrieval_run_create(suite=example_suite, k=30)


def _urls(run):
    provision = Provision.objects.get(citation="NRS 432B.220")
    return [
        reverse("benchmarks:index"),
        reverse("benchmarks:corpus", args=["nrs"]),
        reverse("benchmarks:chapter", args=["nrs", "432B"]),
        reverse("benchmarks:provision", args=[provision.pk]),
        reverse("benchmarks:suite", args=[run.suite_id]),
        reverse("benchmarks:retrieval-run", args=[run.pk]),
        reverse("benchmarks:retrieval-run-new"),
        "/api/v1/benchmarks/snapshots/",
        "/api/v1/benchmarks/provisions/?corpus=nrs&chapter=36",
        f"/api/v1/benchmarks/provisions/{provision.pk}/",
        "/api/v1/benchmarks/suites/",
        f"/api/v1/benchmarks/suites/{run.suite_id}/",
        "/api/v1/benchmarks/retrieval-runs/",
        f"/api/v1/benchmarks/retrieval-runs/{run.pk}/",
    ]


def test_reviewers_are_refused_every_benchmark_page_and_endpoint(run, reviewer_client):
    for url in _urls(run):
        assert reviewer_client.get(url).status_code == 403, url


def test_anonymous_visitors_are_sent_to_log_in(run, client):
    assert client.get(reverse("benchmarks:index")).status_code == 302
    assert client.get("/api/v1/benchmarks/suites/").status_code in {401, 403}


def test_stakeholders_read_every_page_but_cannot_launch(run, stakeholder_client):
    for url in _urls(run):
        expected = 403 if url == reverse("benchmarks:retrieval-run-new") else 200
        assert stakeholder_client.get(url).status_code == expected, url


def test_the_corpus_browser_shows_hashes_and_the_official_url(run, stakeholder_client):
    page = stakeholder_client.get(reverse("benchmarks:corpus", args=["nrs"])).content.decode()
    assert "https://www.leg.state.nv.us/NRS/NRS-432B.html" in page and "NRS-432B.html" in page
    provision = Provision.objects.get(citation="NRS 432B.135")
    detail = stakeholder_client.get(reverse("benchmarks:provision", args=[provision.pk])).content.decode()
    assert provision.content_sha256 in detail and "repealed" in detail


def test_the_suite_page_groups_queries_and_shows_the_freeze_hash(run, stakeholder_client):
    page = stakeholder_client.get(reverse("benchmarks:suite", args=[run.suite_id])).content.decode()
    assert run.suite.sha256 in page
    assert page.index("Development ranking queries") < page.index("Held-out ranking queries")
    assert "Family: protective-custody" in page and "provisional" in page


def test_the_run_page_marks_targets_fallbacks_and_coverage(run, stakeholder_client):
    page = stakeholder_client.get(reverse("benchmarks:retrieval-run", args=[run.pk])).content.decode()
    # bm25-v1 (the default) never falls back; the engine-dependent keyword-v1 does, and says so.
    assert "<mark>target</mark>" in page and "fallback:" not in page and "Coverage:" in page
    assert run.engine in page and run.candidates_sha256 in page
    baseline = retrieval_run_create(suite=run.suite, configuration="keyword-v1", k=30)
    page = stakeholder_client.get(reverse("benchmarks:retrieval-run", args=[baseline.pk])).content.decode()
    assert "<mark>target</mark>" in page and "fallback:" in page and "Coverage:" in page


def test_the_run_api_lists_candidates_in_keyword_order(run, stakeholder_client):
    body = stakeholder_client.get(f"/api/v1/benchmarks/retrieval-runs/{run.pk}/").json()
    result = next(r for r in body["results"] if r["qid"] == "ho-10")
    assert [c["rank"] for c in result["candidates"]] == list(range(1, 31))
    assert body["engine"] == run.engine and "targets_found" in result


def test_an_admin_starts_a_retrieval_run_from_the_form(example_suite, admin_client_, admin_user_):
    response = admin_client_.post(reverse("benchmarks:retrieval-run-new"),
                                  {"suite": example_suite.pk, "configuration": "heading-v1", "k": 10})
    run = RetrievalRun.objects.get()
    assert response.status_code == 302 and response["Location"] == reverse("benchmarks:retrieval-run", args=[run.pk])
    assert run.configuration == "heading-v1" and run.k == 10 and run.created_by == admin_user_


def test_a_stakeholder_cannot_post_a_run(example_suite, stakeholder_client):
    response = stakeholder_client.post(reverse("benchmarks:retrieval-run-new"),
                                       {"suite": example_suite.pk, "configuration": "keyword-v1", "k": 30})
    assert response.status_code == 403 and not RetrievalRun.objects.exists()
