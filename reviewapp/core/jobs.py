"""One lifecycle for every long-running job (rerank runs, extraction jobs, audits, and any later kind).

An execution claims a job with a fresh token by a conditional UPDATE (queued -> running). Every later
write of that execution (heartbeat, progress, final status) is conditional on still holding the token,
so an execution that was paused or slow and lost its claim stops without writing anything, and a
finished job is never written again. Resuming a job clears the token first: whatever the old execution
still tries to write afterwards matches no row.

A concrete job model subclasses ``TrackedJob``, keeps its own ``status`` field, and names its statuses:
``QUEUED``, ``RUNNING``, ``FAILED`` and ``FINISHED`` (the terminal ones).

The sweeper that applies this lifecycle under celery beat, with no operator, is ``reviewapp.core.job_sweep``.
"""

from __future__ import annotations

import contextlib
import logging
import os
import socket
import uuid
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any, ClassVar, TypeVar

from django.conf import settings
from django.db import connections, models, transaction
from django.db.models import F, Q
from django.db.models.functions import Coalesce, Now
from django.utils import timezone
from django.utils.module_loading import import_string

logger = logging.getLogger(__name__)


class TrackedJob(models.Model):
    # Declared for the type checker only (annotations make no field): each kind has its own status field, with
    # its own choices, and the manager Django gives every concrete model. Its rows are Any here: the lookups on
    # ``status`` name a field of the concrete kind, which django-stubs cannot see on this abstract model.
    status: models.CharField[str, str]
    objects: ClassVar[models.Manager[Any]]

    # What every kind shows of a job: what it does now, who launched it, when.
    stage = models.CharField(max_length=300, blank=True)
    created_by = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL,
                                   related_name="+")
    created_at = models.DateTimeField(auto_now_add=True)
    claim_token = models.CharField(max_length=32, blank=True, help_text="which execution holds the job")
    worker = models.CharField(max_length=255, blank=True, help_text="host:pid of the execution holding the job")
    executions = models.PositiveIntegerField(default=0, help_text="how many times an execution claimed the job")
    started_at = models.DateTimeField(null=True, blank=True)
    # Written at the claim and on every step of progress, so a "running" row whose heartbeat is old
    # has lost its worker (see ``stale_after``).
    heartbeat_at = models.DateTimeField(null=True, blank=True)
    finished_at = models.DateTimeField(null=True, blank=True)
    error = models.TextField(blank=True)
    # The outbox of the job's message: ``queued_at`` when it was (last) put in the queue, ``sent_at`` when its
    # message reached the broker after that (None: not known to be sent). The sweeper sends a queued job whose
    # message was never confirmed, or was confirmed long ago (a broker restarted without its data).
    queued_at = models.DateTimeField(null=True, blank=True, default=timezone.now)
    sent_at = models.DateTimeField(null=True, blank=True)


    QUEUED = "queued"
    RUNNING = "running"
    FAILED = "failed"
    FINISHED: tuple[str, ...] = ("done", "failed")

    class Meta:
        abstract = True

    @property
    def is_finished(self) -> bool:
        return self.status in self.FINISHED

    def providers_used(self) -> list[str]:
        """The providers an execution sends requests to ("local" for the model on this machine). Kinds override
        it; without it a job is taken to wait on a remote provider (the longer stale timeout, the safe side)."""
        return ["remote"]

    def waits_on_network(self) -> bool:
        """True when an execution may sit in a provider request (up to PROVIDER_TIMEOUT_SECONDS) between two
        heartbeats; a job that only computes on this machine beats every few seconds."""
        return any(name not in ("", "local") for name in self.providers_used())


J = TypeVar("J", bound=TrackedJob)


class ClaimLost(RuntimeError):
    """This execution no longer holds the job (it was resumed elsewhere): stop without writing."""


IN_PROCESS = " (in-process)"


def worker_name() -> str:
    """Who executes: ``<celery node>:<pid>`` inside a Celery worker (``celery inspect`` can then say whether that
    node still runs it), else ``<host>:<pid> (in-process)`` (a command with --sync/--inline, a test)."""
    # local import: commands that send no task keep Celery and kombu unloaded (~0.2 s; tests/test_cold_start.py)
    from celery import current_task

    request = getattr(current_task, "request", None) if current_task else None
    node = getattr(request, "hostname", None) if request is not None and not request.is_eager else None
    if node:
        return f"{node}:{os.getpid()}"[:255]
    return f"{socket.gethostname()}:{os.getpid()}{IN_PROCESS}"[:255]


