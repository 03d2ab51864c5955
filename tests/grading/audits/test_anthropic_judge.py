"""An Anthropic audit judge, end to end against the loopback server answering with the recorded Messages shape."""

from __future__ import annotations

import json

from grading.audits.judging.judges import parse_choice
from grading.audits.models import AuditVerdict
from grading.audits.services import audit_create, audit_execute
from reviewapp.core.jobs import job_kind_resume
from reviewapp.providers.loopback import LoopbackServer
from reviewapp.providers.models import Receipt
from tests.grading.anthropic_support import assert_anthropic_requests, assert_one_receipt_per_request, verdicts_reply
from tests.grading.audit_support import audited_run


def test_anthropic_audit_judges_rule_through_a_forced_tool_call_with_receipts_and_cache_tokens(
    db, tmp_path, anthropic_key
):
    _, run = audited_run(tmp_path)
    with LoopbackServer(verdicts_reply) as server:
        a = parse_choice("anthropic:claude-judge-a", base_url=server.url)
        b = parse_choice("anthropic:claude-judge-b", base_url=server.url)
        # The recorded response reports the usage of the (longer) prompt it was recorded with, more than this
        # test's small contracts would cost: a budget that holds that reported usage, so the budget rule
        # (spend = the provider's reported usage) is not what this test trips over.
        audit, _ = audit_create(run=run, judge_a=a, judge_b=b, queue=False, max_input_tokens=100_000)
        done = audit_execute(audit_id=audit.pk)
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
        job_kind_resume(audit, reattempt=True, enqueue=False)
        assert audit_execute(audit_id=audit.pk).status == "done"
        assert len(server.requests) == 2 * n
