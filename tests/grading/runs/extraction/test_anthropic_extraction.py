"""The Anthropic path of CUAD extraction (extract_cuad --provider anthropic), end to end against the loopback server."""

from __future__ import annotations

import io
import json

import pytest
from django.core.management import call_command

from grading.runs.models import ConsoleJob
from reviewapp.providers.loopback import LoopbackServer, Reply
from reviewapp.providers.models import Receipt
from tests.grading.anthropic_support import (
    REPORTED,
    assert_anthropic_requests,
    assert_one_receipt_per_request,
    quotes_reply,
    recorded_message,
    second_sentence,
)
from tests.grading.console_support import load


def test_extract_cuad_with_anthropic_sends_one_forced_tool_call_per_contract_and_stores_the_quotes(
    db, tmp_path, anthropic_key
):
    loaded = load(tmp_path)
    with LoopbackServer(quotes_reply) as server:
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
        expected = [second_sentence(json.loads(request["body"])) for request in server.requests]
        stored = list(job.run.extractions.values_list("category__name", "text"))
        assert sorted(stored) == sorted(("Governing Law", q) for q in expected)
        assert all(g == 1.0 for g in job.run.extractions.values_list("grounding", flat=True))

        # resuming the finished requests sends nothing new: answers come from their receipts
        ConsoleJob.objects.filter(pk=job.pk).update(status="failed")
        job.contracts.update(done=False)
        call_command("finish_job", "extraction", str(job.pk), "--inline", stdout=io.StringIO())
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
