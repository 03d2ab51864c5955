"""CUAD label audit: flag -> two independent judges -> agreement -> measured impact -> humans settle it.

After Northcutt, Athalye & Mueller, Pervasive Label Errors in Test Sets
(NeurIPS 2021): CUAD's "absent" labels are treated as suspect.

- Flag (``audit_candidates_for``): an extraction of the run, in the sample's
  contracts, whose grounding is at or above the audit's grounding threshold
  (verbatim in the contract) in a clause type for which CUAD has NO span in
  that contract. Exactly those; copied into ``AuditCandidate`` once.
- Judge (``audit_execute``): each of the two judges (``grading.audits.judges``)
  gets one request per candidate through the shared provider layer, on its own
  ledger (receipts, budget preflight, no automatic retries). A candidate a
  judge has already ruled on is never asked again (its verdict row is the
  proof), and answered request keys are served from their receipts.
- Agreement (``audit_agreement``): Cohen's kappa over the candidates both
  judges ruled on, its Landis-Koch band, the 2x2 table and raw agreement
  (``scoring.stats.agreement``).
- Impact (``audit_impact``): candidates BOTH judges confirm join the CUAD spans
  of their contract (one new span each, equal to the candidate's text) and
  their extraction is matched to it with F1 = 1, so it counts as Correct: the
  run's credit and the gold span count both grow by one per confirmed
  candidate. Recall after = (credit + k) / (spans + k). The same with a single
  judge's confirmations (and with the humans' resolved "yes", once there are
  any) is shown alongside for context. Intervals: the same seeded contract
  bootstrap as the scorecard (same draws before and after).
- Humans (``audit_review_send``): the candidates become a blinded review pool
  of kind "clause": a reviewer sees the clause type with CUAD's description, a
  contract excerpt, and the text in question; never the model, the judges,
  their verdicts or any score.

Writes (services) come first, reads (selectors) after.
"""

from __future__ import annotations

import logging
import re
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np
from django.db import IntegrityError, transaction
from django.utils import timezone

from grading import selectors
from grading.audits import judges as audit_judges
from grading.audits.judges import CandidateContext, JudgeChoice, Ruling
from grading.audits.models import Audit, AuditCandidate, AuditJudge, AuditVerdict
from grading.dataset.models import Category, Contract, Sample, Span
from grading.runs.jobs import is_stale, not_stale_message, stale_filter
from grading.runs.models import ConsoleJob, Extraction, ExtractionRun
from reviewapp.core.hashing import sha256_hex, sha256_json
from scoring.cuad.grading import DEFAULT_REPLICATES, Figures, PairTable, Thresholds, grade
from scoring.cuad.matching import MATCHERS
from scoring.stats.agreement import pair_agreement

logger = logging.getLogger(__name__)

AUDIT_JOB = "cuad-audit"  # external_ref tag of the review pools this module declares
VERDICT_CATEGORIES = ("no", "yes")
WAIT_SECONDS = 15  # an audit launched on an unfinished extraction job looks again after this long
MAX_WAITS = 480  # two hours of waiting, then it gives up (failed; resume to wait again)
REVIEW_TITLE = "Contract clauses: is the text a clause of the stated type?"
REVIEW_INSTRUCTIONS = (
    "Read the clause type and its description, then the contract excerpt. Answer yes if the text in question "
    "is a real clause of that type as the description defines it, no if it is not, unknown if you cannot tell."
)


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
    if run is None and job is None:
        raise AuditError("an audit needs a run (or the extraction job that will produce it)")
    if run is None and job.status == ConsoleJob.Status.DONE and job.run_id:
        run = job.run
    if run is None and job.status == ConsoleJob.Status.FAILED:
        raise AuditError(f"extraction job {job.pk} failed; it has no run to audit")
    dataset_id = run.dataset_id if run is not None else job.dataset_id
    if sample is None:
        sample = (job.sample if job is not None and job.sample_id else None) or Sample.objects.filter(
            dataset_id=dataset_id
        ).order_by("-created_at", "-id").first()
    if sample is None:
        raise AuditError("no CUAD sample to scope the audit to (run sample_cuad, or make demo)")
    if sample.dataset_id != dataset_id:
        raise AuditError(f"sample {sample.pk} is not drawn from the run's CUAD dataset")
    judges = {"a": judge_a.key, "b": judge_b.key}
    budget = {"max_requests": max_requests, "max_input_tokens": max_input_tokens}
    for name, value in budget.items():
        if value is not None and value < 1:
            raise AuditError(f"{name} must be at least 1")
    if run is not None:
        signature = _signature(run_id=run.pk, sample=sample, thresholds=thresholds, matcher=matcher, judges=judges)
    else:
        signature = sha256_hex(f"job:{job.pk}:" + sha256_json({"t": thresholds.as_dict(), "m": matcher, "j": judges}))
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
            stage="queued" if run is not None else f"waiting for extraction job {job.pk} to produce its run",
            params={"judges": judges, "budget": budget},
            created_by=user if getattr(user, "is_authenticated", False) else None,
        )
        if run is not None:
            _flag(audit)
        if queue:
            _queue(audit)
    return audit, True


