"""The sweeper: recovers, with no operator, the tracked jobs whose execution is gone and the queued jobs whose
message may be lost. Every decision it takes is the job lifecycle's own (``reviewapp.core.jobs``): staleness,
liveness, the take-over and the send; this module only finds the jobs to apply them to, under celery beat
(``reviewapp.core.tasks.jobs_sweep``).
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from datetime import timedelta
from typing import Any

from django.conf import settings
from django.db.models import Q
from django.db.models.functions import Now
from django.utils import timezone

from reviewapp.core.jobs import (
    TrackedJob,
    celery_active,
    celery_node,
    is_stale,
    job_enqueue,
    job_kind_resume,
    job_kinds,
    job_liveness,
    last_progress,
    stale_filter,
)

logger = logging.getLogger(__name__)


@dataclass
class SweepReport:
    requeued: list[str] = field(default_factory=list)  # "<model label> <pk>" of each job taken over
    abandoned: list[str] = field(default_factory=list)  # failed: their worker died too often
    skipped: list[str] = field(default_factory=list)  # stale, but changed meanwhile or refused by their kind
    resent: list[str] = field(default_factory=list)  # queued, whose message may be lost: sent again


def _abandon(model: type[TrackedJob], job: TrackedJob, limit: int, *, gone: bool) -> bool:
    message = (
        f"its worker was lost in each of {job.executions} executions (it died, or a database or broker outage "
        f"interrupted it; the last was {job.worker or 'unknown'}); the sweeper stopped requeueing it after "
        f"{limit}, since a job that kills its worker (out of memory, a crash in a library) would loop. "
        "Answered requests are kept: resume it by hand once the cause is fixed."
    )
    rows = model.objects.filter(pk=job.pk, status=model.RUNNING, claim_token=job.claim_token)
    if not gone:
        rows = rows.filter(stale_filter(model, job))  # the row is running: only its silence is left to judge
    return bool(rows.update(status=model.FAILED, error=message, finished_at=Now(), claim_token=""))


_NOT_ASKED = object()


def jobs_sweep() -> SweepReport:
    """Recover every job whose execution is gone, and send every queued job whose message may be lost.

    Run by celery beat every ``JOB_SWEEP_SECONDS``, with no operator:

    - a running job is taken over (``job_kind_resume``) when its heartbeat is older than its stale
      timeout, or at once, on the evidence the manual takeover uses, when ``celery inspect`` shows that its
      Celery node answers and no longer runs it (a killed pool child; an execution stopped by a database or
      broker outage, which leaves its job running rather than failed). ``JOB_GONE_GRACE_SECONDS`` of silence
      are asked of the latter first, so a task that has just started is not mistaken for a gone one;
    - a queued job whose message was never confirmed sent (the broker was down when it was queued) is sent after
      ``JOB_RESEND_SECONDS``, and one confirmed but still queued after ``JOB_RESEND_SENT_SECONDS`` (a broker that
      restarted without its data) is sent again.

    Safe to run anywhere and concurrently: each takeover is the conditional UPDATE on the very claim token
    judged, each re-send is conditional on the queued row as read, and the task's claim (queued -> running)
    admits exactly one execution however many messages arrive. The resume never re-attempts a paid provider's
    unanswered requests (they stay disclosed as 'unknown'); the local model's are recomputed
    (``reviewapp.providers.services.ledger_execute``).
    """
    report = SweepReport()
    limit = int(settings.JOB_SWEEP_MAX_EXECUTIONS)
    grace = timedelta(seconds=int(getattr(settings, "JOB_GONE_GRACE_SECONDS", 5)))
    active: Any = _NOT_ASKED
    for kind in job_kinds():
        model = kind.model
        for job in model.objects.filter(status=model.RUNNING).order_by("pk"):
            name = f"{model._meta.label} {job.pk}"
            gone = False
            if not is_stale(job):
                seen = last_progress(job)
                if celery_node(job.worker) is None or (seen is not None and seen > timezone.now() - grace):
                    continue
                if active is _NOT_ASKED:  # one question to the workers per sweep, only when it can matter
                    active = celery_active()
                if job_liveness(job, active=active or {}).inspect != "gone":
                    continue
                gone = True
            if limit and job.executions >= limit:
                if _abandon(model, job, limit, gone=gone):
                    logger.warning("sweeper: %s failed, its execution was lost in %s executions", name,
                                   job.executions)
                    report.abandoned.append(name)
                continue
            holder = job.worker  # the resume reloads the job, whose worker it has just cleared
            try:
                # Never a re-attempt of paid requests: those left unanswered stay disclosed 'unknown'.
                job_kind_resume(job, take_over=True)
            except ValueError as error:  # changed meanwhile, or its kind refuses (e.g. a provider key is gone)
                logger.warning("sweeper: %s not requeued: %s", name, error)
                report.skipped.append(name)
                continue
            logger.warning("sweeper: %s %s (worker %s); requeued", name,
                           "is no longer run by its worker" if gone else "had a stale heartbeat", holder)
            report.requeued.append(name)
        _resend_queued(model, report)
    return report


def _resend_queued(model: type[TrackedJob], report: SweepReport) -> None:
    now = timezone.now()
    unconfirmed = Q(sent_at__isnull=True)  # every path that queues a job again clears sent_at
    lost = Q(sent_at__lt=now - timedelta(seconds=int(getattr(settings, "JOB_RESEND_SENT_SECONDS", 600))))
    due = Q(queued_at__isnull=True) | Q(queued_at__lt=now - timedelta(
        seconds=int(getattr(settings, "JOB_RESEND_SECONDS", 30))))
    for job in model.objects.filter(due & (unconfirmed | lost), status=model.QUEUED).order_by("pk"):
        # Of two sweepers, the one whose UPDATE finds the row as both read it sends.
        if not model.objects.filter(pk=job.pk, status=model.QUEUED, queued_at=job.queued_at,
                                    sent_at=job.sent_at).update(queued_at=Now(), sent_at=None):
            continue
        job.refresh_from_db()
        job_enqueue(job)
        name = f"{model._meta.label} {job.pk}"
        logger.warning("sweeper: %s was queued with no message known to be on the broker; sent", name)
        report.resent.append(name)
