"""Rerank runs: services (writes) and selectors (reads).

A run grades exactly the keyword candidates of one retrieval run for every ranking
query and outside-corpus control (exact-citation controls make no provider call),
in a deterministic order: queries by suite position, candidates by keyword rank,
``candidates_per_request`` per request. Every request goes through the provider
ledger (budget preflight, receipts, no automatic retries, resume).

Before a run is created, resumed or executed, the provider is preflighted (key in the
environment, base URL well formed, model id pinned): a refusal names what is missing
and nothing is created, queued or spent. A run ends ``failed``, never ``done``, when
the provider's answer shows no request can succeed (refused key, unknown model,
unreachable endpoint: the ledger stops after the first such answer) or when every
request it sent failed; its ``error`` carries the provider's own message.

Execution claims the run with a conditional UPDATE (queued -> running, with a
fresh claim token); a second delivery of the same task finds nothing to claim and
returns. A killed execution leaves the run ``running`` with a stale heartbeat;
``reviewapp.core.jobs.job_kind_resume`` re-queues it, and the ledger then discloses requests that were
sent without a recorded answer as ``unknown`` instead of sending them again.
"""

from __future__ import annotations

import logging
import math
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from django.db import transaction
from django.db.models import Count
from django.db.models.functions import Now

from benchmarks.rerank.models import RerankGrade, RerankRun, RerankStatus
from benchmarks.rerank.questions import DEFAULT_VERSION, Candidate, question_get
from benchmarks.retrieval.models import RetrievalCandidate, RetrievalRun, RunStatus
from benchmarks.suites.models import QueryKind
from reviewapp.core.jobs import (
    ClaimLost,
    job_beat,
    job_claim,
    job_enqueue,
    job_execution_error,
    job_fail,
    job_finish,
    job_incomplete_message,
)
from reviewapp.jobs.controls import job_error_with_finish, job_finish_command
from reviewapp.providers import selectors as provider_selectors
from reviewapp.providers import services as provider_services
from reviewapp.providers.clients import client_for_ledger
from reviewapp.providers.local import embeddings
from reviewapp.providers.local.distributions import concentration
from reviewapp.providers.services import ExecutionReport, RequestResult
from reviewapp.providers.spend.preflight import ProviderSetup, provider_preflight
from reviewapp.providers.types import METHOD_LOCAL, METHOD_LOGPROBS, METHOD_STRUCTURED, GradeSpec, ProviderError

if TYPE_CHECKING:
    import httpx

logger = logging.getLogger(__name__)

RERANKED_KINDS = (QueryKind.RANKING, QueryKind.OUTSIDE_CORPUS)
DEFAULT_MAX_REQUESTS = 272  # the NRS v1 budget: 34 non-citation queries x 8 requests of 4 candidates
DEFAULT_MAX_INPUT_TOKENS = 2_000_000
DEFAULT_CANDIDATES_PER_REQUEST = 4
DEFAULT_METHOD = {"local": METHOD_LOCAL, "openai_compatible": METHOD_LOGPROBS, "anthropic": METHOD_STRUCTURED}
# Requests in flight at once, per provider: the local model is CPU-bound (its ONNX
# session already uses the cores), remote APIs are latency-bound.
DEFAULT_CONCURRENCY = {"local": 1, "openai_compatible": 8, "anthropic": 4}
DEFAULT_MODEL = {"local": "all-MiniLM-L6-v2-onnx-int8"}


class RerankError(ValueError):
    """A run cannot be created or changed as asked; the message names the problem."""


# --------------------------------------------------------------------------- plan


@dataclass(frozen=True)
class PlannedRequest:
    index: int
    query_id: int
    qid: str
    candidate_ids: tuple[int, ...]
    spec: GradeSpec


def rerank_plan(*, retrieval_run: RetrievalRun, question_version: str, question_sha256: str | None = None,
                candidates_per_request: int) -> list[PlannedRequest]:
    """The run's requests in their fixed order (no database writes)."""
    if candidates_per_request < 1:
        raise RerankError("candidates per request must be at least 1")
    question = question_get(question_version, sha256=question_sha256)
    candidates = (
        RetrievalCandidate.objects.filter(result__run=retrieval_run, result__query__kind__in=RERANKED_KINDS)
        .select_related("result__query", "passage")
        .order_by("result__query__position", "rank")
    )
    by_query: dict[int, list[RetrievalCandidate]] = {}
    for candidate in candidates:
        by_query.setdefault(candidate.result.query_id, []).append(candidate)
    plan: list[PlannedRequest] = []
    for group in by_query.values():
        query = group[0].result.query
        for start in range(0, len(group), candidates_per_request):
            batch = group[start:start + candidates_per_request]
            spec = question.render(query=query.text, candidates=[Candidate(c.passage.caption, c.passage.text)
                                                                  for c in batch])
            plan.append(PlannedRequest(index=len(plan), query_id=query.pk, qid=query.qid,
                                       candidate_ids=tuple(c.pk for c in batch), spec=spec))
    return plan