def _located(text: str, quote: str) -> tuple[int, int] | None:
    q = quote.strip()
    if not q:
        return None
    at = text.find(q)
    if at >= 0:
        return at, at + len(q)
    pattern = r"\s+".join(re.escape(p) for p in q.split())
    m = re.search(pattern, text, flags=re.IGNORECASE)
    return (m.start(), m.end()) if m else None


def excerpt_of(text: str, quote: str, *, chars: int = audit_judges.EXCERPT_CHARS) -> str:
    """The contract around the quote (``chars`` each side, cut at white space); the quote alone if not found."""
    where = _located(text, quote)
    if where is None:
        return quote
    start, end = max(0, where[0] - chars), min(len(text), where[1] + chars)
    if start > 0:
        space = text.find(" ", start, where[0])
        start = space + 1 if space >= 0 else start
    if end < len(text):
        space = text.rfind(" ", where[1], end)
        end = space if space >= 0 else end
    return ("… " if start > 0 else "") + text[start:end].strip() + (" …" if end < len(text) else "")


def _exemplars(dataset_id: int, category_ids: set[int]) -> dict[int, list[tuple[int, str]]]:
    """Per category, CUAD spans as (contract id, text), in a fixed pseudo-random order (sha256 of the span id)."""
    rows = Span.objects.filter(contract__dataset_id=dataset_id, category_id__in=category_ids).values_list(
        "category_id", "contract_id", "qa_id", "answer_index", "text"
    )
    out: dict[int, list[tuple[str, int, str]]] = defaultdict(list)
    for category_id, contract_id, qa_id, index, text in rows:
        out[category_id].append((sha256_hex(f"{qa_id}#{index}"), contract_id, text))
    return {k: [(c, t) for _, c, t in sorted(v)] for k, v in out.items()}


def candidate_contexts(
    *, audit: Audit, candidates: Sequence[AuditCandidate], excerpts: bool, exemplars: bool
) -> list[CandidateContext]:
    """What a judge may see of each candidate: type, description, text, and (per method) excerpt or exemplars."""
    texts = (
        dict(Contract.objects.filter(pk__in={c.contract_id for c in candidates}).values_list("id", "text"))
        if excerpts
        else {}
    )
    pool = _exemplars(audit.sample.dataset_id, {c.category_id for c in candidates}) if exemplars else {}
    out = []
    for c in candidates:
        picked: tuple[str, ...] = ()
        if exemplars:
            picked = tuple(t for contract_id, t in pool.get(c.category_id, []) if contract_id != c.contract_id)[
                : audit_judges.EXEMPLARS
            ]
        out.append(
            CandidateContext(
                category=c.category.name,
                description=c.category.description,
                text=c.text,
                excerpt=excerpt_of(texts[c.contract_id], c.text) if excerpts else "",
                exemplars=picked,
            )
        )
    return out


def _prepare_all(audit: Audit, choice: JudgeChoice, client, candidates: Sequence[AuditCandidate]):
    contexts = candidate_contexts(
        audit=audit,
        candidates=candidates,
        excerpts=choice.method == audit_judges.LLM,
        exemplars=choice.method == audit_judges.EXEMPLARS_METHOD,
    )
    return [audit_judges.prepare(choice, client, ctx) for ctx in contexts]


