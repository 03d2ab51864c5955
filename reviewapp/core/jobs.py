"""One lifecycle for every long-running job (rerank runs, extraction jobs, audits, and any later kind).

An execution claims a job with a fresh token by a conditional UPDATE (queued -> running). Every later
write of that execution (heartbeat, progress, final status) is conditional on still holding the token,
so an execution that was paused or slow and lost its claim stops without writing anything, and a
finished job is never written again. Resuming a job clears the token first: whatever the old execution
still tries to write afterwards matches no row.

A concrete job model subclasses ``TrackedJob``, keeps its own ``status`` field, and names its statuses:
``QUEUED``, ``RUNNING``, ``FAILED`` and ``FINISHED`` (the terminal ones).
"""

from __future__ import annotations

import os
import socket
import uuid
from datetime import datetime, timedelta
from typing import Any

from django.conf import settings
from django.db import models
from django.db.models import F, Q
from django.db.models.functions import Coalesce, Now
from django.utils import timezone


class TrackedJob(models.Model):
    claim_token = models.CharField(max_length=32, blank=True, help_text="which execution holds the job")
    worker = models.CharField(max_length=255, blank=True, help_text="host:pid of the execution holding the job")
    executions = models.PositiveIntegerField(default=0, help_text="how many times an execution claimed the job")
    started_at = models.DateTimeField(null=True, blank=True)
    # Written at the claim and on every step of progress, so a "running" row whose heartbeat is old
    # has lost its worker (see ``stale_after``).
    heartbeat_at = models.DateTimeField(null=True, blank=True)
    finished_at = models.DateTimeField(null=True, blank=True)
    error = models.TextField(blank=True)

    QUEUED = "queued"
    RUNNING = "running"
    FAILED = "failed"
    FINISHED: tuple[str, ...] = ("done", "failed")

    class Meta:
        abstract = True

    @property
    def is_finished(self) -> bool:
        return self.status in self.FINISHED


class ClaimLost(RuntimeError):
    """This execution no longer holds the job (it was resumed elsewhere): stop without writing."""


def worker_name() -> str:
    return f"{socket.gethostname()}:{os.getpid()}"[:255]


def job_claim(model: type[TrackedJob], *, pk: int, **fields: Any) -> str:
    """queued -> running with a fresh token, exactly once; '' when another execution got there first."""
    token = uuid.uuid4().hex
    claimed = model.objects.filter(pk=pk, status=model.QUEUED).update(
        status=model.RUNNING, claim_token=token, worker=worker_name(), heartbeat_at=Now(),
        started_at=Coalesce(F("started_at"), Now()), executions=F("executions") + 1, **fields,
    )
    return token if claimed else ""


def job_held(model: type[TrackedJob], *, pk: int, token: str) -> models.QuerySet:
    """The job's row while this execution holds it (empty once the claim is lost or the job finished)."""
    return model.objects.filter(pk=pk, claim_token=token, status=model.RUNNING)


def job_beat(model: type[TrackedJob], *, pk: int, token: str, **fields: Any) -> bool:
    """Record progress; False when the claim is lost (the caller must stop)."""
    return bool(job_held(model, pk=pk, token=token).update(heartbeat_at=Now(), **fields))


def job_beat_or_stop(model: type[TrackedJob], *, pk: int, token: str, **fields: Any) -> None:
    if not job_beat(model, pk=pk, token=token, **fields):
        raise ClaimLost(f"{model.__name__} {pk}: claim lost, another execution holds it")


def job_finish(model: type[TrackedJob], *, pk: int, token: str, status: str, **fields: Any) -> bool:
    """running -> a terminal status, only while holding the claim; never rewrites a finished job."""
    return bool(job_held(model, pk=pk, token=token).update(status=status, finished_at=Now(), **fields))


def job_fail(model: type[TrackedJob], *, pk: int, token: str, message: str, **fields: Any) -> bool:
    return job_finish(model, pk=pk, token=token, status=model.FAILED, error=message[:10000], **fields)


def job_requeue(model: type[TrackedJob], *, pk: int, from_statuses: list[str], only_if_stale: bool,
                **fields: Any) -> bool:
    """Take a job back for a new execution: status queued, token cleared (the old execution can write nothing).

    A running job is taken only when ``only_if_stale`` is false (the caller knows its worker is gone) or its
    heartbeat is older than ``stale_after()``; the same test sits inside the UPDATE, so a worker that beats
    meanwhile keeps its job.
    """
    rows = model.objects.filter(pk=pk, status__in=from_statuses)
    if only_if_stale:
        rows = rows.filter(stale_filter(model))
    return bool(rows.update(status=model.QUEUED, claim_token="", worker="", finished_at=None, **fields))


def stale_after() -> timedelta:
    """A running job silent for longer than this has presumably lost its worker.

    Its executor beats before every provider request and after every answer; a request lasts at most
    PROVIDER_TIMEOUT_SECONDS, so a live executor is never silent longer than that. Default: twice the
    timeout, at least 120 s; settings.JOB_STALE_SECONDS overrides it.
    """
    default = max(120, 2 * int(getattr(settings, "PROVIDER_TIMEOUT_SECONDS", 60)))
    return timedelta(seconds=int(getattr(settings, "JOB_STALE_SECONDS", default)))


def last_progress(job: TrackedJob) -> datetime | None:
    """When a job last showed life: its heartbeat, else (rows from before heartbeats) its start."""
    return job.heartbeat_at or job.started_at


def is_stale(job: TrackedJob) -> bool:
    """Running, and no progress for longer than ``stale_after()``."""
    seen = last_progress(job)
    return job.status == job.RUNNING and (seen is None or seen < timezone.now() - stale_after())


def stale_filter(model: type[TrackedJob]) -> Q:
    """The rows ``is_stale`` accepts, plus every non-running row (for a conditional UPDATE)."""
    cutoff = timezone.now() - stale_after()
    old = Q(heartbeat_at__lt=cutoff) | Q(heartbeat_at__isnull=True, started_at__lt=cutoff) | Q(
        heartbeat_at__isnull=True, started_at__isnull=True
    )
    return ~Q(status=model.RUNNING) | old


def not_stale_message(what: str, job: TrackedJob) -> str:
    seen = last_progress(job)
    since = timezone.localtime(seen).strftime("%Y-%m-%d %H:%M:%S") if seen else "its start"
    return (
        f"{what} is still running and made progress at {since} (less than {int(stale_after().total_seconds())} s "
        "ago): its worker looks alive, so it was not resumed. Try again if it stays silent."
    )