# --------------------------------------------------------------------------- writes


def rerank_preflight(*, provider: str, model_id: str, base_url: str = "") -> ProviderSetup:
    """The provider as the run would use it, or RerankError naming what is missing (e.g. the key's variable)."""
    try:
        return provider_preflight(provider=provider, model_id=model_id or DEFAULT_MODEL.get(provider, ""),
                                  base_url=base_url)
    except ProviderError as error:
        raise RerankError(str(error)) from None


def rerank_run_create(
    *, retrieval_run: RetrievalRun, provider: str, model_id: str = "", method: str = "",
    question_version: str = DEFAULT_VERSION, candidates_per_request: int = DEFAULT_CANDIDATES_PER_REQUEST,
    max_requests: int | None = None, max_input_tokens: int = DEFAULT_MAX_INPUT_TOKENS,
    concurrency: int | None = None, base_url: str = "", user: Any = None, enqueue: bool = True,
) -> RerankRun:
    """Create a queued run with its own ledger and queue it (after commit). Budget defaults: 272 requests, 2M tokens."""
    if retrieval_run.status != RunStatus.DONE:
        raise RerankError(f"retrieval run #{retrieval_run.pk} is {retrieval_run.status}, not done")
    if provider not in DEFAULT_METHOD:
        raise RerankError(f"unknown provider {provider!r}; use {', '.join(DEFAULT_METHOD)}")
    model_id = model_id or DEFAULT_MODEL.get(provider, "")
    if not model_id:
        raise RerankError("a pinned model id is required for this provider")
    method = method or DEFAULT_METHOD[provider]
    allowed = {"local": {METHOD_LOCAL}, "openai_compatible": {METHOD_LOGPROBS, METHOD_STRUCTURED},
               "anthropic": {METHOD_STRUCTURED}}[provider]
    if method not in allowed:
        raise RerankError(f"{provider} grades by {' or '.join(sorted(allowed))}, not {method!r}")
    rerank_preflight(provider=provider, model_id=model_id, base_url=base_url)
    question = question_get(question_version)
    plan = rerank_plan(retrieval_run=retrieval_run, question_version=question_version,
                       candidates_per_request=candidates_per_request)
    if not plan:
        raise RerankError(f"retrieval run #{retrieval_run.pk} has no candidates for ranking or outside-corpus queries")
    with transaction.atomic():
        try:
            ledger = provider_services.ledger_create(
                purpose=f"benchmarks rerank of retrieval run #{retrieval_run.pk}", provider=provider,
                model_id=model_id, base_url=base_url, max_requests=max_requests or DEFAULT_MAX_REQUESTS,
                max_input_tokens=max_input_tokens, concurrency=concurrency or DEFAULT_CONCURRENCY[provider],
            )
        except ProviderError as error:
            raise RerankError(str(error)) from None
        run = RerankRun.objects.create(
            suite=retrieval_run.suite, retrieval_run=retrieval_run, ledger=ledger, provider=provider,
            model_id=model_id, method=method, question_version=question.version, question_sha256=question.sha256,
            candidates_per_request=candidates_per_request, requests_planned=len(plan),
            candidates_planned=sum(len(p.candidate_ids) for p in plan),
            created_by=user if getattr(user, "is_authenticated", False) else None,
        )
        if enqueue:
            _enqueue(run)
    return run


def _enqueue(run: RerankRun) -> None:
    job_enqueue(run)


def rerank_run_cancel(*, run: RerankRun) -> RerankRun:
    """Ask a running run to stop (in-flight requests finish and are recorded); a queued run stops at once."""
    RerankRun.objects.filter(pk=run.pk, status=RerankStatus.QUEUED).update(
        status=RerankStatus.CANCELLED, stop_reason="cancelled before it started", finished_at=Now(),
        cancel_requested=True)
    RerankRun.objects.filter(pk=run.pk, status=RerankStatus.RUNNING).update(cancel_requested=True)
    run.refresh_from_db()
    return run