def _flag(audit: Audit) -> None:
    """Copy the candidates and open one ledger per judge, budgeted from the exact requests it will send."""
    from reviewapp.providers import clients
    from reviewapp.providers import services as provider_services
    from reviewapp.providers.budget import estimate_input_tokens
    from reviewapp.providers.types import ProviderError

    contract_ids = selectors.sample_contract_ids(sample=audit.sample)
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


def audit_resume(
    *, audit: Audit, reattempt: bool = False, queue: bool = True, worker_lost: bool = False,
    only_if_stale: bool = False,
) -> Audit:
    """Queue a failed (or stopped) audit again; judged candidates are skipped. ``reattempt`` re-sends failures.

    ``worker_lost``: the person knows the worker died mid-audit, so an audit still marked running may be
    resumed too (requests left without an answer turn 'unknown'; one receipt per request and attempt means
    none is ever sent twice).

    ``only_if_stale`` (the audit page's "worker seems to have stopped" action): a running audit is resumed only
    when its heartbeat is older than ``grading.runs.jobs.stale_after()``; otherwise AuditError says why not.
    """
    audit.refresh_from_db()
    resumable = [Audit.Status.FAILED] + ([Audit.Status.RUNNING] if worker_lost else [])
    if audit.status not in resumable:
        raise AuditError(f"audit {audit.pk} is {audit.status}; only a failed or stopped audit can be resumed")
    if only_if_stale and audit.status == Audit.Status.RUNNING and not is_stale(audit):
        raise AuditError(not_stale_message(f"audit {audit.pk}", audit))
    params = {**audit.params, "reattempt": bool(reattempt), "waits": 0}
    rows = Audit.objects.filter(pk=audit.pk, status__in=resumable)
    if only_if_stale:  # the same test inside the UPDATE: a worker that beats meanwhile keeps its audit
        rows = rows.filter(stale_filter(Audit.Status))
    changed = rows.update(status=Audit.Status.QUEUED, params=params, stage="queued again (resume)", error="")
    if not changed:
        raise AuditError(f"audit {audit.pk} changed meanwhile; reload")
    audit.refresh_from_db()
    if queue:
        _queue(audit)
    return audit


def audit_execute(*, audit_id: int) -> Audit | None:
    """Task body: (flag once the run exists,) then let each judge rule on every candidate it has not ruled on.

    Claimed by a conditional UPDATE (queued -> running): a second delivery, or
    a second worker, gets no row and stops. Safe to run again at any point.
    """
    now = timezone.now()
    claimed = Audit.objects.filter(pk=audit_id, status=Audit.Status.QUEUED).update(
        status=Audit.Status.RUNNING, started_at=now, heartbeat_at=now, stage="starting"
    )
    if not claimed:
        return None
    audit = Audit.objects.select_related("sample", "run", "job").get(pk=audit_id)
    try:
        if audit.run_id is None:
            waiting = _attach_run(audit)
            if waiting:
                return audit
        problems = [p for p in (_judge(audit, judge) for judge in audit.judges.order_by("slot")) if p]
        if problems:
            return _fail(
                audit,
                " ".join(problems) + " Failed requests are never re-sent automatically: resume with "
                "'re-attempt failed requests' to send them again (each re-attempt counts against the budget).",
            )
    except Exception as exc:
        logger.exception("audit %s failed", audit_id)
        return _fail(audit, f"{type(exc).__name__}: {exc}")
    Audit.objects.filter(pk=audit.pk).update(status=Audit.Status.DONE, stage="done", finished_at=timezone.now())
    audit.refresh_from_db()
    return audit


def _attach_run(audit: Audit) -> bool:
    """For an audit launched on an extraction job: flag once its run exists. True when still waiting."""
    from django.conf import settings

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
        Audit.objects.filter(pk=audit.pk).update(
            status=Audit.Status.QUEUED,
            params={**audit.params, "waits": waits},
            stage=f"waiting for extraction job {job.pk} ({job.done} of {job.total} contracts)",
        )
        _queue(audit, countdown=WAIT_SECONDS)
        return True
    run = job.run
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


