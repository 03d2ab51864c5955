"""CUAD label audit: flag, judges (local and LLM through the provider layer), resume without new requests."""

from __future__ import annotations

import hashlib
import io
import json

import numpy as np
import pytest
from django.core.management import call_command

from grading.audits.judging.excerpts import candidate_contexts
from grading.audits.judging.judges import EXEMPLARS, VERDICT_SCHEMA, JudgeChoiceError, parse_choice
from grading.audits.models import Audit, AuditCandidate, AuditVerdict
from grading.audits.services import AuditError, audit_create, audit_execute
from grading.dataset.models import Contract
from grading.runs.services import extraction_run_import
from reviewapp.core.jobs import job_kind_resume
from reviewapp.providers.loopback import LoopbackServer, Reply
from reviewapp.providers.models import Receipt
from scoring.cuad.grading import Thresholds
from scoring.cuad.tokens import SourceIndex, grounding
from tests.grading.audit_support import (
    ABSENT_QUOTES,
    audited_run,
    llm_judges,
    local_audit,
    verdict_responder,
)
from tests.grading.console_support import load, random_run
from tests.grading.cuad_fixture import contracts


@pytest.fixture
def audited(db, tmp_path):
    return audited_run(tmp_path)


@pytest.fixture
def llm_keys(settings):
    settings.PROVIDER_KEYS = {**settings.PROVIDER_KEYS, "openai_compatible": "sk-test", "anthropic": "sk-ant-test"}


# ---------------------------------------------------------------------------
# Flag


@pytest.mark.parametrize("threshold", [0.8, 0.5, 1.0])
def test_candidates_are_exactly_the_grounded_extractions_in_types_cuad_marks_absent(db, tmp_path, threshold):
    loaded = load(tmp_path)
    texts = {c["title"]: c["context"] for c in contracts()}
    labelled = {(c["title"], cat) for c in contracts() for cat, answers in c["answers"].items() if answers}
    for seed in range(4):
        data = random_run(np.random.default_rng(seed), model=f"random-{seed}-{threshold}")
        data["extractions"] += [{"contract": t, "category": k, "text": x} for t, k, x in ABSENT_QUOTES]
        run, _ = extraction_run_import(dataset=loaded.dataset, raw=json.dumps(data))
        expected = [
            i
            for i, e in enumerate(data["extractions"])
            if (e["contract"], e["category"]) not in labelled
            and grounding(e["text"], SourceIndex(texts[e["contract"]])) >= threshold
        ]
        audit = local_audit(run, thresholds=Thresholds(grounding=threshold))
        flagged = list(
            AuditCandidate.objects.filter(audit=audit)
            .order_by("position")
            .values_list("extraction__position", flat=True)
        )
        assert flagged == expected
        assert audit.n_candidates == len(expected) and len(expected) >= 2


def test_the_same_audit_launched_again_is_found_not_duplicated(audited):
    _, run = audited
    first = local_audit(run)
    again = local_audit(run)
    assert again.pk == first.pk and Audit.objects.count() == 1
    other = local_audit(run, thresholds=Thresholds(grounding=0.5))
    assert other.pk != first.pk


def test_the_two_judges_must_differ(audited):
    _, run = audited
    choice = parse_choice("local-description")
    with pytest.raises(AuditError, match="must differ"):
        audit_create(run=run, judge_a=choice, judge_b=choice, queue=False)
    with pytest.raises(JudgeChoiceError):
        parse_choice("anthropic:")


# ---------------------------------------------------------------------------
# Local judges through the provider layer; resume sends nothing for judged candidates


def test_local_judges_rule_on_every_candidate_with_receipts_and_a_rerun_makes_no_new_request(audited):
    _, run = audited
    audit = local_audit(run)
    done = audit_execute(audit_id=audit.pk)
    assert done.status == "done", done.error
    judges = {j.slot: j for j in done.judges.all()}
    assert {j.method for j in judges.values()} == {"local-description", "local-exemplars"}
    assert all(j.heuristic and "heuristic" in j.label for j in judges.values())
    for slot, judge in judges.items():
        verdicts = AuditVerdict.objects.filter(judge=judge)
        assert verdicts.count() == audit.n_candidates
        assert all(v.receipt_id and "cosine" in v.reason and v.score is not None for v in verdicts)
        threshold = judge.params["threshold"]
        assert all(v.verdict == (v.score >= threshold) for v in verdicts), slot
    receipts = Receipt.objects.filter(ledger_id__in=[j.ledger_id for j in judges.values()]).count()
    assert receipts <= 2 * audit.n_candidates  # identical requests share a receipt

    # re-running: the command finds the same audit, a forced resume finds every candidate judged
    out = io.StringIO()
    call_command("audit_cuad", "--run", str(run.pk), "--inline", stdout=out)
    assert f"audit {audit.pk} exists already" in out.getvalue() and "kappa" in out.getvalue()
    Audit.objects.filter(pk=audit.pk).update(status="failed")
    job_kind_resume(audit, enqueue=False)
    assert audit_execute(audit_id=audit.pk).status == "done"
    assert Receipt.objects.filter(ledger_id__in=[j.ledger_id for j in judges.values()]).count() == receipts


