"""Answers that rule out every request stop a ledger after the first one; spend counts only what was sent."""

from __future__ import annotations

import socket

import pytest

from reviewapp.providers import selectors, services
from reviewapp.providers.clients import client_for_ledger
from reviewapp.providers.clients.base import CONTEXT_EXCEEDED_PREFIX, fatal_reason, http_error, provider_message
from reviewapp.providers.loopback import LoopbackServer, Reply
from reviewapp.providers.models import Receipt
from reviewapp.providers.types import GradeSpec, SendOutcome
from tests.reviewapp.providers.conftest import fixture_bytes, fixture_reply

pytestmark = pytest.mark.django_db


def _specs(n: int) -> list[GradeSpec]:
    return [GradeSpec(system="Grade 0-3.", user=f"question {q}", query=f"q{q}", items=(f"a{q}", f"b{q}"))
            for q in range(n)]


def _execute(ledger, n: int):
    client = client_for_ledger(ledger)
    try:
        return services.ledger_execute(ledger=ledger, client=client,
                                       requests=[client.prepare_grades(s) for s in _specs(n)])
    finally:
        client.close()


def free_port() -> int:
    """A loopback port where nothing listens (connections are refused) until a server is started on it."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def _answered(status: int, fixture: str) -> SendOutcome:
    return SendOutcome(sent=True, answered=True, http_status=status, body_text=fixture_bytes(fixture).decode(),
                       latency_ms=1.0)


@pytest.mark.parametrize(("status", "fixture", "expected"), [
    (401, "openrouter_error_401.json", "authentication refused: HTTP 401: No auth credentials found"),
    (401, "anthropic_error_401.json", "authentication refused: HTTP 401: invalid x-api-key (authentication_error)"),
    (404, "anthropic_error_404_model.json", "unknown model or endpoint: HTTP 404: model: claude-nonexistent"),
    (400, "openrouter_error_400_model.json", "unknown model: HTTP 400: openai/gpt-nonexistent is not a valid model"),
])
def test_answers_that_rule_out_every_request_are_fatal_with_the_providers_message(status, fixture, expected):
    assert fatal_reason(_answered(status, fixture)).startswith(expected)


@pytest.mark.parametrize(("status", "fixture"), [(429, "openai_error_429.json"), (500, "openai_error_500.json"),
                                                 (429, "anthropic_error_429.json"), (529, "anthropic_error_529.json")])
def test_passing_errors_are_not_fatal(status, fixture):
    assert fatal_reason(_answered(status, fixture)) == ""
    assert provider_message(fixture_bytes(fixture).decode())  # but their message is still read


def test_a_refused_connection_is_fatal():
    outcome = SendOutcome(sent=False, answered=False, http_status=None, body_text="", latency_ms=0.1,
                          error="not sent: endpoint unreachable: ConnectError: [Errno 111] Connection refused")
    assert "Connection refused" in fatal_reason(outcome)


def test_an_endpoint_answering_401_to_everything_stops_after_exactly_one_request(planted_keys):
    with LoopbackServer(lambda path, headers, body: fixture_reply("openrouter_error_401.json", status=401)) as server:
        ledger = services.ledger_create(purpose="t", provider="openai_compatible", model_id="m",
                                        base_url=server.url + "/v1", max_requests=50, max_input_tokens=10**6,
                                        concurrency=8)
        report = _execute(ledger, 10)
        assert len(server.requests) == 1
    assert report.fatal == "authentication refused: HTTP 401: No auth credentials found"
    assert [r.status for r in report.results] == ["failed"] + ["not_sent"] * 9
    assert all("No auth credentials found" in r.error for r in report.results)
    receipt = Receipt.objects.get(ledger=ledger)
    assert receipt.status == "failed" and receipt.http_status == 401
    assert receipt.error == "HTTP 401: No auth credentials found"
    ledger.refresh_from_db()
    assert "No auth credentials found" in ledger.stop_reason
    assert selectors.ledger_spend(ledger=ledger).requests == 1  # it was sent: the provider saw it


def test_a_refused_connection_is_not_spend_and_a_later_execution_sends_it(planted_keys):
    port = free_port()
    ledger = services.ledger_create(purpose="t", provider="openai_compatible", model_id="m",
                                    base_url=f"http://127.0.0.1:{port}/v1", max_requests=3, max_input_tokens=10**6,
                                    concurrency=4)
    report = _execute(ledger, 4)
    assert report.sent == 0 and "Connection refused" in report.fatal
    receipt = Receipt.objects.get(ledger=ledger)  # the first request alone was tried; it stopped there
    assert receipt.status == "not_sent" and receipt.spent_input_tokens == 0
    spend = selectors.ledger_spend(ledger=ledger)
    assert (spend.requests, spend.input_tokens, spend.estimated_input_tokens, spend.not_sent) == (0, 0, 0, 1)

    # The endpoint comes up: nothing reached it before, so every request is sent now, within the same budget.
    with LoopbackServer(port=port) as server:
        again = _execute(ledger, 3)
        assert len(server.requests) == 3 and server.max_count_per_body == 1
    assert [r.status for r in again.results] == ["answered"] * 3 and again.results[0].attempt == 2
    assert selectors.ledger_spend(ledger=ledger).requests == 3


def test_a_missing_key_at_send_time_is_not_spend(settings):
    settings.PROVIDER_KEYS = {"openrouter": "", "openai_compatible": "", "anthropic": ""}
    ledger = services.ledger_create(purpose="t", provider="anthropic", model_id="claude-x",
                                    base_url="https://api.anthropic.com", max_requests=5, max_input_tokens=10**6)
    report = _execute(ledger, 3)
    assert "ANTHROPIC_API_KEY is not set" in report.fatal and report.sent == 0
    spend = selectors.ledger_spend(ledger=ledger)
    assert spend.requests == 0 and spend.input_tokens == 0 and spend.not_sent == 1


def test_an_unanswered_request_is_charged_an_estimate_labelled_as_such(planted_keys):
    with LoopbackServer(lambda p, h, b: Reply(status=200, body=b"{}", truncate_to=1)) as server:
        ledger = services.ledger_create(purpose="t", provider="openai_compatible", model_id="m",
                                        base_url=server.url + "/v1", max_requests=5, max_input_tokens=10**6,
                                        concurrency=1)
        _execute(ledger, 2)
    spend = selectors.ledger_spend(ledger=ledger)
    receipts = list(Receipt.objects.filter(ledger=ledger))
    assert spend.requests == 2 and spend.reported_input_tokens == 0
    assert spend.estimated_input_tokens == sum(r.estimated_input_tokens for r in receipts) == spend.input_tokens
    assert spend.estimated_requests == 2


def test_a_request_longer_than_the_context_is_named_and_stops_nothing():
    # Recorded from llama-cpp-python's server (make model-server) on a 12k-token request to an 8k context.
    outcome = _answered(400, "llamacpp_python_error_400_context.json")
    assert fatal_reason(outcome) == ""
    error = http_error(outcome)
    assert error.startswith(f"{CONTEXT_EXCEEDED_PREFIX}: HTTP 400: This model's maximum context length is 8192 tokens")


def test_a_server_refusing_the_schema_form_is_fatal_and_says_what_to_configure():
    # Recorded: llama-cpp-python's server answers OpenAI's response_format json_schema with HTTP 500.
    reason = fatal_reason(_answered(500, "llamacpp_python_error_500_json_schema.json"))
    assert reason.startswith("answer format refused: HTTP 500: 1 validation error")
    assert "OPENAI_COMPATIBLE_JSON_OBJECT_ORIGINS" in reason
