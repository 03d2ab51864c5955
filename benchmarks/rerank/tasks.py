"""Celery tasks of the statute benchmark: thin, take ids, safe to deliver twice."""

from __future__ import annotations

from celery import shared_task

from benchmarks.rerank.services import rerank_run_execute as execute


@shared_task(name="benchmarks.rerank_run_execute", acks_late=True)
def rerank_run_execute(run_id: int) -> str:
    return execute(run_id=run_id)
