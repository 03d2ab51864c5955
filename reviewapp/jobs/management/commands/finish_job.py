"""Finish (or take over) a job of any kind: the command every job page and error names."""

from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand, CommandError

from reviewapp.core.jobs import job_kind, job_kind_resume, job_kinds, job_liveness, job_task
from reviewapp.jobs.controls import command_actor, job_budget_raise, job_state


class Command(BaseCommand):
    help = ("Resume a job that ended incomplete or failed (answered requests are never re-sent), or take over one "
            "whose worker is gone; optionally re-attempt its failed and unknown requests and raise its budget.")

    def add_arguments(self, parser: Any) -> None:
        parser.add_argument("kind", help="the job's kind: " + ", ".join(k.name for k in job_kinds()))
        parser.add_argument("id", type=int)
        parser.add_argument("--reattempt", action="store_true", help="re-send failed/unknown requests")
        parser.add_argument("--worker-lost", action="store_true",
                            help="the worker is known to be dead: take a running job over now")
        parser.add_argument("--add-requests", type=int, default=0, help="raise the request budget by this many")
        parser.add_argument("--add-input-tokens", type=int, default=0,
                            help="raise the input-token budget by this many")
        parser.add_argument("--reason", default="", help="why the budget is raised (recorded in the ledger)")
        parser.add_argument("--inline", action="store_true", help="execute in this process instead of queueing")

    def handle(self, *args: Any, **o: Any) -> None:
        try:
            kind = job_kind(o["kind"])
        except LookupError as exc:
            raise CommandError(str(exc)) from None
        job = kind.model.objects.filter(pk=o["id"]).first()
        if job is None:
            raise CommandError(f"no {kind.noun} {o['id']}")
        what = kind.describe(job)
        try:
            if o["add_requests"] or o["add_input_tokens"]:
                job = job_budget_raise(job, add_requests=o["add_requests"], add_input_tokens=o["add_input_tokens"],
                                       reason=o["reason"], actor=command_actor())
                self.stdout.write(f"{what}: budget raised (recorded in its ledgers)")
            if job.status == job.RUNNING:
                self.stdout.write(f"{what}: {job_liveness(job).describe()}")
            # A running job is taken over only when its worker is gone (or --worker-lost says so).
            job = job_kind_resume(job, reattempt=o["reattempt"], take_over=True, force=o["worker_lost"],
                                  enqueue=not o["inline"])
        except kind.raises as exc:
            raise CommandError(str(exc)) from exc
        if not o["inline"]:
            self.stdout.write(f"{what} queued again; progress at {_page(job)}")
            return
        job_task(job)(job.pk)
        job.refresh_from_db()
        state = job_state(job)
        self.stdout.write(f"{what}: {state.text}")
        if state.word in ("failed", "incomplete"):
            raise CommandError(f"{what} {state.text}")


def _page(job: Any) -> str:
    from django.urls import reverse

    return reverse(job_kind(job).page, args=[job.pk])