def test_the_exemplar_judge_compares_with_cuad_spans_of_the_type_from_other_contracts_only(audited):
    _, run = audited
    audit = local_audit(run)
    candidates = list(audit.candidates.select_related("category"))
    contexts = candidate_contexts(audit=audit, candidates=candidates, excerpts=True, exemplars=True)
    for candidate, ctx in zip(candidates, contexts, strict=True):
        own = Contract.objects.get(pk=candidate.contract_id)
        others = {s.text for s in candidate.category.spans.exclude(contract=own)}
        assert ctx.exemplars and set(ctx.exemplars) <= others
        assert len(ctx.exemplars) <= EXEMPLARS
        assert candidate.text in ctx.excerpt


# ---------------------------------------------------------------------------
# LLM judges at a loopback server: counting requests


def test_llm_judges_send_one_request_per_candidate_and_a_rerun_or_resume_sends_none(audited, llm_keys):
    _, run = audited
    with LoopbackServer(verdict_responder) as server:
        a, b = llm_judges(server.url)
        audit, _ = audit_create(run=run, judge_a=a, judge_b=b, queue=False)
        done = audit_execute(audit_id=audit.pk)
        assert done.status == "done", done.error
        n = audit.n_candidates
        assert len(server.requests) == 2 * n and server.max_count_per_body == 1
        paths = sorted(r["path"] for r in server.requests)
        assert paths.count("/chat/completions") == n and paths.count("/v1/messages") == n
        sent = json.loads(next(r["body"] for r in server.requests if r["path"] == "/chat/completions"))
        assert sent["response_format"]["json_schema"]["schema"] == VERDICT_SCHEMA
        # Neither judge sees the other's verdict: no reason written by one appears in any request.
        reasons = set(AuditVerdict.objects.filter(judge__audit=audit).values_list("reason", flat=True))
        assert all(reason.startswith("loopback-reason-") for reason in reasons)
        assert not any(reason.encode() in r["body"] for reason in reasons for r in server.requests)

        # the same audit launched again: found, nothing sent
        again, created = audit_create(run=run, judge_a=a, judge_b=b, queue=False)
        assert not created and again.pk == audit.pk
        audit_execute(audit_id=again.pk)
        # a forced resume with re-attempt: every candidate is judged, so nothing is prepared or sent
        Audit.objects.filter(pk=audit.pk).update(status="failed")
        job_kind_resume(audit, reattempt=True, enqueue=False)
        assert audit_execute(audit_id=audit.pk).status == "done"
        assert len(server.requests) == 2 * n


def test_failed_requests_are_disclosed_and_only_they_are_resent_on_an_explicit_reattempt(tmp_path, db, llm_keys):
    _, run = audited_run(tmp_path, extra=6)
    state = {"fail": True}

    def flaky(path, headers, body_bytes):
        if state["fail"] and path.endswith("/v1/messages") and hashlib.sha256(body_bytes).digest()[1] % 2:
            return Reply(status=500, body=b'{"error": {"message": "overloaded"}}')
        return verdict_responder(path, headers, body_bytes)

    with LoopbackServer(flaky) as server:
        a, b = llm_judges(server.url)
        audit, _ = audit_create(run=run, judge_a=a, judge_b=b, max_requests=100, queue=False)
        failed = audit_execute(audit_id=audit.pk)
        n = audit.n_candidates
        assert failed.status == "failed" and "never re-sent automatically" in failed.error
        first = len(server.requests)
        assert first == len(server.counts) and server.max_count_per_body == 1  # identical requests share a key
        ledger_b = audit.judges.get(slot="b").ledger_id
        failures = Receipt.objects.filter(ledger_id=ledger_b, status="failed").count()
        ruled_b = AuditVerdict.objects.filter(judge__audit=audit, judge__slot="b").count()
        assert failures > 0 and ruled_b < n
        state["fail"] = False
        job_kind_resume(audit, enqueue=False)
        assert audit_execute(audit_id=audit.pk).status == "failed"
        assert len(server.requests) == first  # resume without re-attempt sends nothing
        job_kind_resume(audit, reattempt=True, enqueue=False)
        assert audit_execute(audit_id=audit.pk).status == "done"
        assert len(server.requests) == first + failures  # only the failed requests, once each
        assert server.max_count_per_body == 2
        assert AuditVerdict.objects.filter(judge__audit=audit).count() == 2 * n


def test_the_budget_preflight_stops_a_judge_at_its_request_limit(audited, llm_keys):
    _, run = audited
    with LoopbackServer(verdict_responder) as server:
        a, b = llm_judges(server.url)
        audit, _ = audit_create(run=run, judge_a=a, judge_b=b, max_requests=1, queue=False)
        stopped = audit_execute(audit_id=audit.pk)
        assert stopped.status == "failed" and "budget reached" in stopped.error
        assert len(server.requests) == 2  # one per judge
