"""The grading app's tracked jobs, each declared once: all the job lifecycle (``reviewapp.core.jobs`` and
``reviewapp.jobs``) needs to know of an extraction (or grading) job and of a label audit."""

from __future__ import annotations

from typing import Any

from grading.audits.models import Audit, AuditJudge
from grading.runs.models import ConsoleJob
from reviewapp.core.jobs import JobKind


def _extraction_task(job: ConsoleJob) -> str:
    return f"grading.runs.tasks.{'extract_run' if job.kind == ConsoleJob.Kind.EXTRACT else 'grade_run'}"


def _extraction_changes(job: ConsoleJob, reattempt: bool) -> dict[str, Any]:
    return {"params": {**job.params, "reattempt": reattempt}, "stage": "queued again (resume)"}


def _extraction_ledgers(job: ConsoleJob) -> dict[int, int]:
    # One request per contract, on the job's one ledger (none for the local heuristic and for grading).
    return {job.ledger_id: job.total} if job.ledger_id and job.kind == ConsoleJob.Kind.EXTRACT else {}


def _extraction_progress(job: ConsoleJob) -> tuple[int, int, str]:
    return job.done, job.total, "contracts" if job.kind == ConsoleJob.Kind.EXTRACT else "extractions"


EXTRACTION_JOB = JobKind(
    name="extraction", model=ConsoleJob, task=_extraction_task,
    error="grading.runs.jobs.JobError", noun="job",
    resumable=(ConsoleJob.Status.FAILED,), changes=_extraction_changes, ledgers=_extraction_ledgers,
    progress=_extraction_progress,
    skips="contracts already done", page="cuad:job",
)


def _audit_changes(audit: Audit, reattempt: bool) -> dict[str, Any]:
    return {"params": {**audit.params, "reattempt": reattempt, "waits": 0}, "stage": "queued again (resume)"}


def _audit_ledgers(audit: Audit) -> dict[int, int]:
    # Each judge rules once on every candidate, on its own ledger.
    judges = AuditJudge.objects.filter(audit=audit).values_list("ledger_id", flat=True)
    return {ledger_id: audit.n_candidates for ledger_id in judges if ledger_id}


def _audit_progress(audit: Audit) -> tuple[int, int, str]:
    from grading.audits.selectors import audit_progress

    return sum(audit_progress(audit=audit).values()), 2 * audit.n_candidates, "rulings"


AUDIT_JOB = JobKind(
    name="audit", model=Audit, task="grading.audits.tasks.audit_run",
    error="grading.audits.services.AuditError", noun="audit",
    resumable=(Audit.Status.FAILED,), changes=_audit_changes, ledgers=_audit_ledgers, progress=_audit_progress,
    skips="candidates already judged", page="cuad:audit",
)
