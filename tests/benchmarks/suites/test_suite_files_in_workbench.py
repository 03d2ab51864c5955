"""Suites from files in the browser: a suite file pasted or uploaded into a workbench draft, read and checked as
``import_suite`` reads and checks it, then frozen as today, on a code imported from a corpus file (14 CFR)."""

from __future__ import annotations

import io
from pathlib import Path

import pytest
import yaml
from django.core.management import call_command

from benchmarks.suites.models import Suite, SuiteDraft
from tests.factories import client_for, make_user

CFR = Path(__file__).parents[1] / "corpus" / "data" / "cfr14-parts101-105.jsonl"
FAMILIES = [{"id": "balloons", "split": "dev"}, {"id": "rockets", "split": "dev"},
            {"id": "ultralights", "split": "heldout"}, {"id": "parachutes", "split": "heldout"}]
QUERIES = [
    ("q1", "balloons", "When may a moored balloon be operated at night, and what lighting does it need?",
     ["14 C.F.R. § 101.17"]),
    ("q2", "rockets", "What must an operator of an amateur rocket notify the FAA of before a launch?",
     ["14 CFR 101.25"]),
    ("q3", "ultralights", "May an ultralight vehicle be flown over a congested area of a city?", ["14 CFR § 103.15"]),
    ("q4", "parachutes", "Who must inspect and pack a parachute used for an intentional jump?",
     ["14 cfr §105.43"]),
]
SUITE = {
    "name": "cfr14_workbench", "version": 1, "corpus": "cfr14", "description": "14 CFR parts 101-105",
    "families": FAMILIES,
    "queries": [{"id": qid, "kind": "ranking", "split": next(f["split"] for f in FAMILIES if f["id"] == fam),
                 "family": fam, "text": text, "targets": targets} for qid, fam, text, targets in QUERIES]
    + [{"id": "ec1", "kind": "exact_citation", "text": "14 C.F.R. § 103.1(a)", "expected_citation": "14 CFR 103.1"}],
}


@pytest.fixture
def admin_client(django_user_model, cfr14_imported):
    return client_for(make_user(django_user_model, "wbf_admin", "admin"))


@pytest.fixture
def cfr14_imported(db):
    call_command("import_corpus", str(CFR), "--code", "cfr14", stdout=io.StringIO())


def test_a_pasted_suite_file_freezes_to_the_same_hash_as_import_suite(admin_client, tmp_path):
    text = yaml.safe_dump(SUITE, sort_keys=False, allow_unicode=True)
    response = admin_client.post("/benchmarks/suites/workbench/import/", {"text": text, "format": "yaml"})
    draft = SuiteDraft.objects.get()
    assert response.status_code == 302 and response["Location"].endswith(f"/workbench/{draft.pk}/")
    page = admin_client.get(f"/benchmarks/suites/workbench/{draft.pk}/").content.decode()
    assert "q4" in page and "Who must inspect and pack a parachute" in page
    assert admin_client.post(f"/benchmarks/suites/workbench/{draft.pk}/freeze/").status_code == 302
    frozen = Suite.objects.get()
    assert frozen.corpus == "cfr14"
    assert frozen.queries.get(qid="q4").targets.get().citation == "14 CFR § 105.43"

    path = tmp_path / "cfr14_workbench.yaml"
    path.write_text(text)
    out = io.StringIO()
    call_command("import_suite", str(path), stdout=out)
    assert f"sha256={frozen.sha256}" in out.getvalue() and "already frozen (no-op)" in out.getvalue()


def test_an_uploaded_file_that_cannot_be_read_is_refused_with_the_import_suite_message(admin_client, tmp_path):
    from django.core.files.uploadedfile import SimpleUploadedFile

    bad = b"name: x\nversion: 1\nq: &a [1]\nr: *a\n"
    response = admin_client.post("/benchmarks/suites/workbench/import/",
                                 {"file": SimpleUploadedFile("mine.yaml", bad)})
    assert response.status_code == 400 and not SuiteDraft.objects.exists()
    page = response.content.decode()
    assert "in mine.yaml" in page and "aliases and anchors are refused in suite files" in page


def test_a_readable_file_with_problems_becomes_a_draft_listing_the_import_suite_problems(admin_client):
    wrong = {**SUITE, "queries": [{**SUITE["queries"][0], "targets": ["14 CFR § 999.1"]}]}
    response = admin_client.post("/benchmarks/suites/workbench/import/",
                                 {"text": yaml.safe_dump(wrong), "format": "yaml"})
    draft = SuiteDraft.objects.get()
    page = admin_client.get(response["Location"]).content.decode()
    assert "14 CFR § 999.1 is not in the cfr14 corpus snapshot" in page
    assert admin_client.post(f"/benchmarks/suites/workbench/{draft.pk}/freeze/").status_code == 400


def test_a_suite_written_on_the_cfr_code_is_retrieved_reranked_by_the_local_model_and_reported(admin_client):
    from benchmarks.reports.selectors import report_build, rerank_scores_load
    from benchmarks.rerank import services as rerank
    from benchmarks.retrieval.services import retrieval_run_create

    admin_client.post("/benchmarks/suites/workbench/import/",
                      {"text": yaml.safe_dump(SUITE, sort_keys=False), "format": "yaml"})
    admin_client.post(f"/benchmarks/suites/workbench/{SuiteDraft.objects.get().pk}/freeze/")
    suite = Suite.objects.get()
    run = retrieval_run_create(suite=suite, k=30)
    assert run.status == "done"
    control = run.results.get(query__qid="ec1")
    assert control.status == "resolved" and control.candidates.get().provision.citation == "14 CFR § 103.1"
    reranked = rerank.rerank_run_create(retrieval_run=run, provider="local", enqueue=False)
    assert rerank.rerank_run_execute(run_id=reranked.pk) == "done"
    scores, retrieval = rerank_scores_load(pk=reranked.pk)
    report = report_build(run=retrieval, rerank=scores, replicates=1000, seed=1)
    assert [row.query.qid for row in report.queries] == ["q1", "q2", "q3", "q4"]  # the ranking queries
    page = admin_client.get(f"/benchmarks/reports/rerank/{reranked.pk}/?replicates=1000&seed=1")
    assert page.status_code == 200 and "cfr14_workbench" in page.content.decode()