def _receipt_bodies(ids: Sequence[int]) -> dict[int, str]:
    from reviewapp.providers.models import Receipt

    return dict(Receipt.objects.filter(pk__in=list(ids)).values_list("id", "response_body"))


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


_transport_override = None  # tests point the HTTP judges at an httpx transport of their own


def _judge(audit: Audit, judge: AuditJudge) -> str:
    """One judge rules on every candidate it has not ruled on yet. Returns a failure summary or ''."""
    from reviewapp.providers import clients
    from reviewapp.providers import services as provider_services
    from reviewapp.providers.models import Ledger

    choice = _choices(audit)[judge.slot]
    judged = set(AuditVerdict.objects.filter(judge=judge).values_list("candidate_id", flat=True))
    todo = [c for c in audit.candidates.select_related("category").order_by("position") if c.pk not in judged]
    if not todo:
        return ""
    ledger = Ledger.objects.get(pk=judge.ledger_id)
    client = clients.client_for_ledger(ledger, transport=_transport_override)
    owners: list[AuditCandidate] = []
    requests = []
    for candidate, prepared in zip(todo, _prepare_all(audit, choice, client, todo), strict=True):
        if prepared is None:
            _verdict_insert(
                candidate=candidate, judge=judge, ruling=audit_judges.no_request_ruling(choice), key="", receipt_id=None
            )
            continue
        owners.append(candidate)
        requests.append(prepared)
    total = len(judged) + len(todo)
    state = {"done": len(judged) + len(todo) - len(owners), "bad": 0}
    label = f"judge {judge.slot.upper()} ({judge.label})"

    def on_result(result) -> None:
        candidate = owners[result.index]
        if result.status == "answered" and result.parse is not None:
            try:
                body = _receipt_bodies([result.receipt_id]).get(result.receipt_id, "") if judge.heuristic else ""
                ruling = audit_judges.rule(choice, data=result.parse.data, response_body=body)
            except (KeyError, ValueError, TypeError) as exc:
                state["bad"] += 1
                logger.warning("audit %s: unreadable answer for candidate %s: %s", audit.pk, candidate.pk, exc)
                return
            _verdict_insert(
                candidate=candidate, judge=judge, ruling=ruling, key=result.key, receipt_id=result.receipt_id
            )
            state["done"] += 1
            Audit.objects.filter(pk=audit.pk).update(
                stage=f"{label}: {state['done']} of {total} candidates", heartbeat_at=timezone.now()
            )
        else:
            state["bad"] += 1

    reattempt = [r.key for r in requests] if audit.params.get("reattempt") else ()
    try:
        report = provider_services.ledger_execute(
            ledger=ledger, client=client, requests=requests, reattempt_keys=reattempt, on_result=on_result,
            should_stop=lambda: _beat(audit.pk),
        )
    finally:
        client.close()
    missing = total - AuditVerdict.objects.filter(judge=judge).count()
    if not missing:
        return ""
    counts = ", ".join(f"{k} {v}" for k, v in sorted(report.counts.items()) if k != "answered")
    stop = f"; stopped: {report.stop_reason}" if report.stop_reason else ""
    return f"{label}: {missing} of {total} candidates have no verdict ({counts or 'unreadable answers'}){stop}."


def _beat(audit_id: int) -> str:
    """The executor is alive (called before every provider request); never asks it to stop."""
    Audit.objects.filter(pk=audit_id, status=Audit.Status.RUNNING).update(heartbeat_at=timezone.now())
    return ""


def _fail(audit: Audit, message: str) -> Audit:
    Audit.objects.filter(pk=audit.pk).update(
        status=Audit.Status.FAILED, error=message[:10000], stage="failed", finished_at=timezone.now()
    )
    audit.refresh_from_db()
    return audit


def _queue(audit: Audit, *, countdown: int | None = None) -> None:
    from grading.runs import tasks

    if countdown:
        transaction.on_commit(lambda: tasks.audit_run.apply_async((audit.pk,), countdown=countdown))
    else:
        transaction.on_commit(lambda: tasks.audit_run.delay(audit.pk))


# ---------------------------------------------------------------------------
# Humans settle it: a blinded review pool of the candidates


