"""The receipt ledger: preflight, no retries, resume, unknown disclosure, determinism, export."""

from __future__ import annotations

import json

import pytest

from reviewapp.providers import selectors, services
from reviewapp.providers.clients import client_for_ledger
from reviewapp.providers.loopback import LoopbackServer, Reply, default_responder
from reviewapp.providers.models import Receipt
from reviewapp.providers.spend.budget import estimate_input_tokens
from reviewapp.providers.types import GradeSpec

pytestmark = pytest.mark.django_db


def _specs(n: int, items: int = 4) -> list[GradeSpec]:
    return [
        GradeSpec(system="Grade each passage 0-3.", user=f"Question {q}: items " + " | ".join(f"p{q}.{i}" for i in
                  range(items)), query=f"question {q}", items=tuple(f"p{q}.{i}" for i in range(items)))
        for q in range(n)
    ]


def _ledger(server, **kwargs):
    defaults = {"purpose": "test", "provider": "openai_compatible", "model_id": "loop/model",
                "base_url": server.url + "/v1", "max_requests": 100, "max_input_tokens": 1_000_000, "concurrency": 4}
    return services.ledger_create(**{**defaults, **kwargs})


def _run(ledger, specs, **kwargs):
    client = client_for_ledger(ledger)
    requests = [client.prepare_grades(s) for s in specs]
    try:
        return services.ledger_execute(ledger=ledger, client=client, requests=requests, **kwargs), requests
    finally:
        client.close()


def test_every_request_gets_one_receipt_with_the_documented_fields(planted_keys, loopback):
    ledger = _ledger(loopback)
    report, requests = _run(ledger, _specs(5))
    assert report.counts == {"answered": 5}
    receipts = list(Receipt.objects.filter(ledger=ledger))
    assert [r.seq for r in receipts] == [1, 2, 3, 4, 5]
    assert [r.request_key for r in receipts] == [r.key for r in requests]
    for receipt, request in zip(receipts, requests, strict=True):
        assert receipt.status == "answered" and receipt.attempt == 1 and receipt.http_status == 200
        assert receipt.request_bytes == len(request.body_bytes)
        assert receipt.request_body == request.body
        assert json.loads(receipt.response_body)["object"] == "chat.completion"
        assert receipt.parse["method"] == "logprobs" and len(receipt.parse["grades"]) == 4
        assert receipt.reported_input_tokens == receipt.usage["prompt_tokens"]
        assert receipt.sent_at <= receipt.answered_at and receipt.latency_ms > 0


def test_the_request_count_budget_stops_the_run_cleanly(planted_keys, loopback):
    ledger = _ledger(loopback, max_requests=3)
    report, _ = _run(ledger, _specs(5))
    assert report.counts == {"answered": 3, "not_sent": 2}
    assert "3 of 3 attempted requests" in report.stop_reason
    assert len(loopback.requests) == 3
    ledger.refresh_from_db()
    assert ledger.stop_reason == report.stop_reason


def test_byte_preflight_never_sends_a_request_that_could_cross_the_token_limit(planted_keys, loopback):
    specs = _specs(3)
    big = GradeSpec(system="s", user="x" * 50_000, query="q", items=("a",))
    ledger = _ledger(loopback, max_input_tokens=40_000)
    report, requests = _run(ledger, [specs[0], big, specs[1]])
    assert estimate_input_tokens(len(requests[1].body_bytes)) > 40_000
    assert report.results[0].status == "answered"
    assert report.results[1].status == report.results[2].status == "not_sent"
    assert "estimated at" in report.stop_reason
    assert len(loopback.requests) == 1


def test_reported_tokens_replace_estimates_in_the_spend(planted_keys, loopback):
    ledger = _ledger(loopback)
    _run(ledger, _specs(3))
    spend = selectors.ledger_spend(ledger=ledger)
    reported = sum(r.reported_input_tokens for r in Receipt.objects.filter(ledger=ledger))
    assert spend.input_tokens == spend.reported_input_tokens == reported
    assert spend.requests == 3 and spend.by_status == {"answered": 3}


def test_failures_are_recorded_once_and_never_retried(planted_keys):
    replies = iter([Reply(status=500, body=b'{"error":{"message":"boom"}}'),
                    Reply(status=429, body=b'{"error":{"message":"slow down"}}')])

    def responder(path, headers, body):
        return next(replies, None) or default_responder(path, headers, body)

    with LoopbackServer(responder) as server:
        ledger = _ledger(server, concurrency=1)
        report, requests = _run(ledger, _specs(4))
        assert [r.status for r in report.results] == ["failed", "failed", "answered", "answered"]
        assert server.max_count_per_body == 1 and len(server.requests) == 4
        failed = Receipt.objects.get(ledger=ledger, seq=1)
        assert failed.http_status == 500 and failed.error == "HTTP 500: boom" and "boom" in failed.response_body
        # Resuming discloses the failures and does not send them again.
        again, _ = _run(ledger, _specs(4))
        assert again.sent == 0 and [r.status for r in again.results] == ["failed", "failed", "answered", "answered"]
        assert len(server.requests) == 4
        # An explicit re-attempt sends it once more, as attempt 2, counted against the budget.
        third, _ = _run(ledger, _specs(4), reattempt_keys=[requests[0].key])
        assert third.sent == 1 and third.results[0].status == "answered" and third.results[0].attempt == 2
        assert Receipt.objects.filter(ledger=ledger).count() == 5
        assert selectors.ledger_spend(ledger=ledger).requests == 5


