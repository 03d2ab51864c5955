"""Celery tasks of the CUAD console: load by id, call a service, done (claims are in the services)."""

from __future__ import annotations

from grading.audits.services import audit_execute
from grading.runs.jobs import job_extract_execute, job_grade_execute
from reviewapp.celery import app


@app.task(acks_late=True)
def extract_run(job_id: int) -> None:
    """Run an extraction job (local heuristic baseline or an LLM provider), then grade the run."""
    job_extract_execute(job_id=job_id)


@app.task(acks_late=True)
def grade_run(job_id: int) -> None:
    """Compute and store the pair scores of a large pasted run."""
    job_grade_execute(job_id=job_id)


@app.task(acks_late=True)
def audit_run(audit_id: int) -> None:
    """Run a CUAD label audit: flag (once), then each judge rules on the candidates it has not ruled on."""
    audit_execute(audit_id=audit_id)
