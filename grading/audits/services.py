"""CUAD label audit: flag -> two independent judges -> agreement -> measured impact -> humans settle it.

After Northcutt, Athalye & Mueller, Pervasive Label Errors in Test Sets
(NeurIPS 2021): CUAD's "absent" labels are treated as suspect.

- Flag (``audit_candidates_for``): an extraction of the run, in the sample's
  contracts, whose grounding is at or above the audit's grounding threshold
  (verbatim in the contract) in a clause type for which CUAD has NO span in
  that contract. Exactly those; copied into ``AuditCandidate`` once.
- Judge (``audit_execute``): each of the two judges (``grading.audits.judging.judges``)
  gets one request per candidate through the shared provider layer, on its own
  ledger (receipts, budget preflight, no automatic retries). A candidate a
  judge has already ruled on is never asked again (its verdict row is the
  proof), and answered request keys are served from their receipts. What a
  judge is shown of a candidate: ``grading.audits.judging.excerpts``.
- Agreement and impact (``grading.audits.selectors``): Cohen's kappa over the
  candidates both judges ruled on, and the scorecard before and after crediting
  the candidates both judges confirm.
- Humans (``grading.audits.review``): the candidates become a blinded review
  pool of kind "clause".

This module holds the writes: create, flag, execute, resume.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence

from django.conf import settings
from django.db import IntegrityError, transaction
from django.db.models.functions import Now

from grading.audits.judging.excerpts import candidate_contexts
from grading.audits.judging.judges import EXEMPLARS_METHOD, LLM, JudgeChoice, Ruling, no_request_ruling, prepare, rule
from grading.audits.models import Audit, AuditCandidate, AuditJudge, AuditVerdict
from grading.dataset.models import Sample, Span
from grading.dataset.selectors import sample_contract_ids
from grading.runs.models import ConsoleJob, Extraction, ExtractionRun
from reviewapp.core.jobs import (
    job_beat,
    job_beat_or_stop,
    job_claim,
    job_enqueue,
    job_execution_error,
    job_fail,
    job_finish,
    job_held,
    job_incomplete_message,
)
from reviewapp.core.records.hashing import sha256_hex, sha256_json
from reviewapp.jobs.controls import job_finish_command
from reviewapp.providers import clients
from reviewapp.providers import services as provider_services
from reviewapp.providers.selectors import ledger_get, receipt_bodies
from reviewapp.providers.spend.budget import estimate_input_tokens
from reviewapp.providers.spend.preflight import provider_preflight
from reviewapp.providers.types import ProviderError
from scoring.cuad.grading import Thresholds
from scoring.cuad.matching import MATCHERS

CLAIM_LOST = "claim lost: another execution holds this audit"

logger = logging.getLogger(__name__)

WAIT_SECONDS = 15  # an audit launched on an unfinished extraction job looks again after this long
MAX_WAITS = 480  # two hours of waiting, then it gives up (failed; resume to wait again)


class AuditError(ValueError):
    """An audit cannot be created, resumed or sent to review as asked; the message says why."""


# ---------------------------------------------------------------------------
# Flag


def audit_candidates_for(*, run: ExtractionRun, contract_ids: Sequence[int], grounding: float) -> list[Extraction]:
    """Exactly the run's extractions in ``contract_ids`` with grounding >= ``grounding`` in a clause type
    that has no CUAD span in that contract, in run order."""
    scope = list(contract_ids)
    labelled = set(Span.objects.filter(contract_id__in=scope).values_list("contract_id", "category_id").distinct())
    return [
        e
        for e in Extraction.objects.filter(run=run, contract_id__in=scope, grounding__gte=grounding).order_by(
            "position"
        )
        if (e.contract_id, e.category_id) not in labelled
    ]


# ---------------------------------------------------------------------------
# Create, flag, execute, resume


def _signature(*, run_id: int, sample: Sample, thresholds: Thresholds, matcher: str, judges: dict) -> str:
    return sha256_json(
        {
            "run": run_id,
            "sample": sample.manifest_sha256,
            "thresholds": thresholds.as_dict(),
            "matcher": matcher,
            "judges": judges,
        }
    )


def _choices(audit: Audit) -> dict[str, JudgeChoice]:
    return {slot: JudgeChoice(**spec) for slot, spec in audit.params["judges"].items()}


def audit_create(
    *,
    run: ExtractionRun | None = None,
    job: ConsoleJob | None = None,
    sample: Sample | None = None,
    thresholds: Thresholds | None = None,
    matcher: str = "hungarian",
    judge_a: JudgeChoice,
    judge_b: JudgeChoice,
    max_requests: int | None = None,
    max_input_tokens: int | None = None,
    user=None,
    queue: bool = True,
) -> tuple[Audit, bool]:
    """A queued audit of a run (or of the run an extraction job will produce); the same audit again is found.

    Returns (audit, created). Launching exactly the same audit (run, sample,
    thresholds, matcher, judges) returns the existing one, so a re-run never
    asks a judge again about a candidate it has ruled on.
    """
    thresholds = thresholds or Thresholds()
    if matcher not in MATCHERS:
        raise AuditError(f"matcher {matcher!r} is not one of {', '.join(MATCHERS)}")
    if judge_a == judge_b:
        raise AuditError("the two judges must differ (provider, model or method): an audit needs two opinions")
    if run is None:
        if job is None:
            raise AuditError("an audit needs a run (or the extraction job that will produce it)")
        if job.status == ConsoleJob.Status.DONE and job.run_id:
            run = job.run
        elif job.status == ConsoleJob.Status.FAILED:
            raise AuditError(f"extraction job {job.pk} failed; it has no run to audit")
    if run is not None:
        dataset_id = run.dataset_id
    else:
        assert job is not None  # checked above
        dataset_id = job.dataset_id
    if sample is None:
        sample = (job.sample if job is not None and job.sample_id else None) or Sample.objects.filter(
            dataset_id=dataset_id
        ).order_by("-created_at", "-id").first()
    if sample is None:
        raise AuditError("no CUAD sample to scope the audit to (run sample_cuad, or make demo)")
    if sample.dataset_id != dataset_id:
        raise AuditError(f"sample {sample.pk} is not drawn from the run's CUAD dataset")
    judges = {"a": judge_a.key, "b": judge_b.key}
    for slot, choice in (("a", judge_a), ("b", judge_b)):
        audit_judge_preflight(slot=slot, choice=choice)
    budget = {"max_requests": max_requests, "max_input_tokens": max_input_tokens}
    for name, value in budget.items():
        if value is not None and value < 1:
            raise AuditError(f"{name} must be at least 1")
    if run is not None:
        signature = _signature(run_id=run.pk, sample=sample, thresholds=thresholds, matcher=matcher, judges=judges)
        stage = "queued"
    else:
        assert job is not None  # no run: the job that will produce it (checked above)
        signature = sha256_hex(f"job:{job.pk}:" + sha256_json({"t": thresholds.as_dict(), "m": matcher, "j": judges}))
        stage = f"waiting for extraction job {job.pk} to produce its run"
    existing = Audit.objects.filter(signature=signature).order_by("id").first()
    if existing is not None:
        return existing, False
    with transaction.atomic():
        audit = Audit.objects.create(
            run=run,
            job=job if run is None else None,
            sample=sample,
            grounding=thresholds.grounding,
            correct=thresholds.correct,
            partial=thresholds.partial,
            matcher=matcher,
            signature=signature,
            status=Audit.Status.QUEUED,
            stage=stage,
            params={"judges": judges, "budget": budget},
            created_by=user if getattr(user, "is_authenticated", False) else None,
        )
        if run is not None:
            _flag(audit)
        if queue:
            _queue(audit)
    return audit, True


def _prepare_all(audit: Audit, choice: JudgeChoice, client, candidates: Sequence[AuditCandidate]):
    contexts = candidate_contexts(
        audit=audit,
        candidates=candidates,
        excerpts=choice.method == LLM,
        exemplars=choice.method == EXEMPLARS_METHOD,
    )
    return [prepare(choice, client, ctx) for ctx in contexts]


def _flag(audit: Audit) -> None:
    """Copy the candidates and open one ledger per judge, budgeted from the exact requests it will send."""
    contract_ids = sample_contract_ids(sample=audit.sample)
    assert audit.run is not None  # flagged once the audit has its run
    found = audit_candidates_for(run=audit.run, contract_ids=contract_ids, grounding=audit.grounding)
    AuditCandidate.objects.bulk_create(
        [
            AuditCandidate(
                audit=audit,
                position=i,
                extraction_id=e.pk,
                contract_id=e.contract_id,
                category_id=e.category_id,
                text=e.text,
                grounding=e.grounding,
            )
            for i, e in enumerate(found)
        ]
    )
    candidates = list(audit.candidates.select_related("category").order_by("position"))
    budget = audit.params.get("budget", {})
    for slot, choice in sorted(_choices(audit).items()):
        try:
            client = clients.client_for(provider=choice.provider, model_id=choice.model_id, base_url=choice.base_url)
            prepared = [p for p in _prepare_all(audit, choice, client, candidates) if p is not None]
            client.close()
            estimate = sum(estimate_input_tokens(len(p.body_bytes)) for p in prepared)
            ledger = provider_services.ledger_create(
                purpose=f"cuad label audit {audit.pk} judge {slot.upper()} (run {audit.run_id})",
                provider=choice.provider,
                model_id=choice.model_id,
                # Default budget: exactly one request per candidate (no room for a re-attempt unless given),
                # and the conservative byte-based estimate of those requests plus 10%.
                max_requests=budget.get("max_requests") or max(1, len(prepared)),
                max_input_tokens=budget.get("max_input_tokens") or max(1, int(estimate * 1.1) + 1),
                base_url=choice.base_url,
            )
        except ProviderError as exc:
            raise AuditError(f"judge {slot.upper()}: {exc}") from exc
        AuditJudge.objects.create(
            audit=audit,
            slot=slot,
            provider=choice.provider,
            model_id=choice.model_id,
            method=choice.method,
            params=choice.params(),
            ledger_id=ledger.pk,
        )
    Audit.objects.filter(pk=audit.pk).update(n_candidates=len(candidates), flagged=True)
    audit.n_candidates, audit.flagged = len(candidates), True


def audit_judge_preflight(*, slot: str, choice: JudgeChoice) -> None:
    """Is the judge's provider configured on this server? AuditError naming what is missing (the key's
    environment variable, a malformed base URL) before anything is created, queued or spent."""
    try:
        provider_preflight(provider=choice.provider, model_id=choice.model_id, base_url=choice.base_url)
    except ProviderError as exc:
        raise AuditError(f"judge {slot.upper()}: {exc}") from None


def audit_execute(*, audit_id: int) -> Audit | None:
    """Task body: (flag once the run exists,) then let each judge rule on every candidate it has not ruled on.

    Claimed by a conditional UPDATE (queued -> running): a second delivery, or
    a second worker, gets no row and stops. Safe to run again at any point.
    """
    token = job_claim(Audit, pk=audit_id, stage="starting")
    if not token:
        return None
    audit = Audit.objects.select_related("sample", "run", "job").get(pk=audit_id)
    try:
        if audit.run_id is None:
            waiting = _attach_run(audit, token)
            if waiting:
                return audit
        problems = [p for p in (_judge(audit, judge, token) for judge in audit.judges.order_by("slot")) if p]
        if problems:
            return _fail(audit, token, job_incomplete_message(
                problems=" ".join(problems), finish_command=job_finish_command(audit, ending=True)))
    except Exception as exc:
        failed = job_execution_error(Audit, pk=audit_id, token=token, error=exc, what=f"audit {audit_id}")
        return Audit.objects.get(pk=audit_id) if failed else None
    job_finish(Audit, pk=audit.pk, token=token, status=Audit.Status.DONE, stage="done")
    audit.refresh_from_db()
    return audit


def _attach_run(audit: Audit, token: str) -> bool:
    """For an audit launched on an extraction job: flag once its run exists. True when still waiting."""
    job = audit.job
    if job is None:
        raise AuditError("the audit has neither a run nor an extraction job")
    job.refresh_from_db()
    if job.status == ConsoleJob.Status.FAILED:
        raise AuditError(f"extraction job {job.pk} failed: {job.error[:300]}")
    if job.status != ConsoleJob.Status.DONE or job.run_id is None:
        waits = int(audit.params.get("waits", 0)) + 1
        if waits > MAX_WAITS or getattr(settings, "CELERY_TASK_ALWAYS_EAGER", False):
            raise AuditError(f"extraction job {job.pk} has not finished ({job.status}); resume the audit later")
        # Back to the queue for a later delivery; the token goes with it, as in a resume.
        job_held(Audit, pk=audit.pk, token=token).update(
            status=Audit.Status.QUEUED, claim_token="", worker="", queued_at=Now(), sent_at=None,
            params={**audit.params, "waits": waits},
            stage=f"waiting for extraction job {job.pk} ({job.done} of {job.total} contracts)",
        )
        _queue(audit, countdown=WAIT_SECONDS)
        return True
    run = job.run
    assert run is not None  # run_id checked above
    judges = audit.params["judges"]
    thresholds = Thresholds(correct=audit.correct, partial=audit.partial, grounding=audit.grounding)
    with transaction.atomic():
        audit.run = run
        audit.signature = _signature(
            run_id=run.pk, sample=audit.sample, thresholds=thresholds, matcher=audit.matcher, judges=judges
        )
        audit.save(update_fields=["run", "signature"])
        _flag(audit)
    return False


def _verdict_insert(*, candidate: AuditCandidate, judge: AuditJudge, ruling: Ruling, key: str, receipt_id) -> bool:
    try:
        with transaction.atomic():
            AuditVerdict(
                candidate=candidate,
                judge=judge,
                verdict=ruling.verdict,
                reason=ruling.reason[:2000],
                score=ruling.score,
                request_key=key,
                receipt_id=receipt_id,
            ).save(force_insert=True)
    except IntegrityError:
        return False  # already ruled (another execution got there first); the first verdict stands
    return True


def _judge(audit: Audit, judge: AuditJudge, token: str) -> str:
    """One judge rules on every candidate it has not ruled on yet. Returns a failure summary or ''."""
    choice = _choices(audit)[judge.slot]
    judged = set(AuditVerdict.objects.filter(judge=judge).values_list("candidate_id", flat=True))
    todo = [c for c in audit.candidates.select_related("category").order_by("position") if c.pk not in judged]
    if not todo:
        return ""
    assert judge.ledger_id is not None  # each judge is made with its ledger (_flag)
    ledger = ledger_get(ledger_id=judge.ledger_id)
    client = clients.client_for_ledger(ledger)
    owners: list[AuditCandidate] = []
    requests = []
    for candidate, prepared in zip(todo, _prepare_all(audit, choice, client, todo), strict=True):
        if prepared is None:
            _verdict_insert(
                candidate=candidate, judge=judge, ruling=no_request_ruling(choice), key="", receipt_id=None
            )
            continue
        owners.append(candidate)
        requests.append(prepared)
    total = len(judged) + len(todo)
    state = {"done": len(judged) + len(todo) - len(owners), "bad": 0}
    label = f"judge {judge.slot.upper()} ({judge.label})"

    def on_result(result) -> None:
        with transaction.atomic():  # the claim check and the verdict together: a paused execution writes nothing
            record(result)

    def record(result) -> None:
        candidate = owners[result.index]
        job_beat_or_stop(Audit, pk=audit.pk, token=token)
        if result.status == "answered" and result.parse is not None:
            try:
                body = (receipt_bodies(receipt_ids=[result.receipt_id]).get(result.receipt_id, "")
                        if judge.heuristic else "")
                ruling = rule(choice, data=result.parse.data, response_body=body)
            except (KeyError, ValueError, TypeError) as exc:
                state["bad"] += 1
                logger.warning("audit %s: unreadable answer for candidate %s: %s", audit.pk, candidate.pk, exc)
                return
            _verdict_insert(
                candidate=candidate, judge=judge, ruling=ruling, key=result.key, receipt_id=result.receipt_id
            )
            state["done"] += 1
            job_beat(Audit, pk=audit.pk, token=token, stage=f"{label}: {state['done']} of {total} candidates")
        else:
            state["bad"] += 1

    reattempt = [r.key for r in requests] if audit.params.get("reattempt") else ()
    try:
        report = provider_services.ledger_execute(
            ledger=ledger, client=client, requests=requests, reattempt_keys=reattempt, on_result=on_result,
            should_stop=lambda: "" if job_beat(Audit, pk=audit.pk, token=token) else CLAIM_LOST,
        )
    finally:
        client.close()
    missing = total - AuditVerdict.objects.filter(judge=judge).count()
    if not missing:
        return ""
    counts = ", ".join(f"{k} {v}" for k, v in sorted(report.counts.items()) if k != "answered")
    stop = f"; stopped: {report.stop_reason}" if report.stop_reason else ""
    return f"{label}: {missing} of {total} candidates have no verdict ({counts or 'unreadable answers'}){stop}."


def _fail(audit: Audit, token: str, message: str) -> Audit:
    job_fail(Audit, pk=audit.pk, token=token, message=message, stage="failed")
    audit.refresh_from_db()
    return audit


def _queue(audit: Audit, *, countdown: int | None = None) -> None:
    job_enqueue(audit, countdown=countdown)