def audit_pool(*, audit: Audit):
    """The review pool declared for this audit, or None."""
    from reviewapp.review.selectors import pool_find

    found = pool_find(external_ref={"job": AUDIT_JOB, "audit": audit.pk}, kind="clause")
    return found[0] if found else None


def review_items(*, audit: Audit) -> list[dict]:
    """The reviewer-facing items: clause type + CUAD description, contract excerpt, text in question.

    Nothing else: no model, no judge, no verdict, no score, no grounding.
    The candidate id rides in ``external_ref`` (admin/job side only).
    """
    candidates = list(audit.candidates.select_related("category").order_by("position"))
    texts = dict(Contract.objects.filter(pk__in={c.contract_id for c in candidates}).values_list("id", "text"))
    return [
        {
            "query_id": c.category.name,
            "doc_id": f"candidate-{c.pk}",
            "query_text": f"{c.category.name}\n\n{c.category.description}".strip(),
            "source_heading": "",
            "source_text": excerpt_of(texts[c.contract_id], c.text),
            "passage_caption": "",
            "passage_text": c.text,
            "external_ref": {"candidate": c.pk},
        }
        for c in candidates
    ]


def audit_review_send(*, audit: Audit, user=None, reviewers: Sequence = (), per_item: int = 2):
    """Declare (once) the blinded review pool of the audit's candidates; assign it to ``reviewers`` if given.

    Returns (pool, created).
    """
    from reviewapp.review.services import ReviewError, pool_assign, pool_create

    if not audit.flagged:
        raise AuditError(f"audit {audit.pk} has no candidates yet (its run is not flagged)")
    if audit.n_candidates == 0:
        raise AuditError(f"audit {audit.pk} has no candidates to review")
    pool = audit_pool(audit=audit)
    created = pool is None
    try:
        if pool is None:
            pool = pool_create(
                name=f"CUAD label audit #{audit.pk} (run {audit.run_id})",
                kind="clause",
                items=review_items(audit=audit),
                declared_rule=(
                    f"Every candidate of CUAD label audit #{audit.pk}: extractions of run {audit.run_id} grounded "
                    f"at >= {audit.grounding} in a clause type CUAD marks absent for that contract."
                ),
                declared_params={"audit": audit.pk, "grounding": audit.grounding, "candidates": audit.n_candidates},
                reviewers_per_item=per_item,
                reviewer_title=REVIEW_TITLE,
                instructions=REVIEW_INSTRUCTIONS,
                external_ref={"job": AUDIT_JOB, "audit": audit.pk},
                created_by=user if getattr(user, "is_authenticated", False) else None,
            )
        if reviewers:
            pool_assign(pool=pool, reviewers=reviewers, per_item=min(pool.reviewers_per_item, len(reviewers)))
    except ReviewError as exc:
        raise AuditError(str(exc)) from exc
    return pool, created


# ===========================================================================
# Selectors (reads)


@dataclass(frozen=True)
class HumanLabel:
    state: str  # "agreed" | "adjudicated" | "unresolved"
    value: str | None  # "yes" | "no" | "unknown" | None
    reason: str
    completed: int  # complete, non-stale judgments counted


def audit_human_labels(*, audit: Audit) -> dict[int, HumanLabel]:
    """Candidate id -> the review pool's resolved label (completed judgments only)."""
    from reviewapp.review.selectors import pool_labels

    pool = audit_pool(audit=audit)
    if pool is None:
        return {}
    out = {}
    for label in pool_labels(pool=pool):
        value = {0: "no", 1: "yes"}.get(label.value, label.value) if label.value is not None else None
        out[int(label.external_ref["candidate"])] = HumanLabel(
            label.state, value, label.reason, sum(1 for g in label.grades if g is not None)
        )
    return out


@dataclass(frozen=True)
class CandidateRow:
    candidate: AuditCandidate
    contract: str
    category: str
    verdicts: dict[str, AuditVerdict | None]
    human: HumanLabel | None

    @property
    def both_yes(self) -> bool:
        return all(v is not None and v.verdict for v in self.verdicts.values())


@dataclass(frozen=True)
class AuditAgreement:
    """Agreement of the two judges over the candidates both ruled on (rows judge A, columns judge B; no, yes)."""

    n: int
    excluded: int
    raw_agreement: float | None
    kappa: float | None
    band: str | None
    table: list[list[int]]


