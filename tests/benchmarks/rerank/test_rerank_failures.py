"""Runs that cannot reach the model fail loudly: refused at launch, or failed after the first answer; spend is sent."""

from __future__ import annotations

import socket

import pytest
from django.core.management import CommandError, call_command

from benchmarks.rerank import services as rerank
from benchmarks.rerank.models import RerankGrade, RerankRun
from reviewapp.core.jobs import job_kind_resume
from reviewapp.providers.loopback import LoopbackServer, Reply
from reviewapp.providers.models import Ledger, Receipt
from tests.benchmarks.rerank.fixtures import synthetic_retrieval_run
from tests.reviewapp.providers.conftest import PLANTED, fixture_bytes

NO_KEYS = {"openrouter": "", "openai_compatible": "", "anthropic": ""}
OPENROUTER = "https://openrouter.ai/api/v1"
# The provider's own message, as OpenRouter answers a request without a valid key.
AUTH_MESSAGE = "No auth credentials found"


@pytest.fixture
def retrieval(db):
    return synthetic_retrieval_run()


@pytest.fixture
def keyless(settings):
    settings.PROVIDER_KEYS = dict(NO_KEYS)
    settings.OPENAI_COMPATIBLE_BASE_URL = OPENROUTER
    settings.ANTHROPIC_BASE_URL = "https://api.anthropic.com"


@pytest.fixture
def keys(settings):
    settings.PROVIDER_KEYS = dict(PLANTED)


def _nothing_spent(ledgers_before: int = 0) -> None:
    assert not RerankRun.objects.exists()
    assert Ledger.objects.count() == ledgers_before
    assert not Receipt.objects.exists()


def _answer_401(path, headers, body):
    return Reply(status=401, body=fixture_bytes("openrouter_error_401.json"))


# --------------------------------------------------------------------------- preflight at launch


def test_a_keyless_launch_from_the_page_is_refused_naming_the_variable(retrieval, keyless, admin_client_):
    response = admin_client_.post("/benchmarks/rerank/new/", {
        "retrieval_run": retrieval.pk, "provider": "openai_compatible", "model_id": "openai/gpt-4o-mini",
        "method": "", "question_version": "statute-relevance-v1", "candidates_per_request": 4,
        "max_requests": 272, "max_input_tokens": 2_000_000,
    })
    assert response.status_code == 200  # the form again, with the reason
    assert "OPENROUTER_API_KEY is not set" in response.content.decode()
    _nothing_spent()


def test_a_keyless_launch_from_the_api_is_refused_naming_the_variable(retrieval, keyless, admin_client_):
    response = admin_client_.post("/api/v1/benchmarks/rerank-runs/", {
        "retrieval_run": retrieval.pk, "provider": "anthropic", "model_id": "claude-sonnet-4-5",
    }, content_type="application/json")
    assert response.status_code == 400
    (error,) = response.json()["errors"]
    assert error.startswith("ANTHROPIC_API_KEY is not set")
    _nothing_spent()


def test_the_api_launches_a_configured_run(retrieval, admin_client_, stakeholder_client):
    payload = {"retrieval_run": retrieval.pk, "provider": "local"}
    assert stakeholder_client.post("/api/v1/benchmarks/rerank-runs/", payload,
                                   content_type="application/json").status_code == 403
    response = admin_client_.post("/api/v1/benchmarks/rerank-runs/", payload, content_type="application/json")
    assert response.status_code == 202
    run = RerankRun.objects.get()
    assert response.json()["id"] == run.pk and response.json()["requests_planned"] == run.requests_planned == 32


@pytest.mark.parametrize("sync", [False, True])
def test_a_keyless_launch_from_the_command_exits_non_zero_naming_the_variable(retrieval, keyless, sync):
    args = ["rerank", "--retrieval-run", str(retrieval.pk), "--provider", "openai_compatible", "--model",
            "openai/gpt-4o-mini"] + (["--sync"] if sync else [])
    with pytest.raises(CommandError, match="OPENROUTER_API_KEY is not set"):
        call_command(*args)
    _nothing_spent()


def test_resuming_a_run_whose_key_is_gone_is_refused(retrieval, keys, settings):
    run = rerank.rerank_run_create(retrieval_run=retrieval, provider="anthropic", model_id="claude-x",
                                   base_url="http://127.0.0.1:9", enqueue=False)
    RerankRun.objects.filter(pk=run.pk).update(status="stopped")
    settings.PROVIDER_KEYS = dict(NO_KEYS)
    with pytest.raises(rerank.RerankError, match="ANTHROPIC_API_KEY is not set"):
        job_kind_resume(run, take_over=True)
    assert RerankRun.objects.get(pk=run.pk).status == "stopped"


def test_a_worker_without_the_key_fails_the_run_before_any_request(retrieval, keys, settings, admin_client_):
    run = rerank.rerank_run_create(retrieval_run=retrieval, provider="openai_compatible", model_id="m",
                                   base_url=OPENROUTER, enqueue=False)
    settings.PROVIDER_KEYS = dict(NO_KEYS)  # the worker's environment lacks what the web server had
    assert rerank.rerank_run_execute(run_id=run.pk) == "failed"
    run.refresh_from_db()
    assert run.status == "failed" and "OPENROUTER_API_KEY is not set" in run.error
    assert not Receipt.objects.filter(ledger=run.ledger).exists()
    html = admin_client_.get(f"/benchmarks/rerank/{run.pk}/").content.decode()
    assert "OPENROUTER_API_KEY is not set" in html


# --------------------------------------------------------------------------- failure after the first answer


