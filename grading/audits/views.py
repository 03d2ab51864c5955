"""CUAD label audit pages under /cuad/audits/ (thin: parse, call the audit's services and selectors, render).

Reading needs view_reports (stakeholders, admins); launching and resuming need
launch_runs; sending candidates to the blinded review needs manage_reviews.
Reviewers get 403 everywhere here.
"""

from __future__ import annotations

from django.contrib import messages
from django.core.exceptions import PermissionDenied
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.views.decorators.http import require_http_methods, require_POST

from grading.audits.exports import CSV_FIELDS, audit_csv_rows, audit_json
from grading.audits.judging.judges import DESCRIPTION, EXEMPLARS_METHOD, LLM, JudgeChoiceError, parse_choice
from grading.audits.models import Audit
from grading.audits.review import audit_review_send
from grading.audits.selectors import CandidateRow, audit_list, audit_report
from grading.audits.services import AuditError, audit_create
from grading.responses import csv_response, export_format, json_response
from grading.runs.models import ConsoleJob, ExtractionRun
from reviewapp.core.auth.roles import LAUNCH_RUNS, MANAGE_REVIEWS, VIEW_REPORTS, perm_required
from reviewapp.jobs.controls import job_progress_context
from reviewapp.providers.clients.base import echoable_base_url
from reviewapp.review.assignment.selectors import reviewer_candidates
from scoring.cuad.grading import Thresholds

FILTERS = {
    "all": "all candidates",
    "both": "both judges yes",
    "disagree": "judges disagree",
    "neither": "both judges no",
    "human": "with a human verdict",
}
PAGE_ROWS = 200
LIST_FIELDS = ("id", "run", "model", "status", "candidates", "grounding", "judge_a", "judge_b", "created_at")


def _list_rows(audits: list[Audit]) -> list[dict]:
    rows = []
    for a in audits:
        judges = a.params.get("judges", {})
        rows.append(
            {
                "id": a.pk,
                "run": a.run_id,
                "model": a.run.model if a.run is not None else "",
                "status": a.status,
                "candidates": a.n_candidates,
                "grounding": a.grounding,
                "judge_a": _judge_text(judges.get("a")),
                "judge_b": _judge_text(judges.get("b")),
                "created_at": a.created_at.isoformat(),
            }
        )
    return rows


def _judge_text(spec: dict | None) -> str:
    if not spec:
        return ""
    if spec["method"] == LLM:
        return f"{spec['provider']}:{spec['model_id']}"
    return f"{spec['method']} (heuristic)"


def _launch_context(request: HttpRequest, **extra) -> dict:
    return {
        "audits": audit_list(),
        "runs": ExtractionRun.objects.order_by("-created_at", "-id")[:50],
        "judge_presets": [DESCRIPTION, EXEMPLARS_METHOD],
        "form": {
            "judge_a": request.POST.get("judge_a", DESCRIPTION),
            "judge_b": request.POST.get("judge_b", EXEMPLARS_METHOD),
            # Shown again after an error, unless it carries credentials (refused, and never echoed).
            "base_url_a": echoable_base_url(request.POST.get("base_url_a", "")),
            "base_url_b": echoable_base_url(request.POST.get("base_url_b", "")),
            "grounding": request.POST.get("grounding", str(Thresholds().grounding)),
            "run": request.POST.get("run", request.GET.get("run", "")),
        },
        "tab": "audit",
        **extra,
    }


@perm_required(VIEW_REPORTS)
@require_http_methods(["GET", "POST"])
def audits(request: HttpRequest, fmt: str = "") -> HttpResponse:
    if request.method == "POST":
        return _launch(request)
    fmt = export_format(fmt)
    if fmt:
        rows = _list_rows(audit_list())
        if fmt == "json":
            return json_response({"audits": rows})
        return csv_response("cuad-audits", LIST_FIELDS, rows)
    return render(request, "cuad/audits.html", _launch_context(request))


