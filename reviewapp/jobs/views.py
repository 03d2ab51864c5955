"""The one resume view and the one progress fragment of every job kind (``/jobs/<kind>/<pk>/...``)."""

from __future__ import annotations

from django.contrib import messages
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.views.decorators.http import require_POST

from reviewapp.core.auth.roles import LAUNCH_RUNS, VIEW_REPORTS, perm_required
from reviewapp.core.jobs import JobKind, TrackedJob, job_kind, job_kind_resume
from reviewapp.jobs.controls import ResumeForm, job_budget_raise, job_progress_context

HTMX_STOP_POLLING = 286  # htmx stops polling on this status


def _job(kind_name: str, pk: int) -> tuple[JobKind, TrackedJob]:
    try:
        kind = job_kind(kind_name)
    except LookupError:
        raise Http404(f"no job kind {kind_name!r}") from None
    return kind, get_object_or_404(kind.model, pk=pk)


@perm_required(VIEW_REPORTS)
def job_progress(request: HttpRequest, kind: str, pk: int) -> HttpResponse:
    """The polled fragment; 286 once the job is finished, so htmx stops polling."""
    _, job = _job(kind, pk)
    response = render(request, "_job_lifecycle.html#progress", {**job_progress_context(job), "polled": True})
    if job.is_finished:
        response.status_code = HTMX_STOP_POLLING
    return response


@perm_required(LAUNCH_RUNS)
@require_POST
def job_resume(request: HttpRequest, kind: str, pk: int) -> HttpResponse:
    """Read the resume form, raise the budget if asked (recorded with who and why), resume or take over, and say
    what happened; back to the job's page."""
    job_kind_, job = _job(kind, pk)
    what = job_kind_.describe(job)
    try:
        form = ResumeForm.read(request.POST, raises=job_kind_.raises)
        if form.raise_by:
            job = job_budget_raise(job, user=request.user, **form.raise_by)
            messages.info(request, f"Budget of {what} raised (recorded with who and why in its ledgers).")
        job_kind_resume(job, reattempt=form.reattempt, take_over=form.worker_lost)
    except job_kind_.raises as exc:
        messages.error(request, str(exc))
    else:
        messages.success(request, f"{what.capitalize()} queued again; {job_kind_.skips} are skipped.")
    return redirect(job_kind_.page, pk=job.pk)
