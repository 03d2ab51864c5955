"""The statute benchmark's tracked job, declared once: all the job lifecycle (``reviewapp.core.jobs`` and
``reviewapp.jobs``) needs to know of a rerank run."""

from __future__ import annotations

from typing import Any

from benchmarks.rerank.models import FINISHED, RerankGrade, RerankRun
from reviewapp.core.jobs import JobKind


def _changes(run: RerankRun, reattempt: bool) -> dict[str, Any]:
    return {"cancel_requested": False, "stop_reason": "", "reattempt_requested": reattempt}


def _progress(run: RerankRun) -> tuple[int, int, str]:
    done = RerankGrade.objects.filter(run=run).values("candidate_id").distinct().count()
    return done, run.candidates_planned, "candidates"


def _preflight(run: RerankRun) -> None:
    from benchmarks.rerank.services import rerank_preflight

    rerank_preflight(provider=run.provider, model_id=run.model_id, base_url=run.ledger.base_url)


RERANK_JOB = JobKind(
    name="rerank", model=RerankRun, task="benchmarks.rerank.tasks.rerank_run_execute",
    error="benchmarks.rerank.services.RerankError",
    noun="run", resumable=tuple(FINISHED), changes=_changes, progress=_progress, preflight=_preflight,
    ledgers=lambda run: {run.ledger_id: run.requests_planned}, skips="answered requests",
    page="benchmarks:rerank-run",
)
