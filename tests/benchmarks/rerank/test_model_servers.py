"""A statute rerank run against a real loopback OpenAI-compatible server with NO key, chosen per run.

Through real httpx to 127.0.0.1, in each shape such servers return: logprobs, a JSON-schema answer, a server
that ignores logprobs, a model that ignores the schema (some requests or all). Every run is labelled
"simulated provider" on its pages and exports, since the loopback test server says its answers are simulated.
"""

from __future__ import annotations

import json

import pytest

from benchmarks.reports.selectors import rerank_scores_from_run
from benchmarks.rerank import services as rerank
from benchmarks.rerank.models import RerankGrade, RerankRun
from benchmarks.rerank.questions import DEFAULT_VERSION
from reviewapp.core.jobs import job_kind_resume
from reviewapp.providers.loopback import LoopbackServer, Reply, responder_for
from reviewapp.providers.models import Receipt
from tests.benchmarks.rerank.fixtures import synthetic_retrieval_run

MODEL = "qwen2.5:7b-instruct"  # any id: the server decides what it means


@pytest.fixture
def no_keys(settings):
    settings.PROVIDER_KEYS = {"openrouter": "", "openai_compatible": "", "anthropic": ""}


@pytest.fixture
def retrieval(db):
    return synthetic_retrieval_run(sections=24, ranking=2)


def _run(retrieval, server: LoopbackServer, method: str) -> RerankRun:
    run = rerank.rerank_run_create(retrieval_run=retrieval, provider="openai_compatible", model_id=MODEL,
                                   method=method, base_url=server.url + "/v1/", enqueue=False)
    rerank.rerank_run_execute(run_id=run.pk)
    run.refresh_from_db()
    return run


def _statuses(run: RerankRun) -> dict[str, int]:
    out: dict[str, int] = {}
    for status in RerankGrade.objects.filter(run=run).values_list("status", flat=True):
        out[status] = out.get(status, 0) + 1
    return out


@pytest.mark.parametrize("method", ["logprobs", "structured"])
def test_a_keyless_server_grades_every_candidate_and_the_run_says_simulated(
        retrieval, no_keys, method, admin_client_):
    with LoopbackServer(shape="auto") as server:
        run = _run(retrieval, server, method)
        sent = list(server.requests)
    assert run.status == "done", run.error
    assert _statuses(run) == {"graded": run.candidates_planned}
    assert len(sent) == run.requests_planned and max(server.counts.values()) == 1
    for request in sent:
        assert "authorization" not in request["headers"]  # no key configured, none sent
        body = json.loads(request["body"])
        assert body["model"] == MODEL and request["path"] == "/v1/chat/completions"
        assert ("logprobs" in body) == (method == "logprobs")
        assert ("response_format" in body) == (method == "structured")
    # The pinned configuration: base URL (trailing slash dropped) and model id, on the ledger and the page.
    assert run.ledger.base_url == server.url + "/v1" and run.ledger.model_id == MODEL
    assert set(RerankGrade.objects.filter(run=run).values_list("method", flat=True)) == {method}
    assert run.ledger.simulated and Receipt.objects.filter(ledger=run.ledger, simulated=True).count() == len(sent)

    page = admin_client_.get(f"/benchmarks/rerank/{run.pk}/").content.decode()
    assert "simulated provider" in page and server.url + "/v1" in page
    assert "simulated provider" in admin_client_.get("/benchmarks/rerank/").content.decode()
    api = admin_client_.get(f"/api/v1/benchmarks/rerank-runs/{run.pk}/").json()["run"]
    assert api["simulated"] is True and api["base_url"] == server.url + "/v1"
    lines = [json.loads(line) for line in b"".join(
        admin_client_.get(f"/benchmarks/rerank/{run.pk}/receipts.jsonl").streaming_content).decode().splitlines()]
    assert lines[0]["record"] == "ledger" and lines[0]["simulated"] is True
    assert lines[0]["label"] == "simulated provider" and lines[0]["base_url"] == server.url + "/v1"
    assert all(line["simulated"] is True for line in lines[1:])
    # Reports, leaderboards and the summary name the run by this label.
    assert rerank_scores_from_run(run=run).meta.provider_label.startswith("simulated provider")
    if method == "logprobs":  # the report pages once (they compute bootstrap intervals)
        board = f"/benchmarks/reports/leaderboard/{retrieval.pk}/"
        for url in (board, board + "leaderboard.json", board + "leaderboard.csv",
                    f"/benchmarks/reports/summary/{retrieval.pk}/", f"/benchmarks/reports/rerank/{run.pk}/"):
            response = admin_client_.get(url)
            assert response.status_code == 200 and "simulated provider" in response.content.decode(), url


