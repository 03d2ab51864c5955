"""The Anthropic path of CUAD extraction (extract_cuad --provider anthropic) and of an Anthropic audit judge,
run end to end against the loopback server answering with the recorded Messages response shape (one forced
tool call, usage with cache tokens)."""

from __future__ import annotations

import copy
import io
import json
from pathlib import Path

import pytest
from django.core.management import call_command

from grading.audits import services as svc
from grading.audits.judges import parse_choice
from grading.audits.models import AuditVerdict
from grading.runs.models import ConsoleJob
from reviewapp.providers.loopback import LoopbackServer, Reply
from reviewapp.providers.models import Receipt
from tests.grading.audit_support import audited_run
from tests.grading.console_support import load

FIXTURE = json.loads((Path(__file__).parents[1] / "providers" / "fixtures" / "anthropic_message_tool_use.json")
                     .read_text())
USAGE = FIXTURE["usage"]
# What the provider layer must report as input: plain input plus both kinds of cache tokens.
REPORTED = USAGE["input_tokens"] + USAGE["cache_creation_input_tokens"] + USAGE["cache_read_input_tokens"]
KEY = "sk-ant-" + "loopback-test-key"


@pytest.fixture
def anthropic_key(settings):
    settings.PROVIDER_KEYS = {**settings.PROVIDER_KEYS, "anthropic": KEY}


def recorded_message(body: dict, answer: dict) -> bytes:
    """The recorded Messages response, its one tool_use block answering the forced tool with ``answer``."""
    message = copy.deepcopy(FIXTURE)
    message["model"] = body["model"]
    message["content"][0]["name"] = body["tool_choice"]["name"]
    message["content"][0]["input"] = answer
    return json.dumps(message).encode()


def assert_anthropic_requests(server: LoopbackServer) -> None:
    for request in server.requests:
        assert request["path"] == "/v1/messages"
        assert request["headers"]["x-api-key"] == KEY
        assert request["headers"]["anthropic-version"] == "2023-06-01"
        assert "authorization" not in request["headers"]
        body = json.loads(request["body"])
        assert body["tool_choice"] == {"type": "tool", "name": body["tools"][0]["name"]}
    assert server.max_count_per_body == 1


def assert_one_receipt_per_request(server: LoopbackServer, ledger_ids) -> None:
    receipts = Receipt.objects.filter(ledger_id__in=list(ledger_ids))
    assert receipts.count() == len(server.requests)
    assert sorted(r.request_body["model"] for r in receipts) == sorted(
        json.loads(r["body"])["model"] for r in server.requests
    )
    for receipt in receipts:
        assert receipt.status == "answered", receipt.error
        assert receipt.reported_input_tokens == REPORTED
        assert receipt.usage["cache_read_input_tokens"] == USAGE["cache_read_input_tokens"]
        assert KEY not in json.dumps(receipt.request_body) and KEY not in receipt.response_body


# ---------------------------------------------------------------------------
# Extraction


def _sentence(body: dict) -> str:
    """The loopback model's quote: the second sentence of the contract it was sent."""
    user = body["messages"][-1]["content"]
    contract = user.split("<contract>\n", 1)[1].split("\n</contract>", 1)[0]
    return contract.split(". ")[1] if ". " in contract else contract


def _quotes(path: str, headers: dict, body_bytes: bytes) -> Reply:
    body = json.loads(body_bytes)
    answer = {"extractions": [{"category": "Governing Law", "quote": _sentence(body)}]}
    return Reply(body=recorded_message(body, answer))


