"""CUAD extraction against a real loopback OpenAI-compatible server with NO key, base URL chosen per run.

Through real httpx to 127.0.0.1: a server that honours the JSON schema (verbatim quotes come back and are
graded), and a model that ignores the schema (a clear error per contract on its receipt, nothing re-sent by
itself). The run made against the loopback test server is named "simulated provider" on every page and export.
"""

from __future__ import annotations

import json

import pytest

from grading.runs.jobs import extraction_job_create, job_extract_execute
from grading.runs.models import ConsoleJob, ExtractionRun
from reviewapp.core.jobs import job_kind_resume
from reviewapp.providers.loopback import LoopbackServer
from reviewapp.providers.models import Ledger, Receipt

MODEL = "llama3.1:8b"


@pytest.fixture
def no_keys(settings):
    settings.PROVIDER_KEYS = {"openrouter": "", "openai_compatible": "", "anthropic": ""}


def test_a_keyless_server_extracts_verbatim_quotes_and_the_run_is_named_simulated(loaded, no_keys, admin_client_):
    with LoopbackServer(shape="auto") as server:
        job = extraction_job_create(sample=loaded.sample, provider="openai_compatible", model_id=MODEL,
                                    base_url=server.url + "/v1", queue=False)
        done = job_extract_execute(job_id=job.pk)
        sent = list(server.requests)
    assert done.status == "done", done.error
    assert len(sent) == job.total and max(server.counts.values()) == 1
    assert all("authorization" not in r["headers"] for r in sent)
    body = json.loads(sent[0]["body"])
    assert body["model"] == MODEL and body["response_format"]["type"] == "json_schema"
    ledger = Ledger.objects.get(pk=job.ledger_id)
    assert ledger.base_url == server.url + "/v1" and ledger.simulated

    run = ExtractionRun.objects.get(pk=done.run_id)
    assert run.model == f"{MODEL} (simulated provider)"
    # The loopback quotes contract sentences verbatim: every extraction is fully grounded.
    groundings = list(run.extractions.values_list("grounding", flat=True))
    assert groundings and min(groundings) == pytest.approx(1.0)

    assert "simulated provider" in admin_client_.get(f"/cuad/runs/jobs/{job.pk}/").content.decode()
    job_json = admin_client_.get(f"/cuad/runs/jobs/{job.pk}/job.json").json()
    assert job_json["simulated"] is True and job_json["base_url"] == server.url + "/v1"
    assert "simulated provider" in admin_client_.get(f"/cuad/runs/{run.pk}/").content.decode()
    assert admin_client_.get(f"/cuad/runs/{run.pk}/run.json").json()["model"].endswith("(simulated provider)")
    for url in ("/cuad/scorecard/leaderboard/", "/cuad/scorecard/leaderboard/leaderboard.csv",
                "/cuad/scorecard/summary/"):
        assert "simulated provider" in admin_client_.get(url).content.decode(), url


def test_a_model_that_ignores_the_schema_fails_each_contract_clearly_and_nothing_is_resent(loaded, no_keys):
    with LoopbackServer(shape="ignore-schema") as server:
        job = extraction_job_create(sample=loaded.sample, provider="openai_compatible", model_id=MODEL,
                                    base_url=server.url + "/v1", max_requests=8, queue=False)
        failed = job_extract_execute(job_id=job.pk)
        assert len(server.requests) == job.total and server.max_count_per_body == 1
        assert failed.status == "failed" and f"{job.total} of {job.total} contracts have no answer" in failed.error
        errors = list(job.contracts.values_list("error", flat=True))
        assert all(e.startswith("failed: invalid answer: message content is not valid JSON") for e in errors)
        receipts = Receipt.objects.filter(ledger_id=job.ledger_id)
        assert set(receipts.values_list("status", flat=True)) == {"failed"} and receipts.count() == job.total
        assert all(r.simulated for r in receipts)
        # A resume without an explicit re-attempt sends nothing again.
        job_kind_resume(ConsoleJob.objects.get(pk=job.pk), enqueue=False)
        job_extract_execute(job_id=job.pk)
        assert len(server.requests) == job.total


def test_the_command_takes_the_base_url_and_says_simulated(loaded, no_keys, capsys):
    from django.core.management import call_command

    with LoopbackServer() as server:
        call_command("extract_cuad", "--provider", "openai_compatible", "--model", MODEL, "--limit", "2",
                     "--base-url", server.url + "/v1", "--inline")
    out = capsys.readouterr().out
    assert f"openai_compatible {MODEL} at {server.url}/v1, 2 contracts" in out and "simulated provider" in out


def test_the_launch_api_and_page_take_the_base_url_per_run(loaded, no_keys, admin_client_):
    response = admin_client_.post("/api/v1/cuad/jobs/", {
        "provider": "openai_compatible", "model_id": "qwen2.5:14b", "base_url": "http://127.0.0.1:1234/v1",
        "sample": loaded.sample.pk, "limit": 1}, content_type="application/json")
    assert response.status_code == 202, response.content
    assert response.json()["base_url"] == "http://127.0.0.1:1234/v1" and response.json()["simulated"] is False
    job = ConsoleJob.objects.get(pk=response.json()["id"])
    assert Ledger.objects.get(pk=job.ledger_id).base_url == "http://127.0.0.1:1234/v1"
    page = admin_client_.post("/cuad/runs/launch/", {
        "provider": "openai_compatible", "model_id": "m", "base_url": "http://127.0.0.1:8080/v1?key=sk-in-url",
        "sample": loaded.sample.pk})
    text = page.content.decode()
    assert page.status_code == 400 and "must not carry a query string" in text and "sk-in-url" not in text
