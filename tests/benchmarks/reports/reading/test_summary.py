"""The one page to send: verdict, population, labels' provenance, caveats and exposure, as HTML and as PDF."""

from __future__ import annotations

import subprocess

import pytest
from django.utils.html import escape

from benchmarks.reports.models import HeldoutExposure
from benchmarks.reports.reading.summary import summary_build
from benchmarks.reports.selectors import leaderboard_build
from tests.benchmarks.labels.fixtures import judged_world, world_keys, world_reload
from tests.helpers import only_savepoint_tests, rows_for_the_module

QS = "?replicates=1000&seed=5"


@pytest.fixture(scope="module")
def _world(django_db_setup, django_db_blocker):
    """One judged run for the module: every test only reads it (each in its own savepoint)."""
    with rows_for_the_module(django_db_blocker, lambda: world_keys(*judged_world(
            seed=11, grades_seed=9, reviewer_names=("sum_rev_a", "sum_rev_b")))) as keys:
        yield keys


@pytest.fixture
def world(_world, request, db):
    only_savepoint_tests(request)
    run, pool, _reviewers = world_reload(_world)
    return run, pool


def _words(text: str) -> str:
    return " ".join(text.split())


def _pdf_text(pdf: bytes, tmp_path) -> tuple[str, int]:
    path = tmp_path / "summary.pdf"
    path.write_bytes(pdf)
    text = subprocess.run(["pdftotext", "-enc", "UTF-8", str(path), "-"], check=True, capture_output=True,
                          text=True).stdout
    info = subprocess.run(["pdfinfo", str(path)], check=True, capture_output=True, text=True).stdout
    pages = int(next(line.split()[-1] for line in info.splitlines() if line.startswith("Pages:")))
    return _words(text), pages


def test_the_summary_names_the_lawyers_agreement_and_admin_held_credentials_of_its_labels(world):
    run, pool = world
    summary = summary_build(board=leaderboard_build(run=run.retrieval_run, reranks=[run], replicates=1000, seed=5))
    (source,) = summary.label_sources
    assert source.name.endswith(f"({pool.public_id})")
    assert source.lawyers == 2 and source.items == source.agreed + source.adjudicated + source.unresolved
    assert source.complete == 2 * source.items and source.admin_held == 0
    assert summary.targets_sentence.startswith("Targets from suite ") and summary.targets_sentence.endswith(
        "targets counted (12 nominated and not yet confirmed by any lawyer); nominated by assistant (not a lawyer).")
    assert summary.provenance[1] == (f"Labels from {source.name}: {source.items} items counted ({source.agreed} "
                                     "agreed by 2 lawyers answering blind); 0 of the 220 lawyer answers saved with "
                                     "credentials an admin once held.")
    assert summary.caveats[0].startswith("Targets were nominated from the official text by")
    assert "ranking queries" in summary.population and "topic families" in summary.population


def test_the_pdf_is_one_page_whose_text_carries_the_verdict_and_the_population(stakeholder_client, world,
                                                                                 tmp_path):
    run, _pool = world
    response = stakeholder_client.get(f"/benchmarks/reports/summary/{run.retrieval_run.pk}/summary.pdf{QS}")
    assert response.status_code == 200 and response["Content-Type"] == "application/pdf"
    assert response["Content-Disposition"].endswith(f'-summary-{run.retrieval_run.pk}.pdf"')
    text, pages = _pdf_text(response.content, tmp_path)
    assert pages == 1
    summary = summary_build(board=leaderboard_build(run=run.retrieval_run, reranks=[run], replicates=1000, seed=5))
    assert _words(summary.board.verdict.sentence) in text
    assert _words(summary.population) in text
    assert "Held-out exposure" in text and "fresh" in text
    assert "2 lawyers" in text


def test_the_html_page_shows_the_verdict_the_population_and_links_its_pdf(stakeholder_client, world):
    run, _pool = world
    pk = run.retrieval_run.pk
    response = stakeholder_client.get(f"/benchmarks/reports/summary/{pk}/{QS}")
    assert response.status_code == 200
    html = response.content.decode()
    summary = summary_build(board=leaderboard_build(run=run.retrieval_run, reranks=[run], replicates=1000, seed=5))
    verdict = html.split('id="summary-verdict"')[1].split("</p>")[0]
    assert escape(summary.board.verdict.sentence) in verdict
    assert escape(summary.population) in html
    assert f'href="/benchmarks/reports/summary/{pk}/summary.pdf?replicates=1000&amp;seed=5"' in html
    assert 'id="summary-heldout"' in html and 'id="summary-dev"' in html
    assert "2 lawyers" in html and "saved with credentials an admin once held" in html
    assert "<script" not in html.split("<main")[-1] and ' style="' not in html


def test_the_leaderboard_links_its_summary_with_the_same_choices(stakeholder_client, world):
    run, _pool = world
    pk = run.retrieval_run.pk
    html = stakeholder_client.get(f"/benchmarks/reports/leaderboard/{pk}/{QS}&rerank={run.pk}").content.decode()
    link = html.split('id="summary-link"')[1].split("</p>")[0]
    assert f'href="/benchmarks/reports/summary/{pk}/?replicates=1000&amp;seed=5&amp;rerank={run.pk}"' in link
    assert f'href="/benchmarks/reports/summary/{pk}/summary.pdf?replicates=1000&amp;seed=5&amp;rerank={run.pk}"' in link


