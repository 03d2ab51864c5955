"""A job as people control it: the resume form (with its budget raise) and the progress partial of a job's page,
and the resume command's arguments and run. The lifecycle itself (claim, heartbeat, takeover, resume, sweep) is
``reviewapp.core.jobs``; this module only turns requests and command options into its calls."""

from __future__ import annotations

import getpass
import socket
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from django.contrib import messages
from django.core.management.base import CommandError

from reviewapp.core.jobs import J, TrackedJob, is_stale, job_liveness, last_progress

# --------------------------------------------------------------------------- the resume view


BUDGET_FIELDS = ("add_requests", "add_input_tokens")
MAX_BUDGET_RAISE = 2**31 - 1  # what the ledger's request column holds


def budget_raise_input(data: Any, *, raises: type[Exception]) -> dict[str, Any]:
    """The optional budget raise of a resume form: {} when none was asked for; ``raises`` naming a bad field."""
    amounts = {}
    for name in BUDGET_FIELDS:
        raw = (data.get(name) or "").strip()
        try:
            amounts[name] = int(raw) if raw else 0
        except ValueError:
            raise raises(f"{name}: {raw[:40]!r} is not a whole number") from None
        if not 0 <= amounts[name] <= MAX_BUDGET_RAISE:
            raise raises(f"{name}: must be between 0 and {MAX_BUDGET_RAISE}")
    if not any(amounts.values()):
        return {}
    return {**amounts, "reason": (data.get("reason") or "").strip()}


@dataclass(frozen=True)
class ResumeForm:
    """What a kind's resume form (``templates/_job_lifecycle.html#forms``) posts, read once for every kind."""

    reattempt: bool  # re-send failed and unknown requests (each counts against the budget)
    worker_lost: bool  # the "take over" action: honoured only when the job's worker is gone
    raise_by: dict[str, Any]  # {} or add_requests, add_input_tokens and reason


def job_resume_post(request: Any, *, job: J, raises: type[Exception], budget_raise: Callable[..., J],
                    resume: Callable[[J, ResumeForm], Any], raised: Callable[[J], str], resumed: str) -> J:
    """The body of every resume view: read the form, raise the budget if asked, resume, say what happened.

    ``budget_raise(job=..., user=..., **raise_by)`` and ``resume(job, form)`` are the kind's own services;
    ``raised(job)`` and ``resumed`` the messages on success. The kind's error (``raises``) becomes an error
    message.
    """
    try:
        form = ResumeForm(reattempt=request.POST.get("reattempt") == "1",
                          worker_lost=request.POST.get("worker_lost") == "1",
                          raise_by=budget_raise_input(request.POST, raises=raises))
        if form.raise_by:
            job = budget_raise(job=job, user=request.user, **form.raise_by)
            messages.info(request, raised(job))
        resume(job, form)
    except raises as exc:
        messages.error(request, str(exc))
    else:
        if resumed:
            messages.success(request, resumed)
    return job


def job_progress_context(job: TrackedJob) -> dict[str, Any]:
    """What ``templates/_job_lifecycle.html`` shows of any job: who holds it, whether it looks stale, when it
    last made progress."""
    running = job.status == job.RUNNING
    return {"holder": job_liveness(job) if running else None, "stale": is_stale(job),
            "last_progress": last_progress(job)}


# --------------------------------------------------------------------------- the resume command


def add_resume_arguments(parser: Any, *, what: str, budget_of: str = "the") -> None:
    """The resume options every job kind's management command takes (``job_resume_command`` reads them)."""
    parser.add_argument("--resume", type=int, metavar=f"{what.upper()}_ID", help=f"resume a failed or stopped {what}")
    parser.add_argument("--reattempt", action="store_true", help="with --resume: re-send failed/unknown requests")
    parser.add_argument("--worker-lost", action="store_true",
                        help=f"with --resume: the worker is known to be dead; take a running {what} over now")
    parser.add_argument("--add-requests", type=int, default=0,
                        help=f"with --resume: raise {budget_of} request budget by this many")
    parser.add_argument("--add-input-tokens", type=int, default=0,
                        help=f"with --resume: raise {budget_of} input-token budget by this many")
    parser.add_argument("--reason", default="", help="why the budget is raised (recorded in the ledger)")


def job_resume_command(write: Callable[[str], Any], *, model: type[J], options: dict[str, Any], what: str,
                       raises: type[Exception], budget_raise: Callable[..., J], raised: Callable[[J], str],
                       resume: Callable[[J, bool], J]) -> J:
    """The body of every resume command (``--resume <what's id>``): raise the budget if asked (recorded with who
    ran the command), say who holds a running job, then the kind's ``resume(job, running)``. A missing job and
    the kind's error (``raises``) become a CommandError: one line, a non-zero exit."""
    job = model.objects.filter(pk=options["resume"]).first()
    if job is None:
        raise CommandError(f"no {what} {options['resume']}")
    try:
        if options["add_requests"] or options["add_input_tokens"]:
            job = budget_raise(job=job, add_requests=options["add_requests"],
                               add_input_tokens=options["add_input_tokens"], reason=options["reason"],
                               actor=command_actor())
            write(raised(job))
        running = job.status == job.RUNNING
        if running:
            write(f"{what} {job.pk}: {job_liveness(job).describe()}")
        return resume(job, running)
    except raises as exc:
        raise CommandError(str(exc)) from exc


def command_actor() -> str:
    """Who acts from a shell (a budget raise by a management command): the operating-system user and host."""
    try:
        user = getpass.getuser()
    except Exception:  # no user name in this environment (a container without one)
        user = "unknown user"
    return f"command line: {user}@{socket.gethostname()}"