def _grade_rows(run: RerankRun, planned: PlannedRequest, result: RequestResult) -> list[RerankGrade]:
    # local import: numpy: for the run that grades, not the pages importing this module
    from scoring.stats.calibration import p_useful

    rows = []
    for position, candidate_id in enumerate(planned.candidate_ids, start=1):
        common = {"run": run, "query_id": planned.query_id, "candidate_id": candidate_id,
                  "attempt": max(1, result.attempt), "request_index": planned.index,
                  "position_in_request": position, "request_key": result.key, "receipt_id": result.receipt_id}
        if result.status == "answered" and result.parse is not None:
            grade = result.parse.grades[position - 1]
            probs = grade.probs
            rows.append(RerankGrade(
                **common, status=RerankGrade.Status.GRADED, method=result.parse.method,
                p0=probs[0], p1=probs[1], p2=probs[2], p3=probs[3], p_useful=p_useful(probs),
                confidence=concentration(probs), captured_mass=grade.captured_mass, grade=grade.grade,
            ))
        else:
            status = RerankGrade.Status.UNKNOWN if result.status == "unknown" else RerankGrade.Status.FAILED
            rows.append(RerankGrade(**common, status=status, error=result.error[:2000]))
    return rows


def rerank_run_execute(
    *, run_id: int, transport: httpx.BaseTransport | None = None,
    before_send: Callable[[], None] | None = None,
) -> str:
    """Claim the run and send what still needs sending. Returns the final status ('' if not claimed).

    ``before_send`` is a test hook called before each request (used to simulate a crash).
    """
    token = job_claim(RerankRun, pk=run_id)
    if not token:
        logger.info("rerank run %s: nothing to claim (already running, finished or unknown)", run_id)
        return ""
    run = RerankRun.objects.select_related("ledger", "retrieval_run").get(pk=run_id)
    try:
        # This process may not have the environment the launching one had (a worker without the key).
        provider_preflight(provider=run.provider, model_id=run.model_id, base_url=run.ledger.base_url)
    except ProviderError as error:
        failed = job_fail(RerankRun, pk=run_id, token=token, message=f"not started: {error}",
                          stop_reason="provider not configured; nothing was sent")
        return RerankStatus.FAILED if failed else ""
    try:
        plan = rerank_plan(retrieval_run=run.retrieval_run, question_version=run.question_version,
                           question_sha256=run.question_sha256, candidates_per_request=run.candidates_per_request)
        client = client_for_ledger(run.ledger, transport=transport)
        try:
            requests = [client.prepare_grades(p.spec, method=run.method) for p in plan]
            if run.provider == "local":
                _warm_local(requests, run_id=run_id, token=token)
            reattempt: set[str] = set()
            if run.reattempt_requested:
                reattempt = {
                    g.request_key for g in _current_grades(run) if g.status != RerankGrade.Status.GRADED
                }

            def should_stop() -> str:
                if before_send is not None:
                    before_send()
                if not job_beat(RerankRun, pk=run_id, token=token):
                    return "claim lost: another execution holds this run"
                if RerankRun.objects.filter(pk=run_id, cancel_requested=True).exists():
                    return "cancelled"
                return ""

            def on_result(result: RequestResult) -> None:
                if result.status == "not_sent":
                    return
                with transaction.atomic():  # grades only while this execution still holds the run
                    if not job_beat(RerankRun, pk=run_id, token=token):
                        raise ClaimLost(f"rerank run {run_id}: claim lost")
                    RerankGrade.objects.bulk_create(_grade_rows(run, plan[result.index], result),
                                                    ignore_conflicts=True)

            report = provider_services.ledger_execute(
                ledger=run.ledger, client=client, requests=requests, reattempt_keys=reattempt,
                should_stop=should_stop, on_result=on_result,
            )
        finally:
            client.close()
    except Exception as error:
        failed = job_execution_error(RerankRun, pk=run_id, token=token, error=error, what=f"rerank run {run_id}")
        return RerankStatus.FAILED if failed else ""
    reason = report.stop_reason
    if reason.startswith("claim lost"):
        return ""
    failure = _run_failure(report)
    message = job_error_with_finish(_run_read(run_id), failure) if failure else "" if reason else _incomplete(run)
    if message:
        if not job_fail(RerankRun, pk=run_id, token=token, message=message,
                        stop_reason=reason, reattempt_requested=False):
            return ""
        return RerankStatus.FAILED
    status = RerankStatus.CANCELLED if reason == "cancelled" else RerankStatus.STOPPED if reason else RerankStatus.DONE
    if status == RerankStatus.STOPPED:
        reason = job_error_with_finish(_run_read(run_id), reason)
    if not job_finish(RerankRun, pk=run_id, token=token, status=status, stop_reason=reason,
                      reattempt_requested=False):
        return ""
    return status