def audit_agreement(*, verdicts_a: Sequence[bool | None], verdicts_b: Sequence[bool | None]) -> AuditAgreement:
    """Cohen's kappa (unweighted) with its Landis-Koch band, the 2x2 table and raw agreement; None = not ruled."""

    def word(v: bool | None) -> str | None:
        return None if v is None else ("yes" if v else "no")

    pa = pair_agreement([word(v) for v in verdicts_a], [word(v) for v in verdicts_b], categories=VERDICT_CATEGORIES)
    return AuditAgreement(pa.n, pa.excluded, pa.raw_agreement, pa.kappa, pa.band, pa.table.tolist())


def credit_extractions(table: PairTable, rows: Sequence[int]) -> PairTable:
    """The table with each extraction in ``rows`` given a new CUAD span of its own (its own text) at F1 = 1.

    The rows must be unmatched (their cell has no CUAD span): each new span
    joins the gold of the extraction's contract and category, and the
    extraction is matched to it. Nothing else changes, so each credited row
    adds exactly one span and, at a grounding threshold it meets, one credit.
    """
    rows = np.asarray(sorted({int(r) for r in rows}), dtype=np.int64)
    if rows.size and np.any(table.ext_span[rows] >= 0):
        raise ValueError("a credited extraction is already matched to a CUAD span; only candidates can be credited")
    n_spans = len(table.span_contract)
    ext_span = table.ext_span.copy()
    ext_f1 = table.ext_f1.copy()
    ext_span[rows] = n_spans + np.arange(rows.size)
    ext_f1[rows] = 1.0
    return PairTable(
        ext_contract=table.ext_contract,
        ext_category=table.ext_category,
        ext_f1=ext_f1,
        ext_grounding=table.ext_grounding,
        ext_span=ext_span,
        span_contract=np.concatenate([table.span_contract, table.ext_contract[rows]]),
        span_category=np.concatenate([table.span_category, table.ext_category[rows]]),
        n_contracts=table.n_contracts,
        n_categories=table.n_categories,
    )


@dataclass(frozen=True)
class ImpactRow:
    key: str  # "before", "both", "a", "b", "humans"
    label: str
    credited: int
    figures: Figures
    per_category: tuple[Figures, ...]


@dataclass(frozen=True)
class CategoryImpact:
    category: str
    candidates: int
    both_yes: int
    before: Figures
    after: Figures


@dataclass(frozen=True)
class AuditImpact:
    rows: list[ImpactRow]
    per_category: list[CategoryImpact]
    thresholds: Thresholds
    replicates: int
    seed: int
    n_contracts: int

    def row(self, key: str) -> ImpactRow | None:
        return next((r for r in self.rows if r.key == key), None)


def audit_impact(
    *,
    audit: Audit,
    rows: Sequence[CandidateRow],
    judges: Sequence[AuditJudge],
    replicates: int = DEFAULT_REPLICATES,
    seed: int = 0,
) -> AuditImpact:
    """Scorecard figures before and after crediting confirmed candidates (both judges; each judge; humans)."""
    thresholds = Thresholds(correct=audit.correct, partial=audit.partial, grounding=audit.grounding)
    pairs = selectors.run_pair_table(
        run=audit.run, contract_ids=selectors.sample_contract_ids(sample=audit.sample), matcher=audit.matcher
    )
    index = {int(eid): i for i, eid in enumerate(pairs.extraction_ids)}

    def graded(selected: Sequence[CandidateRow]):
        table = credit_extractions(pairs.table, [index[r.candidate.extraction_id] for r in selected])
        return grade(table, thresholds, replicates=replicates, seed=seed)

    variants: list[tuple[str, str, list[CandidateRow]]] = [("before", "CUAD labels as they are", [])]
    variants.append(("both", "both judges yes (conservative)", [r for r in rows if r.both_yes]))
    for judge in judges:
        picked = [r for r in rows if (v := r.verdicts.get(judge.slot)) is not None and v.verdict]
        variants.append((judge.slot, f"judge {judge.slot.upper()} alone yes (context)", picked))
    human_yes = [r for r in rows if r.human is not None and r.human.value == "yes"]
    if any(r.human is not None and r.human.state != "unresolved" for r in rows):
        variants.append(("humans", "reviewers' resolved yes", human_yes))
    out = []
    for key, label, selected in variants:
        g = graded(selected)
        out.append(ImpactRow(key, label, len(selected), g.overall, g.per_category))
    before, both = out[0], out[1]
    names = [c.name for c in pairs.scope.categories]
    cand_by_cat: dict[str, int] = defaultdict(int)
    yes_by_cat: dict[str, int] = defaultdict(int)
    for r in rows:
        cand_by_cat[r.category] += 1
        yes_by_cat[r.category] += int(r.both_yes)
    per_category = [
        CategoryImpact(name, cand_by_cat[name], yes_by_cat[name], before.per_category[k], both.per_category[k])
        for k, name in enumerate(names)
        if cand_by_cat[name]
    ]
    return AuditImpact(out, per_category, thresholds, replicates, seed, pairs.table.n_contracts)


