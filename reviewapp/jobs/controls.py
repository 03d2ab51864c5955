"""A job as people control it, for every kind alike: the resume form and its budget raise, the finish command, the
final state and what the progress fragment shows. The lifecycle itself (claim, heartbeat, takeover, resume, sweep)
is ``reviewapp.core.jobs``; a kind only declares itself there (``JobKind``)."""

from __future__ import annotations

import socket
from dataclasses import dataclass
from typing import Any

from django.urls import reverse

from reviewapp.core.jobs import TrackedJob, is_stale, job_kind, job_liveness, last_progress
from reviewapp.providers import selectors as provider_selectors
from reviewapp.providers import services as provider_services

# How often every job page asks for its progress while the job is not finished (one interval for every kind).
POLL_SECONDS = 2
# Where a job's error stops saying what happened and starts saying what to run (pages quote only the first).
FINISH_MARK = " To finish: "

# --------------------------------------------------------------------------- the resume form


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
    """What the resume form (``templates/_job_lifecycle.html#forms``) posts, the same fields for every kind."""

    reattempt: bool  # re-send failed and unknown requests (each counts against the budget)
    worker_lost: bool  # the "take over" action: honoured only when the job's worker is gone
    raise_by: dict[str, Any]  # {} or add_requests, add_input_tokens and reason

    FIELDS = ("reattempt", "worker_lost", *BUDGET_FIELDS, "reason")

    @classmethod
    def read(cls, data: Any, *, raises: type[Exception]) -> ResumeForm:
        return cls(reattempt=data.get("reattempt") == "1", worker_lost=data.get("worker_lost") == "1",
                   raise_by=budget_raise_input(data, raises=raises))


# --------------------------------------------------------------------------- a job's ledgers


def job_ledgers(job: TrackedJob) -> list[tuple[Any, int]]:
    """(ledger, requests it must answer) of each of the job's ledgers, in ledger order."""
    planned = job_kind(job).ledgers(job)
    return [(ledger, planned[ledger.pk]) for ledger in provider_selectors.ledgers_get(ledger_ids=planned)]


def job_budget_raise(job: TrackedJob, *, add_requests: int = 0, add_input_tokens: int = 0, reason: str,
                     user: Any = None, actor: str = "") -> TrackedJob:
    """Raise the budget of each of the job's ledgers by the same amounts (recorded in each with who and why);
    resume, re-attempting, to use it. The kind's error when the job has no ledger (it sends no request)."""
    kind = job_kind(job)
    ledgers = [ledger for ledger, _ in job_ledgers(job)]
    if not ledgers:
        raise kind.raises(f"{kind.describe(job)} sends no provider request; it has no budget to raise")
    provider_services.ledgers_budget_raise(ledgers=ledgers, raises=kind.raises, add_requests=add_requests,
                                           add_input_tokens=add_input_tokens, reason=reason, user=user, actor=actor)
    job.refresh_from_db()
    return job


def job_shortfalls(job: TrackedJob) -> list[provider_selectors.Shortfall]:
    """Per ledger: its failed and unknown requests, those never sent (what it must answer less what was sent),
    and how far its budget must grow to finish. One count for every kind."""
    return [provider_selectors.ledger_shortfall(
        ledger=ledger, unsent=max(0, planned - provider_selectors.ledger_keys(ledger=ledger)))
        for ledger, planned in job_ledgers(job)]


def job_finish_command(job: TrackedJob, shortfalls: list[provider_selectors.Shortfall] | None = None, *,
                       ending: bool = False) -> str:
    """The command line that finishes a job that ended without all its answers ('' for any other job): resume,
    re-attempting and raising the budget by the largest shortfall of its ledgers where needed. ``ending``: the
    execution is about to end the job without them (it writes the command into the job's error)."""
    kind = job_kind(job)
    if not ending and (not job.is_finished or job.status == "done"):
        return ""
    shortfalls = job_shortfalls(job) if shortfalls is None else shortfalls
    if shortfalls and not any(s.reattempts or s.unsent for s in shortfalls):
        return ""
    if not shortfalls and not ending and job.status != job.FAILED:
        return ""
    return f"python manage.py finish_job {kind.name} {job.pk}" + provider_selectors.resume_options(shortfalls)


def job_error_with_finish(job: TrackedJob, message: str) -> str:
    """``message`` (why an execution ends the job short of its answers) followed by the command that finishes it."""
    command = job_finish_command(job, ending=True)
    if not (command and message):
        return message
    return f"{message.rstrip()}{'' if message.rstrip().endswith('.') else '.'}{FINISH_MARK}{command}"