def test_extract_cuad_with_anthropic_sends_one_forced_tool_call_per_contract_and_stores_the_quotes(
    db, tmp_path, anthropic_key
):
    loaded = load(tmp_path)
    with LoopbackServer(_quotes) as server:
        out = io.StringIO()
        call_command(
            "extract_cuad", "--provider", "anthropic", "--model", "claude-test", "--base-url", server.url,
            "--sample", str(loaded.sample.pk), "--inline", stdout=out,
        )
        job = ConsoleJob.objects.get()
        assert job.status == "done", job.error
        assert f"run {job.run_id}" in out.getvalue()
        assert len(server.requests) == job.total == 4
        assert_anthropic_requests(server)
        assert_one_receipt_per_request(server, [job.ledger_id])
        sent = json.loads(server.requests[0]["body"])
        assert sent["tools"][0]["name"] == "cuad_extractions"
        assert sent["tools"][0]["input_schema"]["properties"]["extractions"]["items"]["required"] == [
            "category", "quote"
        ]

        # the parsed answers are what the run holds: one Governing Law quote per contract, verbatim
        expected = [_sentence(json.loads(request["body"])) for request in server.requests]
        stored = list(job.run.extractions.values_list("category__name", "text"))
        assert sorted(stored) == sorted(("Governing Law", q) for q in expected)
        assert all(g == 1.0 for g in job.run.extractions.values_list("grounding", flat=True))

        # resuming the finished requests sends nothing new: answers come from their receipts
        ConsoleJob.objects.filter(pk=job.pk).update(status="failed")
        job.contracts.update(done=False)
        call_command("extract_cuad", "--resume", str(job.pk), "--inline", stdout=io.StringIO())
        assert ConsoleJob.objects.get(pk=job.pk).status == "done"
        assert len(server.requests) == 4


def test_a_truncated_anthropic_answer_is_a_failed_request_not_a_stored_extraction(db, tmp_path, anthropic_key):
    loaded = load(tmp_path)

    def truncated(path, headers, body_bytes):
        body = json.loads(body_bytes)
        message = json.loads(recorded_message(body, {"extractions": []}))
        message["stop_reason"] = "max_tokens"
        return Reply(body=json.dumps(message).encode())

    with LoopbackServer(truncated) as server:
        with pytest.raises(Exception, match="never re-sent automatically"):
            call_command(
                "extract_cuad", "--provider", "anthropic", "--model", "claude-test", "--base-url", server.url,
                "--sample", str(loaded.sample.pk), "--limit", "2", "--inline", stdout=io.StringIO(),
            )
        job = ConsoleJob.objects.get()
        assert job.status == "failed" and job.run_id is None
        assert len(server.requests) == 2
        receipts = Receipt.objects.filter(ledger_id=job.ledger_id)
        assert receipts.count() == 2 and set(receipts.values_list("status", flat=True)) == {"failed"}
        assert all("max_tokens" in r.error and r.reported_input_tokens == REPORTED for r in receipts)


# ---------------------------------------------------------------------------
# Audit judge


def _verdicts(path: str, headers: dict, body_bytes: bytes) -> Reply:
    body = json.loads(body_bytes)
    quote = body["messages"][-1]["content"].split("<quote>\n", 1)[1].split("\n</quote>", 1)[0]
    verdict = "yes" if len(quote) % 2 else "no"
    return Reply(body=recorded_message(body, {"verdict": verdict, "reason": f"anthropic says {verdict}"}))


def test_anthropic_audit_judges_rule_through_a_forced_tool_call_with_receipts_and_cache_tokens(
    db, tmp_path, anthropic_key
):
    _, run = audited_run(tmp_path)
    with LoopbackServer(_verdicts) as server:
        a = parse_choice("anthropic:claude-judge-a", base_url=server.url)
        b = parse_choice("anthropic:claude-judge-b", base_url=server.url)
        audit, _ = svc.audit_create(run=run, judge_a=a, judge_b=b, queue=False)
        done = svc.audit_execute(audit_id=audit.pk)
        assert done.status == "done", done.error
        n = audit.n_candidates
        assert n >= 3 and len(server.requests) == 2 * n
        assert_anthropic_requests(server)
        ledgers = list(audit.judges.values_list("ledger_id", flat=True))
        assert_one_receipt_per_request(server, ledgers)
        assert json.loads(server.requests[0]["body"])["tools"][0]["name"] == "cuad_label_verdict"

        for verdict in AuditVerdict.objects.filter(judge__audit=audit).select_related("candidate"):
            expected = len(verdict.candidate.text) % 2 == 1
            assert verdict.verdict == expected
            assert verdict.reason == f"anthropic says {'yes' if expected else 'no'}"
            receipt = Receipt.objects.get(pk=verdict.receipt_id)
            assert receipt.request_key == verdict.request_key and receipt.parse["data"]["reason"] == verdict.reason

        # a resume with re-attempt asks nothing: every candidate has its verdict
        type(audit).objects.filter(pk=audit.pk).update(status="failed")
        svc.audit_resume(audit=audit, reattempt=True, queue=False)
        assert svc.audit_execute(audit_id=audit.pk).status == "done"
        assert len(server.requests) == 2 * n