def test_reviewers_are_refused_the_summary_and_its_pdf(reviewer_client, world):
    run, _pool = world
    for suffix in ("", "summary.pdf"):
        assert reviewer_client.get(f"/benchmarks/reports/summary/{run.retrieval_run.pk}/{suffix}{QS}"
                                   ).status_code == 403


def test_reading_the_summary_records_its_held_out_figures_in_the_ledger(stakeholder_client, world):
    run, _pool = world
    pk = run.retrieval_run.pk
    before = HeldoutExposure.objects.count()
    assert stakeholder_client.get(f"/benchmarks/reports/summary/{pk}/{QS}").status_code == 200
    page = list(HeldoutExposure.objects.order_by("id")[before:])
    # One row per system shown (keyword order and the rerank run), each for the page.
    assert len(page) == 2 and {e.purpose for e in page} == {HeldoutExposure.Purpose.PAGE}
    assert {e.rerank_run_id for e in page} == {None, run.pk}
    assert stakeholder_client.get(f"/benchmarks/reports/summary/{pk}/summary.pdf{QS}").status_code == 200
    pdf = list(HeldoutExposure.objects.order_by("id")[before + 2:])
    assert len(pdf) == 2 and {e.purpose for e in pdf} == {HeldoutExposure.Purpose.EXPORT}


@pytest.mark.django_db
def test_the_summary_of_a_confirmed_version_says_who_confirmed_its_targets_as_its_population_does(
        django_user_model, admin_user_, stakeholder_client, tmp_path):
    # v2 was made by two lawyers confirming v1's targets blind, one after an admin's ruling on their disagreement.
    # The summary of v2 says so (it used to say no target had been put to lawyers), and its caveat reads whole.
    from django.test import Client

    from benchmarks.retrieval.services import retrieval_run_create
    from benchmarks.suites.confirmation import confirmation_pool_declare, suite_confirmed_version
    from reviewapp.core.records.provenance import provenance_sentences
    from reviewapp.review.assignment.models import Assignment
    from tests.benchmarks.suites.confirmation_fixtures import NOMINATOR, confirm_suite
    from tests.benchmarks.suites.test_confirmation import _grade, _items
    from tests.factories import make_user

    lena, lars = (make_user(django_user_model, name, "reviewer") for name in ("lena_lawyer", "lars_lawyer"))
    suite = confirm_suite()
    confirmation_pool_declare(suite=suite, reviewers=[lena, lars], reviewers_per_item=2)
    answers = {"NRS 999.010": ("y", "y"), "NRS 999.020": ("y", "n")}
    for index, lawyer in enumerate((lena, lars)):
        for citation, item_id in _items(lawyer).items():
            _grade(lawyer, item_id, answers[citation][index])
    item = Assignment.objects.get(reviewer=lena, item__doc_id="NRS 999.020").item
    admin = Client()
    admin.force_login(admin_user_)
    admin.post(f"/review/agreement/{item.pool.public_id}/items/{item.public_id}/adjudicate/", {"target": "y"})
    confirmed, _ = suite_confirmed_version(suite=suite, user=admin_user_)
    run = retrieval_run_create(suite=confirmed, configuration="bm25-v1")
    summary = summary_build(board=leaderboard_build(run=run, reranks=[], replicates=1000, seed=5))

    assert "all confirmed by 2 lawyers" in summary.population
    assert summary.provenance == provenance_sentences(summary.origins)
    assert summary.targets_sentence == (
        "Targets from suite confirm v2, confirmed in the blind confirmation of v1: 2 targets counted (1 agreed by 2 "
        f"lawyers (lars_lawyer, lena_lawyer) answering blind; 1 ruled by {admin_user_.username} after the lawyers "
        f"disagreed (adjudicated)); nominated by {NOMINATOR}; 0 of the 4 lawyer answers saved with credentials an "
        "admin once held.")
    assert summary.caveats[0] == (
        f"Targets were nominated from the official text by {NOMINATOR} (all confirmed by 2 lawyers); they are known "
        "positives, incomplete, so these figures are neither precision nor exhaustive recall.")
    html = stakeholder_client.get(f"/benchmarks/reports/summary/{run.pk}/{QS}").content.decode()
    assert escape(summary.targets_sentence) in html.split('id="summary-targets">')[1].split("</li>")[0]
    assert "No target of this suite version has been put to lawyers" not in html
    text, _pages = _pdf_text(stakeholder_client.get(f"/benchmarks/reports/summary/{run.pk}/summary.pdf{QS}").content,
                             tmp_path)
    assert _words(summary.targets_sentence) in text


def test_the_lede_counts_a_rerank_run_and_its_hybrid_as_one_of_each(stakeholder_client, world):
    run, _pool = world
    pk = run.retrieval_run.pk
    html = _words(stakeholder_client.get(f"/benchmarks/reports/summary/{pk}/{QS}&rerank={run.pk}"
                                         f"&hybrid={run.pk}").content.decode())
    lede = html.split('class="summary-lede"')[1].split("</p>")[0]
    assert "keyword order, 1 rerank run and 1 hybrid of the same candidates" in lede and "2 rerank runs" not in lede
    board = _words(stakeholder_client.get(f"/benchmarks/reports/leaderboard/{pk}/{QS}&rerank={run.pk}"
                                          f"&hybrid={run.pk}").content.decode())
    assert "keyword order, 1 rerank run and 1 hybrid of the same candidates" in board