def test_a_real_answer_without_the_marker_is_not_labelled_simulated(retrieval, no_keys):
    marked = responder_for("auto")

    def unmarked(path, headers, body):
        reply = marked(path, headers, body)
        return Reply(status=reply.status, body=reply.body)

    with LoopbackServer(unmarked) as server:
        run = _run(retrieval, server, "logprobs")
    assert run.status == "done" and not run.simulated
    assert not Receipt.objects.filter(ledger=run.ledger, simulated=True).exists()
    assert "simulated provider" not in rerank_scores_from_run(run=run).meta.provider_label


def test_a_server_that_ignores_logprobs_fails_each_request_clearly_and_resends_nothing(retrieval, no_keys):
    with LoopbackServer(shape="no-logprobs") as server:
        run = _run(retrieval, server, "logprobs")
        assert len(server.requests) == run.requests_planned and server.max_count_per_body == 1
    assert _statuses(run) == {"failed": run.candidates_planned}
    errors = set(Receipt.objects.filter(ledger=run.ledger).values_list("error", flat=True))
    assert errors == {"invalid answer: answer carries no logprobs (model or backend ignored them; use structured)"}
    # Resuming without an explicit re-attempt sends nothing again.
    job_kind_resume(run, take_over=True, ask_workers=False, enqueue=False)
    rerank.rerank_run_execute(run_id=run.pk)
    assert len(server.requests) == run.requests_planned


def test_a_model_that_ignores_the_schema_on_some_requests_leaves_a_partial_run(retrieval, no_keys):
    honest = responder_for("auto")
    careless = responder_for("ignore-schema")
    seen: list[int] = []

    def sometimes(path, headers, body):
        seen.append(1)
        return careless(path, headers, body) if len(seen) % 3 == 0 else honest(path, headers, body)

    with LoopbackServer(sometimes) as server:
        run = _run(retrieval, server, "structured")
        assert server.max_count_per_body == 1  # nothing retried by itself
    statuses = _statuses(run)
    assert statuses["graded"] > 0 and statuses["failed"] > 0
    assert sum(statuses.values()) == run.candidates_planned
    failed = Receipt.objects.filter(ledger=run.ledger, status="failed")
    assert failed.count() == len(seen) // 3
    assert {e.split(" (")[0] for e in failed.values_list("error", flat=True)} == {
        "invalid answer: message content is not valid JSON"}
    scores = rerank_scores_from_run(run=run)
    assert scores.errors and all("failed of" in why and "not valid JSON" in why for why in scores.errors.values())
    assert scores.meta.counts["requests_failed"] == failed.count()


@pytest.mark.parametrize(("base_url", "message"), [
    ("http://user:sk-secret-in-url@127.0.0.1:9/v1", "must not carry credentials"),
    ("http://127.0.0.1:9/v1?api_key=sk-secret-in-url", "must not carry a query string"),
    ("ftp://127.0.0.1:9/v1", "must start with http:// or https://"),
    ("http:///v1", "has no host"),
    ("http://127.0.0.1:99999/v1", "has an invalid port"),
])
def test_the_launch_page_refuses_a_bad_base_url_by_name_and_never_echoes_a_secret(
        retrieval, admin_client_, base_url, message):
    response = admin_client_.post("/benchmarks/rerank/new/", {
        "retrieval_run": retrieval.pk, "provider": "openai_compatible", "model_id": "m", "base_url": base_url,
        "question_version": DEFAULT_VERSION, "candidates_per_request": 4, "max_requests": 10,
        "max_input_tokens": 1000,
    })
    text = response.content.decode()
    assert response.status_code == 200 and message in text and "base URL" in text
    assert "sk-secret-in-url" not in text and not RerankRun.objects.exists()


def test_the_launch_api_takes_the_base_url_per_run(retrieval, no_keys, admin_client_):
    response = admin_client_.post("/api/v1/benchmarks/rerank-runs/", {
        "retrieval_run": retrieval.pk, "provider": "openai_compatible", "model_id": "llama3.2:3b",
        "base_url": "http://127.0.0.1:11434/v1", "method": "structured"}, content_type="application/json")
    assert response.status_code == 202, response.content
    run = RerankRun.objects.get(pk=response.json()["id"])
    assert (run.ledger.base_url, run.model_id, run.method) == ("http://127.0.0.1:11434/v1", "llama3.2:3b",
                                                               "structured")


def test_the_command_takes_the_base_url_and_says_simulated(retrieval, no_keys, capsys):
    from django.core.management import call_command

    with LoopbackServer() as server:
        call_command("rerank", "--retrieval-run", str(retrieval.pk), "--provider", "openai_compatible",
                     "--model", "phi3:mini", "--method", "structured", "--base-url", server.url + "/v1", "--sync")
    out = capsys.readouterr().out
    assert f"openai_compatible:phi3:mini at {server.url}/v1" in out and "simulated provider" in out


def test_the_local_provider_refuses_a_base_url(retrieval):
    with pytest.raises(rerank.RerankError, match="the local provider runs on this machine"):
        rerank.rerank_run_create(retrieval_run=retrieval, provider="local", base_url="http://127.0.0.1:1/v1",
                                 enqueue=False)