def _run_read(run_id: int) -> RerankRun:
    return RerankRun.objects.select_related("ledger").get(pk=run_id)


def _incomplete(run: RerankRun) -> str:
    """The error of a run whose requests all went out but whose grades have holes ('' when none): it ends failed
    with the finish command, as every kind ends the same loss (never "done" at 100% with unknown candidates)."""
    grades = _current_grades(run)
    unknown = sum(g.status == RerankGrade.Status.UNKNOWN for g in grades)
    failed = sum(g.status == RerankGrade.Status.FAILED for g in grades)
    if not unknown and not failed:
        return ""
    counts = ", ".join(f"{name} {n}" for name, n in (("failed", failed), ("unknown", unknown)) if n)
    return job_incomplete_message(
        problems=f"{unknown + failed} of {run.candidates_planned} candidates have no grade ({counts})",
        finish_command=job_finish_command(_run_read(run.pk), ending=True))


def _warm_local(requests: list, *, run_id: int, token: str) -> None:
    """Embed the run's texts into the shared vector store first, beating as it goes: workers that run the same
    snapshot at once split the embedding instead of each computing all of it (vectors are bit-identical
    whoever computes them; the requests then read them)."""
    def beat() -> None:
        if not job_beat(RerankRun, pk=run_id, token=token):
            raise ClaimLost(f"rerank run {run_id}: claim lost")

    embeddings.warm([text for r in requests for text in (r.body["query"], *r.body["items"])], beat=beat)


def _run_failure(report: ExecutionReport) -> str:
    """Why the run failed as a whole ('' when it did not): a provider answer that rules out every request,
    or no request answered while some were tried (a cancelled run with nothing tried is just cancelled)."""
    if report.fatal:
        return f"provider error: {report.fatal}"
    tried = [r for r in report.results if r.status in ("failed", "unknown")]
    if tried and not any(r.status == "answered" for r in report.results):
        first = next(r.error for r in tried if r.error) if any(r.error for r in tried) else "no error recorded"
        return f"every request failed ({len(tried)} tried, none answered); first error: {first}"
    return ""


# --------------------------------------------------------------------------- reads


def _current_grades(run: RerankRun) -> list[RerankGrade]:
    """The latest attempt of every graded/failed candidate."""
    latest: dict[int, RerankGrade] = {}
    for grade in RerankGrade.objects.filter(run=run).select_related("query").order_by("attempt", "id"):
        latest[grade.candidate_id] = grade
    return sorted(latest.values(), key=lambda g: (g.request_index, g.position_in_request))


def rerank_run_grades(*, run: RerankRun) -> list[RerankGrade]:
    return _current_grades(run)


@dataclass
class RerankProgress:
    run: RerankRun
    candidates_planned: int
    graded: int
    failed: int
    unknown: int
    requests_planned: int
    spend: provider_selectors.LedgerSpend
    failures: list[RerankGrade] = field(default_factory=list)
    exact_citation_controls: int = 0

    @property
    def pending(self) -> int:
        return self.candidates_planned - self.graded - self.failed - self.unknown

    @property
    def percent(self) -> int:
        done = self.graded + self.failed + self.unknown
        return math.floor(100 * done / self.candidates_planned) if self.candidates_planned else 100


def rerank_run_progress(*, run: RerankRun, grades: list[RerankGrade] | None = None) -> RerankProgress:
    """``grades``: the run's current grades (``rerank_run_grades``) when the caller has read them already."""
    run.refresh_from_db()
    grades = _current_grades(run) if grades is None else grades
    counts = dict.fromkeys(RerankGrade.Status.values, 0)
    for grade in grades:
        counts[grade.status] += 1
    exact = run.retrieval_run.results.filter(query__kind=QueryKind.EXACT_CITATION).count()
    return RerankProgress(
        run=run, candidates_planned=run.candidates_planned, graded=counts["graded"], failed=counts["failed"],
        unknown=counts["unknown"], requests_planned=run.requests_planned,
        spend=provider_selectors.ledger_spend(ledger=run.ledger),
        failures=[g for g in grades if g.status != RerankGrade.Status.GRADED][:60],
        exact_citation_controls=exact,
    )


def rerank_run_list(*, retrieval_run: RetrievalRun | None = None) -> list[RerankRun]:
    runs = RerankRun.objects.select_related("suite", "retrieval_run", "ledger").annotate(
        n_graded=Count("grades", distinct=True))
    if retrieval_run is not None:
        runs = runs.filter(retrieval_run=retrieval_run)
    return list(runs.order_by("-id")[:100])