def test_an_endpoint_answering_401_to_everything_fails_the_run_after_one_request(retrieval, keys, admin_client_):
    with LoopbackServer(_answer_401) as server:
        run = rerank.rerank_run_create(retrieval_run=retrieval, provider="openai_compatible", model_id="m",
                                       base_url=server.url + "/v1", concurrency=8, enqueue=False)
        assert rerank.rerank_run_execute(run_id=run.pk) == "failed"
        assert len(server.requests) == 1
    run.refresh_from_db()
    assert run.status == "failed" and AUTH_MESSAGE in run.error and "HTTP 401" in run.error
    (receipt,) = Receipt.objects.filter(ledger=run.ledger)
    assert receipt.status == "failed" and receipt.http_status == 401
    grades = rerank.rerank_run_grades(run=run)
    assert [g.status for g in grades] == ["failed"] * 4 and AUTH_MESSAGE in grades[0].error

    html = admin_client_.get(f"/benchmarks/rerank/{run.pk}/").content.decode()
    assert 'data-testid="job-state-text"' in html and AUTH_MESSAGE in html and "failed: provider error" in html
    assert "<strong>1</strong> sent" in html and "<strong>0</strong> answered" in html
    assert "<strong>1</strong> failed" in html
    api = admin_client_.get(f"/api/v1/benchmarks/rerank-runs/{run.pk}/").json()
    assert api["run"]["status"] == "failed" and AUTH_MESSAGE in api["run"]["error"]
    assert api["progress"]["requests_by_status"] == {"sent": 1, "answered": 0, "failed": 1, "unknown": 0,
                                                      "in_flight": 0, "not_sent": 0}


def test_the_command_exits_non_zero_for_a_run_that_failed_on_401(retrieval, keys, capsys):
    with LoopbackServer(_answer_401) as server, pytest.raises(CommandError, match=AUTH_MESSAGE):
        call_command("rerank", "--retrieval-run", str(retrieval.pk), "--provider", "openai_compatible",
                     "--model", "m", "--base-url", server.url + "/v1", "--sync")
    assert len(server.requests) == 1
    assert RerankRun.objects.get().status == "failed"


def test_an_unreachable_endpoint_fails_the_run_and_spends_nothing(retrieval, keys, admin_client_):
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    run = rerank.rerank_run_create(retrieval_run=retrieval, provider="anthropic", model_id="claude-x",
                                   base_url=f"http://127.0.0.1:{port}", enqueue=False)
    assert rerank.rerank_run_execute(run_id=run.pk) == "failed"
    run.refresh_from_db()
    assert "Connection refused" in run.error or "ConnectError" in run.error
    progress = rerank.rerank_run_progress(run=run)
    assert progress.spend.requests == 0 and progress.spend.input_tokens == 0 and progress.spend.not_sent == 1
    assert not RerankGrade.objects.filter(run=run).exists()  # nothing was graded or sent: all never sent
    html = admin_client_.get(f"/benchmarks/rerank/{run.pk}/").content.decode()
    assert "<strong>0</strong> sent" in html and "<strong>1</strong> not sent" in html


def test_a_run_where_every_request_failed_is_failed_not_done(retrieval, keys):
    def answer_500(path, headers, body):
        return Reply(status=500, body=fixture_bytes("openai_error_500.json"))

    with LoopbackServer(answer_500) as server:
        run = rerank.rerank_run_create(retrieval_run=retrieval, provider="openai_compatible", model_id="m",
                                       base_url=server.url + "/v1", enqueue=False)
        assert rerank.rerank_run_execute(run_id=run.pk) == "failed"
        assert len(server.requests) == run.requests_planned  # a 500 does not rule out the others
    run.refresh_from_db()
    assert run.error.startswith(f"every request failed ({run.requests_planned} tried, none answered)")
    assert "The server had an error" in run.error


def test_a_run_with_some_answers_ends_incomplete_and_shows_its_counts(retrieval, keys, admin_client_):
    calls = []

    def answer_some(path, headers, body):
        calls.append(1)
        if len(calls) % 3 == 0:
            return Reply(status=500, body=fixture_bytes("openai_error_500.json"))
        from reviewapp.providers.loopback import default_responder

        return default_responder(path, headers, body)

    with LoopbackServer(answer_some) as server:
        run = rerank.rerank_run_create(retrieval_run=retrieval, provider="openai_compatible", model_id="m",
                                       base_url=server.url + "/v1", concurrency=1, enqueue=False)
        # Not "done" with holes: incomplete, like an extraction or an audit with unanswered requests.
        assert rerank.rerank_run_execute(run_id=run.pk) == "failed"
    run.refresh_from_db()
    failed = sum(g.status == "failed" for g in rerank.rerank_run_grades(run=run))
    assert run.error.startswith(f"incomplete: {failed} of 120 candidates have no grade (failed {failed})"), run.error
    assert "To finish: python manage.py finish_job rerank" in run.error and "--reattempt" in run.error
    spend = rerank.rerank_run_progress(run=run).spend
    assert (spend.requests, spend.answered, spend.failed) == (32, 22, 10)
    assert spend.reported_input_tokens > 0 and spend.estimated_requests == 10  # the 500s reported no usage
    html = admin_client_.get(f"/benchmarks/rerank/{run.pk}/").content.decode()
    assert "<strong>32</strong> sent" in html and "<strong>22</strong> answered" in html
    assert "<strong>10</strong> failed" in html
    assert f"{spend.estimated_input_tokens} estimated</strong> (request bytes + 256" in html  # labelled as such