def _launch(request: HttpRequest) -> HttpResponse:
    if not request.user.has_perm(LAUNCH_RUNS):
        raise PermissionDenied
    errors: list[str] = []
    run = None
    try:
        run = ExtractionRun.objects.get(pk=int(request.POST.get("run", "")))
    except (ValueError, ExtractionRun.DoesNotExist):
        errors.append(f"run: no run {request.POST.get('run', '')!r}")
    choices = {}
    for slot in ("a", "b"):
        try:
            choices[slot] = parse_choice(request.POST.get(f"judge_{slot}", ""),
                                         base_url=request.POST.get(f"base_url_{slot}", "")[:500])
        except JudgeChoiceError as exc:
            errors.append(f"judge {slot.upper()}: {exc}")
    thresholds = None
    try:
        thresholds = Thresholds(grounding=float(request.POST.get("grounding", Thresholds().grounding)))
    except ValueError as exc:
        errors.append(f"grounding: {exc}")
    if not errors:
        try:
            audit, created = audit_create(
                run=run, thresholds=thresholds, judge_a=choices["a"], judge_b=choices["b"], user=request.user
            )
        except AuditError as exc:
            errors.append(str(exc))
        else:
            if created:
                messages.success(request, f"Audit {audit.pk} queued ({audit.n_candidates} candidates).")
            else:
                messages.info(request, f"The same audit exists already (#{audit.pk}); nothing new is asked.")
            return redirect("cuad:audit", pk=audit.pk)
    return render(request, "cuad/audits.html", _launch_context(request, errors=errors), status=400)


def _filtered(rows: list[CandidateRow], name: str) -> list[CandidateRow]:
    def verdicts(r):
        return [v.verdict if v is not None else None for v in r.verdicts.values()]

    if name == "both":
        return [r for r in rows if r.both_yes]
    if name == "disagree":
        return [r for r in rows if None not in verdicts(r) and len(set(verdicts(r))) > 1]
    if name == "neither":
        return [r for r in rows if verdicts(r) and all(v is False for v in verdicts(r))]
    if name == "human":
        return [r for r in rows if r.human is not None and r.human.completed]
    return rows


@perm_required(VIEW_REPORTS)
def audit_detail(request: HttpRequest, pk: int, fmt: str = "") -> HttpResponse:
    audit = get_object_or_404(Audit.objects.select_related("run", "sample", "job"), pk=pk)
    fmt = export_format(fmt)
    report = audit_report(audit=audit, with_impact=fmt != "csv")
    if fmt == "json":
        return json_response(audit_json(report))
    if fmt == "csv":
        return csv_response(f"cuad-audit-{audit.pk}-candidates", CSV_FIELDS, audit_csv_rows(report))
    show = request.GET.get("show", "all")
    if show not in FILTERS:
        raise Http404(f"unknown filter {show!r}")
    shown = _filtered(report.rows, show)
    context = {
        "audit": audit,
        "r": report,
        "shown": shown[:PAGE_ROWS],
        "n_shown": len(shown),
        "page_rows": PAGE_ROWS,
        "show": show,
        "filters": FILTERS,
        "progress": {
            "ruled": report.ruled,
            "done": report.done_rulings,
            "total": report.total_rulings,
            "percent": report.percent,
        },
        "job": ConsoleJob.objects.filter(run=audit.run_id).order_by("created_at").first() if audit.run_id else None,
        **job_progress_context(audit),
        "tab": "audit",
    }
    return render(request, "cuad/audit.html", context)


@perm_required(MANAGE_REVIEWS)
@require_POST
def audit_review(request: HttpRequest, pk: int) -> HttpResponse:
    """Declare the blinded review pool of the candidates (once) and assign it to every reviewer."""
    audit = get_object_or_404(Audit, pk=pk)
    try:
        pool, created = audit_review_send(audit=audit, user=request.user, reviewers=reviewer_candidates())
    except AuditError as exc:
        messages.error(request, str(exc))
    else:
        verb = "declared and assigned" if created else "already declared; assignments completed"
        messages.success(request, f"Review pool {verb} ({audit.n_candidates} items, blind).")
        return redirect("review:pool", pool_id=pool.public_id)
    return redirect("cuad:audit", pk=audit.pk)