def stale_after(job: TrackedJob | None = None) -> timedelta:
    """A running job silent for longer than this has presumably lost its worker.

    Its executor beats before every provider request, after every answer and during long local steps. A job that
    only computes on this machine is never silent for long (``JOB_STALE_SECONDS_LOCAL``, default 30 s); one that
    waits on a provider may sit in one request for PROVIDER_TIMEOUT_SECONDS (``JOB_STALE_SECONDS_REMOTE``, default
    max(30, 2 x that timeout)). ``JOB_STALE_SECONDS``, when set, overrides both. Without a job: the longer one.
    """
    override = getattr(settings, "JOB_STALE_SECONDS", None)
    if override is not None:
        return timedelta(seconds=int(override))
    remote = int(getattr(settings, "JOB_STALE_SECONDS_REMOTE",
                         max(30, 2 * int(getattr(settings, "PROVIDER_TIMEOUT_SECONDS", 60)))))
    if job is not None and not job.waits_on_network():
        return timedelta(seconds=int(getattr(settings, "JOB_STALE_SECONDS_LOCAL", 30)))
    return timedelta(seconds=remote)


def last_progress(job: TrackedJob) -> datetime | None:
    """When a job last showed life: its heartbeat, else (rows from before heartbeats) its start."""
    return job.heartbeat_at or job.started_at


def is_stale(job: TrackedJob) -> bool:
    """Running, and no progress for longer than ``stale_after(job)``."""
    seen = last_progress(job)
    return job.status == job.RUNNING and (seen is None or seen < timezone.now() - stale_after(job))


def _silent_since(cutoff: datetime) -> Q:
    return Q(heartbeat_at__lt=cutoff) | Q(heartbeat_at__isnull=True, started_at__lt=cutoff) | Q(
        heartbeat_at__isnull=True, started_at__isnull=True
    )


def stale_filter(model: type[TrackedJob], job: TrackedJob | None = None) -> Q:
    """The rows ``is_stale`` accepts, plus every non-running row (for a conditional UPDATE)."""
    return ~Q(status=model.RUNNING) | _silent_since(timezone.now() - stale_after(job))


