"""Celery tasks of the CUAD console: load by id, call a service, done (claims are in the services)."""

from __future__ import annotations

from celery import shared_task

from grading.runs.jobs import job_extract_execute, job_grade_execute


@shared_task(acks_late=True)
def extract_run(job_id: int) -> None:
    """Run an extraction job (local heuristic baseline or an LLM provider), then grade the run."""
    job_extract_execute(job_id=job_id)


@shared_task(acks_late=True)
def grade_run(job_id: int) -> None:
    """Compute and store the pair scores of a large pasted run."""
    job_grade_execute(job_id=job_id)
