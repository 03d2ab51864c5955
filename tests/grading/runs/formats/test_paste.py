"""Runs pasted or uploaded on the Runs page or the API: each error by index and field, graded inline or by a
grade job."""

from __future__ import annotations

import json

import numpy as np

from grading.runs import jobs
from grading.runs.models import ConsoleJob, Extraction, ExtractionRun
from tests.grading.console_support import random_run


def test_the_run_export_is_the_grader_format_and_pastes_back_to_the_same_run(loaded, admin_client_):
    exported = admin_client_.get(f"/cuad/runs/{loaded.noisy.pk}/run.json").content.decode()
    before = ExtractionRun.objects.count()
    response = admin_client_.post("/cuad/runs/", {"run_text": exported})
    assert response.status_code == 302 and response["Location"] == f"/cuad/runs/{loaded.noisy.pk}/"
    assert ExtractionRun.objects.count() == before


def test_a_pasted_invalid_run_shows_each_error_by_index_and_field_and_stores_nothing(loaded, admin_client_):
    bad = {"model": "m", "extractions": [
        {"contract": "NOPE", "category": "Governing Law", "text": "x"},
        {"contract": "ALPHA-DISTRIBUTOR AGREEMENT", "category": "Governing Law", "text": " "},
        {"contract": "ALPHA-DISTRIBUTOR AGREEMENT", "category": "Bogus", "text": 3},
    ]}
    before = (ExtractionRun.objects.count(), Extraction.objects.count())
    response = admin_client_.post("/cuad/runs/", {"run_text": json.dumps(bad)})
    assert response.status_code == 400
    page = response.content.decode()
    assert "extractions[0], field &#x27;contract&#x27;: unknown contract" in page
    assert "extractions[1], field &#x27;text&#x27;: empty text" in page
    assert "extractions[2], field &#x27;text&#x27;: wrong type" in page
    assert (ExtractionRun.objects.count(), Extraction.objects.count()) == before


def test_a_json_lines_error_names_the_line(loaded, admin_client_):
    lines = '{"model": "m"}\n{"contract": "ALPHA-DISTRIBUTOR AGREEMENT", "category": "Governing Law"}\nnot json\n'
    response = admin_client_.post("/cuad/runs/", {"run_text": lines})
    page = response.content.decode()
    assert response.status_code == 400
    assert "line 2, field &#x27;text&#x27;: missing" in page and "line 3: not valid JSON" in page


def test_an_uploaded_valid_run_is_graded_right_away(loaded, admin_client_):
    from django.core.files.uploadedfile import SimpleUploadedFile

    run = random_run(np.random.default_rng(3), model="uploaded")
    upload = SimpleUploadedFile("mine.jsonl", "\n".join(json.dumps(e) for e in run["extractions"]).encode()
                                + b'\n{"model": "uploaded"}\n')
    response = admin_client_.post("/cuad/runs/", {"run_file": upload})
    assert response.status_code == 302
    stored = ExtractionRun.objects.get(model="uploaded")
    assert stored.source_name == "mine.jsonl" and stored.source_format == "jsonl"
    assert stored.n_extractions == len(run["extractions"])


def test_a_large_pasted_run_is_graded_by_a_task_with_progress_that_stops_polling(
    loaded, admin_client_, celery_worker, monkeypatch
):
    from tests.helpers import wait_until

    monkeypatch.setattr(jobs, "INLINE_LIMIT", 2)
    original = jobs.run_paste
    monkeypatch.setattr(jobs, "run_paste", lambda **kw: original(**{**kw, "inline_limit": 2}))
    run = random_run(np.random.default_rng(5), model="big")
    response = admin_client_.post("/cuad/runs/", {"run_text": json.dumps(run)})
    assert response.status_code == 302 and "/cuad/runs/jobs/" in response["Location"]
    job = ConsoleJob.objects.get(kind="grade")
    wait_until(lambda: ConsoleJob.objects.get(pk=job.pk).is_finished, timeout=60)
    job.refresh_from_db()
    assert job.status == "done" and job.run.model == "big" and job.raw_run == ""
    progress = admin_client_.get(f"/jobs/extraction/{job.pk}/progress/", HTTP_HX_REQUEST="true")
    assert progress.status_code == 286
    # finished since the page loaded: the fragment says so and links back to the job's page, which opens its run
    fragment = progress.content.decode()
    assert "Reload for the figures" in fragment and f"/cuad/runs/jobs/{job.pk}/" in fragment
    assert f"/cuad/runs/{job.run_id}/" in admin_client_.get(f"/cuad/runs/jobs/{job.pk}/").content.decode()


def test_the_progress_fragment_keeps_polling_while_a_job_is_queued(loaded, stakeholder_client):
    job = ConsoleJob.objects.create(kind="grade", dataset=loaded.dataset, total=10, stage="queued")
    response = stakeholder_client.get(f"/jobs/extraction/{job.pk}/progress/", HTTP_HX_REQUEST="true")
    # Every job page polls the one fragment at the one interval (it was 1 s here, 2 s elsewhere).
    assert response.status_code == 200 and 'hx-trigger="every 2s"' in response.content.decode()


def test_running_a_grade_job_twice_imports_once(loaded):
    job = ConsoleJob.objects.create(
        kind="grade", dataset=loaded.dataset, raw_run=json.dumps(random_run(np.random.default_rng(9))), total=3
    )
    first = jobs.job_grade_execute(job_id=job.pk)
    assert first.status == "done"
    assert jobs.job_grade_execute(job_id=job.pk) is None  # the claim fails: nothing runs again


# ---------------------------------------------------------------------------
# API


def test_the_api_pastes_a_run_and_refuses_an_invalid_one_with_errors(loaded, admin_client_):
    bad = admin_client_.post("/api/v1/cuad/runs/", {"run": {"model": "m", "extractions": [{"contract": "X"}]}},
                             content_type="application/json")
    assert bad.status_code == 400
    assert "extractions[0], field 'text': missing" in bad.json()["errors"]
    good = admin_client_.post("/api/v1/cuad/runs/", {"run": random_run(np.random.default_rng(1), model="api")},
                              content_type="application/json")
    assert good.status_code == 201 and good.json()["model"] == "api"
    assert set(good.json()) == {"id", "model", "source_name", "source_format", "n_extractions", "content_sha256",
                                "created_at", "in_sample", "heuristic", "headline", "scope"}