def job_claim(model: type[TrackedJob], *, pk: int, **fields: Any) -> str:
    """Claim the job with a fresh token; '' when there is nothing to claim.

    Claimable: a queued job, or a running job whose heartbeat is stale (its worker died; this is a redelivery of
    its task, e.g. Redis handing an unacknowledged message to another worker after the visibility timeout). A
    running job that still beats, and a finished job, are left alone: a second delivery does nothing.
    """
    job = model.objects.filter(pk=pk).first()
    if job is None or job.is_finished:
        return ""
    claimable = Q(status=model.QUEUED)
    if job.status == model.RUNNING and is_stale(job):
        # Only the execution we judged stale: a takeover by someone else meanwhile changes the token.
        claimable |= Q(status=model.RUNNING, claim_token=job.claim_token) & _silent_since(
            timezone.now() - stale_after(job))
    token = uuid.uuid4().hex
    claimed = model.objects.filter(claimable, pk=pk).update(
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


def job_interrupted(model: type[TrackedJob], *, pk: int, error: BaseException) -> bool:
    """True when ``error`` is an outage (a lost database or broker connection), not an error of the work itself.

    The execution then stops and writes no verdict: the job stays running with its claim, its answered requests
    kept and those in flight left 'sent' (disclosed 'unknown' at the resume, never re-sent by themselves). The
    sweeper resumes it: at its next sweep, since ``celery inspect`` then shows its node no longer runs it, or
    after its stale timeout. An outage that persists ends like a worker that keeps dying
    (``JOB_SWEEP_MAX_EXECUTIONS``). The same outage therefore ends the same way for every kind, whatever the
    timing (a "fail" write that happened to succeed no longer turns an interruption into a verdict).
    """
    # local import: commands that send no task keep Celery and kombu unloaded (~0.2 s; tests/test_cold_start.py)
    from reviewapp.core.health import is_outage, outage_reason

    if not is_outage(error):
        return False
    logger.warning("%s %s interrupted: %s; left to the sweeper to resume", model._meta.label, pk,
                   outage_reason(error))
    for connection in connections.all(initialized_only=True):  # the next task of this worker connects afresh
        with contextlib.suppress(Exception):
            connection.close_if_unusable_or_obsolete()
    return True


def job_execution_error(model: type[TrackedJob], *, pk: int, token: str, error: Exception, what: str) -> bool:
    """How every execution of every kind ends on an error; True when it wrote the job failed.

    Its claim lost (``ClaimLost``): another execution holds the job, so this one stops without writing. An
    outage (``job_interrupted``): it stops without a verdict, for the sweeper to resume. Any other error is the
    job's: it fails with the error's type and message (``failed: <reason>`` on its pages)."""
    if isinstance(error, ClaimLost):
        logger.info("%s: claim lost, another execution holds it; stopping", what)
        return False
    if job_interrupted(model, pk=pk, error=error):
        return False
    logger.exception("%s failed", what)
    return job_fail(model, pk=pk, token=token, message=f"{type(error).__name__}: {error}", stage="failed")


def job_incomplete_message(*, problems: str, finish_command: str) -> str:
    """The error of a job whose work ended with items that have no answer (failed, or 'unknown': in flight when an
    execution was lost), the same words for every kind: what is missing, why nothing is re-sent by itself, and
    the command that finishes it. Such a job ends FAILED (resumable), never "done" with holes in it."""
    text = (f"incomplete: {problems.rstrip().rstrip('.')}. Failed requests are never re-sent automatically: resume "
            "with 're-attempt failed requests' to send them again (each re-attempt counts against the budget).")
    return f"{text} To finish: {finish_command}" if finish_command else text


# --------------------------------------------------------------------------- where a job runs


def job_queue(job: TrackedJob) -> str:
    """The Celery queue of a job's executions: a job that waits on a provider goes to ``JOB_QUEUE_REMOTE`` (a
    concurrent worker pool), one that computes on this machine to ``JOB_QUEUE_LOCAL`` (a solo worker: the local
    model already uses every core). Either name unset: the default queue, as every task."""
    name = settings.JOB_QUEUE_REMOTE if job.waits_on_network() else settings.JOB_QUEUE_LOCAL
    return name or settings.CELERY_TASK_DEFAULT_QUEUE


def celery_app() -> Any:
    """The Celery app the workers run, named by ``settings.JOB_CELERY_APP`` (the project package wires it; nothing
    below imports it). Loading it makes it Celery's current app, so the ``@shared_task`` tasks send through it and
    its broker; a process loads it only when it sends a task or asks the workers (Celery is ~0.1 s of a start)."""
    return import_string(settings.JOB_CELERY_APP)


def job_task(job: TrackedJob) -> Any:
    """The task that executes ``job``, as its kind registered it (a dotted name, imported on first use)."""

    name = _KINDS[job._meta.label].task
    return import_string(name if isinstance(name, str) else name(job))


def job_enqueue(job: TrackedJob, *, countdown: int | None = None) -> None:
    """Send the job's task (``task(job.pk)``) to the job's queue once the current transaction commits.

    Sent or swept, never lost: inside a transaction (a launch creating its job) an unreachable broker raises
    ``BrokerUnavailable`` (reviewapp.core.health) at once, so the launch rolls back and answers 503 with nothing
    saved. A send that fails after the commit (the broker went down meanwhile; a resume or the sweeper, whose
    row is already written) is logged and leaves the job queued with no ``sent_at``: the sweeper sends it once
    the broker is back. A second delivery is harmless: the task's claim (queued -> running) admits one execution.
    """
    # local import: commands that send no task keep Celery and kombu unloaded (~0.2 s; tests/test_cold_start.py)
    from reviewapp.core.health import broker_require, is_outage

    if transaction.get_connection().in_atomic_block and not getattr(settings, "CELERY_TASK_ALWAYS_EAGER", False):
        broker_require("nothing was launched")
    celery_app()
    task = job_task(job)
    queue = job_queue(job)
    model, pk = type(job), job.pk

    def send() -> None:
        try:
            task.apply_async((pk,), queue=queue, countdown=countdown or None)
        except Exception as error:
            if not is_outage(error):
                raise
            logger.warning("%s %s: its message was not sent (%s); the sweeper sends it once the broker is back",
                           model._meta.label, pk, error)
            return
        model.objects.filter(pk=pk, status=model.QUEUED, sent_at__isnull=True).update(sent_at=Now())

    transaction.on_commit(send)


# --------------------------------------------------------------------------- job kinds


@dataclass(frozen=True)
class JobKind:
    """A kind of job, declared once by its app (``job_kind_register`` in ``ready()``); core owns the rest: the
    sweeper, the resume and take-over, the budget raise, the finish command, the progress fragment and the final
    state (``reviewapp.jobs``).

    ``name`` is the kind in URLs and commands (``/jobs/<name>/<pk>/...``, ``finish_job <name> <pk>``); ``noun`` what
    pages call one job ("run", "audit"); ``error`` the kind's own error (a ValueError); ``resumable`` the finished
    statuses a person may resume (a running job is taken over instead, only when its worker is gone); ``changes``
    the kind's fields written with a resume, given the job as read and whether failed requests are re-attempted;
    ``preflight`` refuses a resume whose provider is not configured; ``ledgers`` gives {ledger id: requests it must
    answer} (what the finish command and the budget raise cover); ``progress`` gives (done, total, unit);
    ``skips`` says what a resume skips; ``page`` names the URL of a job's page (its pk as argument)."""

    name: str
    model: type[TrackedJob]
    task: str | Callable[[Any], str]
    error: str  # the dotted name of ``raises``, imported on first use (services need not load at start-up)
    noun: str
    resumable: tuple[str, ...]
    changes: Callable[[Any, bool], dict[str, Any]]
    ledgers: Callable[[Any], dict[int, int]]
    progress: Callable[[Any], tuple[int, int, str]]
    skips: str
    page: str
    preflight: Callable[[Any], None] | None = None

    def describe(self, job: TrackedJob) -> str:
        return f"{self.noun} {job.pk}"

    @property
    def raises(self) -> type[Exception]:
        from django.utils.module_loading import import_string

        return import_string(self.error)


_KINDS: dict[str, JobKind] = {}


def job_kind_register(kind: JobKind) -> None:
    """Called from each job app's ``ready()``: the sweeper then recovers that kind's jobs, ``job_enqueue`` sends
    them to their task, and the pages, API and commands of ``reviewapp.jobs`` serve them. The task is named, not
    imported: a service that queues a job need not import the task module that calls it back (no import cycle),
    and a process that sends nothing never loads Celery."""
    _KINDS[kind.model._meta.label] = kind


def job_kinds() -> list[JobKind]:
    return list(_KINDS.values())


def job_kind(job_or_name: TrackedJob | str) -> JobKind:
    """The kind of a job, or of a kind's name; LookupError for an unknown name."""
    if isinstance(job_or_name, str):
        for kind in _KINDS.values():
            if kind.name == job_or_name:
                return kind
        raise LookupError(f"no job kind {job_or_name!r} (kinds: {', '.join(k.name for k in _KINDS.values())})")
    return _KINDS[job_or_name._meta.label]


def job_kind_resume(job: J, *, reattempt: bool = False, take_over: bool = False, force: bool = False,
                    enqueue: bool = True, ask_workers: bool = True) -> J:
    """The one resume of every kind: queue a finished job again, or take over a running one.

    A job in its kind's ``resumable`` statuses is queued again; answered requests are never re-sent, and with
    ``reattempt`` the failed and unknown ones are sent once more (each counts against the budget). A running job
    only with ``take_over`` (the "take over if its worker is gone" action, and the sweeper), and then only when
    its execution is gone, or with ``force`` (the person knows its worker died); otherwise the kind's error says
    who holds it. The kind's ``preflight`` refuses first when its provider is not configured.
    """
    kind = job_kind(job)
    if kind.preflight is not None:
        kind.preflight(job)
    resumable = [*kind.resumable, *([kind.model.RUNNING] if take_over or force else [])]
    # Refused at once only as the caller read it; a job that changed since is "changed meanwhile".
    refused = "" if job.status in resumable else f"only a {' or '.join(kind.resumable)} {kind.noun} can be resumed"
    if refused and job.status == kind.model.RUNNING:
        refused += " (a running one is taken over only when its worker is gone)"
    return job_resume(
        job, what=kind.describe(job), raises=kind.raises, resumable=resumable, force=force, refused=refused,
        ask_workers=ask_workers, changes=lambda job: {"error": "", **kind.changes(job, reattempt)},
        enqueue=job_enqueue if enqueue else None,
    )


# --------------------------------------------------------------------------- who holds a job


@dataclass(frozen=True)
class Liveness:
    """What is known of the execution holding a running job (for takeover decisions, pages and commands)."""

    worker: str  # host:pid, or node:pid under Celery; '' when nobody holds the job
    started_at: datetime | None
    heartbeat_at: datetime | None
    stale_seconds: int
    stale: bool  # heartbeat older than stale_seconds
    # "held": the job's Celery node answered and runs it; "gone": the node answered without it (the executing
    # process died, e.g. a killed pool child); "silent": the node did not answer (dead, paused or unreachable:
    # only the heartbeat can tell); "not asked": workers were not asked, or the execution is not under Celery.
    inspect: str = "not asked"

    @property
    def takeover_allowed(self) -> bool:
        return self.stale or self.inspect == "gone"

    @property
    def retry_at(self) -> datetime | None:
        seen = self.heartbeat_at or self.started_at
        return seen + timedelta(seconds=self.stale_seconds) if seen else None

    def describe(self) -> str:
        """One sentence for pages and commands: who holds it, since when, last heartbeat, the timeout."""
        if not self.worker:
            return "No worker holds it."
        beat = _clock(self.heartbeat_at) if self.heartbeat_at else "never"
        age = f" ({int((timezone.now() - self.heartbeat_at).total_seconds())} s ago)" if self.heartbeat_at else ""
        since = _clock(self.started_at) if self.started_at else "an unknown time"
        text = (f"Held by worker {self.worker} since {since}; last heartbeat {beat}{age}; "
                f"stale after {self.stale_seconds} s without one.")
        return text + {
            "held": " Celery inspect: its worker is running it.",
            "gone": " Celery inspect: its worker answered and no longer runs it.",
            "silent": " Celery inspect: its worker did not answer (dead, paused or unreachable).",
        }.get(self.inspect, "")


def _clock(moment: datetime) -> str:
    return timezone.localtime(moment).strftime("%Y-%m-%d %H:%M:%S")


def celery_node(worker: str) -> tuple[str, int] | None:
    """(node name, pid) of an execution recorded under Celery; None for in-process executions."""
    if not worker or worker.endswith(IN_PROCESS) or "@" not in worker:
        return None
    node, _, pid = worker.rpartition(":")
    return (node, int(pid)) if pid.isdigit() else None


def celery_active(timeout: float | None = None) -> dict[str, list[dict]] | None:
    """``celery inspect active``: {node: [task, ...]} of the nodes that answered; None when none answered."""
    wait = float(getattr(settings, "JOB_INSPECT_TIMEOUT_SECONDS", 1.0) if timeout is None else timeout)
    try:
        return celery_app().control.inspect(timeout=wait).active() or None
    except Exception:  # an unreachable broker: nobody answered
        return None


def job_liveness(job: TrackedJob, *, ask_workers: bool = False,
                 active: dict[str, list[dict]] | None = None) -> Liveness:
    """Who holds ``job`` and whether it looks alive; with ``ask_workers``, ``celery inspect`` is consulted.

    Only the node that runs the job can say it does not (a paused node does not answer at all, and the other
    nodes know nothing of it), so an answer that lacks the node falls back to the heartbeat.
    """
    running = job.status == job.RUNNING
    inspect = "not asked"
    node = celery_node(job.worker) if running else None
    if node is not None and (ask_workers or active is not None):
        replies = active if active is not None else celery_active()
        name, pid = node
        if replies is None or name not in replies:
            inspect = "silent"
        else:
            held = any(_runs_job(task, job, pid) for task in replies[name] or ())
            inspect = "held" if held else "gone"
    return Liveness(
        worker=job.worker if running else "", started_at=job.started_at, heartbeat_at=job.heartbeat_at,
        stale_seconds=int(stale_after(job).total_seconds()), stale=is_stale(job), inspect=inspect,
    )


def _runs_job(task: dict, job: TrackedJob, pid: int) -> bool:
    """Whether an active task of ``celery inspect`` is this job's execution: its process, and its own task.

    The pid alone is not enough: a prefork child whose job an outage interrupted is free for the next task, and
    that is often the sweep itself (or another job's task), which made the interrupted job look held until its
    stale timeout (minutes for a job waiting on a provider). A reply that does not name its task and arguments
    counts as the job's (the safe side: the heartbeat decides)."""
    if int(task.get("worker_pid") or -1) != pid:
        return False
    name, args = task.get("name"), task.get("args")
    if not name or not isinstance(args, list | tuple):
        return True
    try:
        own = job_task(job).name
    except Exception:  # a kind that is not registered here: cannot tell, the safe side
        return True
    if name != own:
        return False
    kwargs = task.get("kwargs")
    ids = [*list(args)[:1], *(kwargs.values() if isinstance(kwargs, dict) else ())]
    return job.pk in ids or not ids  # the job's task, sent with no id to compare: the safe side


def job_takeover(model: type[TrackedJob], *, job: TrackedJob, from_statuses: list[str], force: bool = False,
                 ask_workers: bool = True, **fields: Any) -> tuple[bool, Liveness]:
    """Queue a job again for a new execution; a running one only when its execution is gone.

    Gone means: ``force`` (the person knows the worker died), a heartbeat older than ``stale_after(job)``, or
    ``celery inspect`` showing that the job's node no longer runs it. The UPDATE is conditional on the very
    execution that was judged (its claim token), so a job claimed again meanwhile is left alone. Returns
    (taken, what was known of the holder); correctness never depends on the judgement: the old execution's
    token is cleared, so whatever it still tries to write matches no row.
    """
    liveness = job_liveness(job, ask_workers=ask_workers and not force and not is_stale(job))
    rows = model.objects.filter(pk=job.pk, status__in=from_statuses)
    if job.status == model.RUNNING:
        if not (force or liveness.takeover_allowed):
            return False, liveness
        rows = rows.filter(claim_token=job.claim_token)
        if not force and liveness.inspect != "gone":
            rows = rows.filter(stale_filter(model, job))
    with transaction.atomic():
        # The execution locks its row while it opens a receipt (claim check and receipt in one transaction); a
        # process paused right there keeps the lock. Skip it rather than wait: try again in a moment.
        if not list(model.objects.select_for_update(skip_locked=True).filter(pk=job.pk).values_list("pk", flat=True)):
            return False, liveness
        taken = bool(rows.update(status=model.QUEUED, claim_token="", worker="", finished_at=None, queued_at=Now(),
                                 sent_at=None, **fields))
    return taken, liveness


def not_stale_message(what: str, job: TrackedJob, liveness: Liveness | None = None) -> str:
    liveness = liveness or job_liveness(job)
    seen = last_progress(job)
    since = _clock(seen) if seen else "its start"
    retry = f" Try again after {_clock(liveness.retry_at)} if it stays silent." if liveness.retry_at else ""
    return (
        f"{what} is still running and made progress at {since} (less than {liveness.stale_seconds} s ago): its "
        f"worker looks alive, so it was not taken over. {liveness.describe()}{retry}"
    )


def job_resume(job: J, *, what: str, raises: type[Exception], resumable: Sequence[str], force: bool,
               changes: Callable[[J], dict[str, Any]], ask_workers: bool = True, refused: str = "",
               enqueue: Callable[[J], Any] | None = None) -> J:
    """Queue a job again for a new execution: the one resume and takeover of every kind.

    ``what`` names the job in messages ("audit 3"); ``raises`` is the kind's own error (a ValueError). Only a
    job in ``resumable`` is touched; ``refused``, when given, is the reason a job in another status is refused
    before anything is asked. A running job (``RUNNING`` in ``resumable``) is taken over only when ``force`` (the
    person knows its worker died) or its execution is gone (``job_takeover``); otherwise the error says who holds
    it, since when, its last heartbeat and the timeout. ``changes(job)`` (the job as just read) gives the kind's
    fields written in the same conditional UPDATE (e.g. its "re-attempt" flag); ``enqueue`` sends its task.
    """
    job.refresh_from_db()
    if refused and job.status not in resumable:
        raise raises(f"{what} is {job.status}; {refused}")
    model = type(job)
    # The token is cleared in the same UPDATE: an execution that was only paused can write nothing more.
    taken, liveness = job_takeover(model, job=job, from_statuses=list(resumable), force=force,
                                   ask_workers=ask_workers, **changes(job))
    job.refresh_from_db()
    if not taken:
        if job.status == model.RUNNING and not liveness.takeover_allowed:
            raise raises(not_stale_message(what, job, liveness))
        raise raises(f"{what} is {job.status}; it changed meanwhile, nothing to resume (reload)")
    if enqueue is not None:
        enqueue(job)
    return job