# --------------------------------------------------------------------------- the final state


@dataclass(frozen=True)
class JobState:
    """What a job is, in the same words on every page, in every command and in the API: "queued", "running",
    "done", "incomplete: N unknown, ..., finish with <command>", "failed: <reason>" (or the kind's own
    finished status, "cancelled")."""

    word: str  # queued, running, done, incomplete, failed, or a kind's own (cancelled)
    text: str
    finish_command: str

    @property
    def tone(self) -> str:
        return {"done": "good", "incomplete": "warn", "failed": "bad"}.get(self.word, "")


def job_state_word(job: TrackedJob) -> str:
    """The word of ``job_state`` alone, read from the row (no ledger is read: for lists of jobs)."""
    if job.is_finished and job.status != "done" and (
            (job.error or "").startswith("incomplete:") or job.status == "stopped"):
        return "incomplete"
    return job.status


def job_state(job: TrackedJob) -> JobState:
    """The one derivation of a job's state. Incomplete: the work ended with items that have no answer (the error
    every kind writes then starts "incomplete:"; a rerank run stopped by its budget or a person is one too),
    counted from its ledgers: requests unknown (sent, no answer recorded), failed, and not sent yet."""
    if not job.is_finished:
        return JobState(word=job.status, text=job.status, finish_command="")
    if job.status == "done":
        return JobState(word="done", text="done", finish_command="")
    error = (job.error or "").split(FINISH_MARK)[0].strip()
    shortfalls = job_shortfalls(job)
    command = job_finish_command(job, shortfalls)
    finish = f"finish with {command}" if command else ""
    if job_state_word(job) == "incomplete":
        unknown = sum(s.unknown for s in shortfalls)
        counts = [f"{n} {what}" for n, what in (
            (unknown, "unknown"), (sum(s.reattempts for s in shortfalls) - unknown, "failed"),
            (sum(s.unsent for s in shortfalls), "not sent")) if n]
        return JobState(word="incomplete", text="incomplete: " + ", ".join([*counts, finish] if finish or counts
                                                                           else ["nothing left to send"]),
                        finish_command=command)
    if job.status == job.FAILED:
        reason = error.removeprefix("failed:").strip() or "no reason recorded"
        return JobState(word="failed", text=f"failed: {reason}", finish_command=command)
    return JobState(word=job.status, text=job.status + (f": {finish}" if finish else ""), finish_command=command)


# --------------------------------------------------------------------------- the progress fragment


def job_urls(job: TrackedJob) -> dict[str, str]:
    kind = job_kind(job)
    return {"page_url": reverse(kind.page, args=[job.pk]),
            "resume_url": reverse("jobs:resume", args=[kind.name, job.pk]),
            "progress_url": reverse("jobs:progress", args=[kind.name, job.pk])}


def job_progress_context(job: TrackedJob) -> dict[str, Any]:
    """``{"lifecycle": ...}``: what ``templates/_job_lifecycle.html`` shows of any job: its state, progress, who
    holds it, whether it looks stale, when it last made progress, the command that finishes it, its budget raises
    and its URLs (under one name, so a kind's page keeps its own "job" and "progress")."""
    kind = job_kind(job)
    done, total, unit = kind.progress(job)
    state = job_state(job)
    ledgers = kind.ledgers(job)
    return {"lifecycle": {
        "job": job, "kind": kind, "state": state, "finish_command": state.finish_command,
        "progress": {"done": done, "total": total, "unit": unit,
                     "percent": int(100 * done / total) if total else (100 if job.is_finished else 0)},
        "holder": job_liveness(job) if job.status == job.RUNNING else None, "stale": is_stale(job),
        "last_progress": last_progress(job), "sends_requests": bool(ledgers), "per_ledger": len(ledgers) > 1,
        "budget_raises": provider_selectors.ledger_budget_raises(ledger_ids=list(ledgers)) if ledgers else [],
        "poll_seconds": POLL_SECONDS, "can_resume": job.status in kind.resumable and job.status != "done",
        **job_urls(job),
    }}


def job_api_state(job: TrackedJob) -> dict[str, str]:
    """The fields every kind's API gives of a job's state (the words of its pages)."""
    state = job_state(job)
    return {"state": state.word, "state_text": state.text, "finish_command": state.finish_command}


def command_actor() -> str:
    """Who acts from a shell (a budget raise by a management command): the operating-system user and host."""
    import getpass

    try:
        user = getpass.getuser()
    except Exception:  # no user name in this environment (a container without one)
        user = "unknown user"
    return f"command line: {user}@{socket.gethostname()}"