@dataclass
class AuditReport:
    audit: Audit
    judges: list[AuditJudge]
    rows: list[CandidateRow]
    agreement: AuditAgreement | None
    impact: AuditImpact | None
    pool: object | None
    ruled: dict[str, int] = field(default_factory=dict)

    @property
    def total_rulings(self) -> int:
        return 2 * self.audit.n_candidates

    @property
    def done_rulings(self) -> int:
        return sum(self.ruled.values())

    @property
    def percent(self) -> int:
        return int(100 * self.done_rulings / self.total_rulings) if self.total_rulings else 0


def audit_progress(*, audit: Audit) -> dict[str, int]:
    """Verdicts written so far, per judge slot."""
    counts = dict.fromkeys(("a", "b"), 0)
    for slot in AuditVerdict.objects.filter(judge__audit=audit).values_list("judge__slot", flat=True):
        counts[slot] = counts.get(slot, 0) + 1
    return counts


def audit_report(*, audit: Audit, with_impact: bool = True) -> AuditReport:
    """Everything the audit page, its exports and its API show."""
    judges = list(audit.judges.order_by("slot"))
    by_slot = {j.pk: j.slot for j in judges}
    verdicts: dict[int, dict[str, AuditVerdict]] = defaultdict(dict)
    for v in AuditVerdict.objects.filter(judge__audit=audit):
        verdicts[v.candidate_id][by_slot[v.judge_id]] = v
    humans = audit_human_labels(audit=audit)
    names = dict(Category.objects.values_list("id", "name"))
    candidates = list(audit.candidates.select_related("contract").order_by("position"))
    rows = [
        CandidateRow(
            candidate=c,
            contract=c.contract.title,
            category=names[c.category_id],
            verdicts={j.slot: verdicts[c.pk].get(j.slot) for j in judges},
            human=humans.get(c.pk),
        )
        for c in candidates
    ]
    agreement = None
    if len(judges) == 2 and rows:
        a, b = judges[0].slot, judges[1].slot

        def verdict_of(row: CandidateRow, slot: str) -> bool | None:
            v = row.verdicts.get(slot)
            return None if v is None else v.verdict

        agreement = audit_agreement(
            verdicts_a=[verdict_of(r, a) for r in rows], verdicts_b=[verdict_of(r, b) for r in rows]
        )
    impact = audit_impact(audit=audit, rows=rows, judges=judges) if with_impact and audit.run_id else None
    ruled = {j.slot: sum(1 for r in rows if r.verdicts.get(j.slot) is not None) for j in judges}
    return AuditReport(audit, judges, rows, agreement, impact, audit_pool(audit=audit), ruled)


def audit_list() -> list[Audit]:
    return list(Audit.objects.select_related("run", "sample").order_by("-created_at", "-id"))


# ---------------------------------------------------------------------------
# Exports


def _num(x: float | None) -> float | None:
    return None if x is None or (isinstance(x, float) and np.isnan(x)) else float(x)


def figures_json(f: Figures) -> dict:
    return f.as_dict()


