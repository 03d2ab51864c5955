"""Celery tasks of the label audit: load by id, call a service, done (claims are in the services)."""

from __future__ import annotations

from celery import shared_task

from grading.audits.services import audit_execute


# The name it had in grading/runs/tasks.py: an audit queued before the move still finds its task.
@shared_task(name="grading.runs.tasks.audit_run", acks_late=True)
def audit_run(audit_id: int) -> None:
    """Run a CUAD label audit: flag (once), then each judge rules on the candidates it has not ruled on."""
    audit_execute(audit_id=audit_id)