def test_a_request_sent_without_a_recorded_answer_becomes_unknown_and_is_not_resent(planted_keys, loopback):
    ledger = _ledger(loopback)
    client = client_for_ledger(ledger)
    requests = [client.prepare_grades(s) for s in _specs(3)]
    # A worker opened the receipt for request 1 and died before the answer was recorded.
    services._receipt_open(ledger=ledger, seq=1, prepared=requests[1], attempt=1, estimate=999)
    report = services.ledger_execute(ledger=ledger, client=client, requests=requests)
    assert report.unknown_disclosed == 1
    assert [r.status for r in report.results] == ["answered", "unknown", "answered"]
    assert "no answer was recorded" in report.results[1].error
    sent_bodies = {r["body"] for r in loopback.requests}
    assert requests[1].body_bytes not in sent_bodies and len(loopback.requests) == 2
    assert selectors.ledger_spend(ledger=ledger).input_tokens >= 999  # the unknown one is charged its estimate


def test_a_timeout_is_recorded_as_unknown(planted_keys, settings):
    with LoopbackServer(lambda p, h, b: Reply(body=b"{}", delay=1.0)) as server:
        ledger = _ledger(server)
        client = client_for_ledger(ledger)
        client._http.timeout = __import__("httpx").Timeout(0.2)
        requests = [client.prepare_grades(_specs(1)[0])]
        report = services.ledger_execute(ledger=ledger, client=client, requests=requests)
    receipt = Receipt.objects.get(ledger=ledger)
    assert report.results[0].status == receipt.status == "unknown"
    assert receipt.answered_at is None and receipt.reported_input_tokens is None


def test_receipts_are_deterministic_whatever_the_concurrency(planted_keys):
    with LoopbackServer(latency=0.01) as server:
        seen = []
        for concurrency in (1, 8):
            ledger = _ledger(server, concurrency=concurrency)
            _run(ledger, _specs(12))
            seen.append([(r.seq, r.request_key, r.attempt, r.status, r.response_body, json.dumps(r.parse))
                         for r in Receipt.objects.filter(ledger=ledger)])
        assert seen[0] == seen[1]


def test_cancelling_stops_sending_and_keeps_what_was_answered(planted_keys, loopback):
    ledger = _ledger(loopback, concurrency=1)
    calls = iter(range(100))
    report, _ = _run(ledger, _specs(5), should_stop=lambda: "cancelled by alice" if next(calls) >= 2 else "")
    assert report.counts == {"answered": 2, "not_sent": 3}
    assert report.stop_reason == "cancelled by alice"


def test_duplicate_requests_share_one_receipt(planted_keys, loopback):
    spec = _specs(1)[0]
    ledger = _ledger(loopback)
    seen = []
    report, _ = _run(ledger, [spec, spec], on_result=lambda r: seen.append(r.index))
    assert report.counts == {"answered": 2} and len(loopback.requests) == 1
    assert sorted(seen) == [0, 1]


def test_receipts_are_append_only(planted_keys, loopback):
    ledger = _ledger(loopback)
    _run(ledger, _specs(1))
    receipt = Receipt.objects.get(ledger=ledger)
    receipt.error = "rewritten"
    with pytest.raises(RuntimeError, match="append-only"):
        receipt.save()


def test_the_jsonl_export_has_a_header_and_one_line_per_receipt(planted_keys, loopback):
    ledger = _ledger(loopback)
    _run(ledger, _specs(3))
    lines = [json.loads(line) for line in selectors.receipts_jsonl(ledger=ledger)]
    assert lines[0]["record"] == "ledger" and lines[0]["model_id"] == "loop/model"
    assert [line["seq"] for line in lines[1:]] == [1, 2, 3]
    assert set(selectors.EXPORT_FIELDS) <= set(lines[1])


def test_local_ledgers_record_receipts_too(db):
    ledger = services.ledger_create(purpose="t", provider="local", model_id="all-MiniLM-L6-v2-onnx-int8",
                                    max_requests=5, max_input_tokens=100_000)
    report, _ = _run(ledger, _specs(2, items=2))
    assert report.counts == {"answered": 2}
    receipt = Receipt.objects.filter(ledger=ledger).first()
    assert receipt.method == "local heuristic" and receipt.request_url.startswith("local:")
    assert len(json.loads(receipt.response_body)["cosines"]) == 2