def judge_json(j: AuditJudge) -> dict:
    return {
        "slot": j.slot,
        "provider": j.provider,
        "model_id": j.model_id,
        "method": j.method,
        "heuristic": j.heuristic,
        "label": j.label,
        "params": j.params,
        "ledger": j.ledger_id,
    }


def verdict_json(v: AuditVerdict | None) -> dict | None:
    if v is None:
        return None
    return {"verdict": "yes" if v.verdict else "no", "reason": v.reason, "score": v.score, "receipt": v.receipt_id}


def candidate_json(r: CandidateRow) -> dict:
    c = r.candidate
    return {
        "id": c.pk,
        "position": c.position,
        "extraction": c.extraction_id,
        "contract": r.contract,
        "category": r.category,
        "text": c.text,
        "grounding": c.grounding,
        "judges": {slot: verdict_json(v) for slot, v in r.verdicts.items()},
        "both_yes": r.both_yes,
        "human": None
        if r.human is None
        else {"state": r.human.state, "value": r.human.value, "reason": r.human.reason, "completed": r.human.completed},
    }


def audit_summary_json(audit: Audit) -> dict:
    return {
        "id": audit.pk,
        "run": audit.run_id,
        "model": audit.run.model if audit.run_id else None,
        "job": audit.job_id,
        "sample": audit.sample_id,
        "status": audit.status,
        "stage": audit.stage,
        "error": audit.error,
        "thresholds": {"correct": audit.correct, "partial": audit.partial, "grounding": audit.grounding},
        "matcher": audit.matcher,
        "candidates": audit.n_candidates,
        "created_at": audit.created_at.isoformat(),
        "finished_at": audit.finished_at.isoformat() if audit.finished_at else None,
    }


def audit_json(report: AuditReport) -> dict:
    agreement = report.agreement
    impact = report.impact
    return {
        "audit": audit_summary_json(report.audit),
        "judges": [judge_json(j) for j in report.judges],
        "progress": {"ruled": report.ruled, "total": report.total_rulings},
        "agreement": None
        if agreement is None
        else {
            "n": agreement.n,
            "excluded": agreement.excluded,
            "kappa": _num(agreement.kappa),
            "band": agreement.band,
            "raw_agreement": _num(agreement.raw_agreement),
            "table": {
                "rows": "judge a",
                "columns": "judge b",
                "labels": list(VERDICT_CATEGORIES),
                "counts": agreement.table,
            },
        },
        "impact": None
        if impact is None
        else {
            "thresholds": impact.thresholds.as_dict(),
            "bootstrap": {"replicates": impact.replicates, "seed": impact.seed, "contracts": impact.n_contracts},
            "rows": [
                {"key": r.key, "label": r.label, "credited": r.credited, **r.figures.as_dict()} for r in impact.rows
            ],
            "per_category": [
                {
                    "category": c.category,
                    "candidates": c.candidates,
                    "both_yes": c.both_yes,
                    "before": c.before.as_dict(),
                    "after": c.after.as_dict(),
                }
                for c in impact.per_category
            ],
        },
        "review_pool": None if report.pool is None else report.pool.public_id,
        "candidates": [candidate_json(r) for r in report.rows],
    }


CSV_FIELDS = (
    "id",
    "contract",
    "category",
    "grounding",
    "judge_a",
    "judge_a_reason",
    "judge_a_score",
    "judge_b",
    "judge_b_reason",
    "judge_b_score",
    "both_yes",
    "human",
    "human_state",
    "text",
)


def audit_csv_rows(report: AuditReport) -> list[dict]:
    out = []
    for r in report.rows:
        row = {
            "id": r.candidate.pk,
            "contract": r.contract,
            "category": r.category,
            "grounding": f"{r.candidate.grounding:.6f}",
            "both_yes": int(r.both_yes),
            "human": (r.human.value or "") if r.human else "",
            "human_state": r.human.state if r.human else "",
            "text": r.candidate.text,
        }
        for slot in ("a", "b"):
            v = r.verdicts.get(slot)
            row[f"judge_{slot}"] = "" if v is None else ("yes" if v.verdict else "no")
            row[f"judge_{slot}_reason"] = "" if v is None else v.reason
            row[f"judge_{slot}_score"] = "" if v is None or v.score is None else f"{v.score:.6f}"
        out.append(row)
    return out
