"""Runs pages: list, paste/upload, launch an extraction job, a run's detail, job pages (reviewers get 403)."""

from __future__ import annotations

from django.contrib import messages
from django.core.exceptions import PermissionDenied
from django.http import HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.views.decorators.http import require_http_methods, require_POST

from grading.dataset.models import Contract, Sample
from grading.dataset.selectors import datasets_list, sample_default
from grading.responses import csv_response, dataset_or_404, export_format, json_response
from grading.runs import jobs
from grading.runs.models import ConsoleJob, Extraction, ExtractionRun
from grading.runs.run_format import RunFormatError
from grading.runs.selectors import jobs_list, run_scope, run_scope_ids, runs_list
from grading.scorecard.selectors import run_card
from reviewapp.core.auth.roles import LAUNCH_RUNS, VIEW_REPORTS, perm_required
from reviewapp.jobs.controls import job_api_state, job_progress_context
from scoring.cuad.grading import Thresholds

MAX_UPLOAD_BYTES = 20 * 1024 * 1024


def _runs_context(request: HttpRequest, **extra) -> dict:
    dataset = dataset_or_404(request.GET)
    sample = sample_default(dataset=dataset) if dataset else None
    return {
        "dataset": dataset,
        "datasets": datasets_list(),
        "sample": sample,
        "summaries": runs_list(sample=sample),
        "jobs": jobs_list(),
        "providers": jobs.PROVIDERS,
        "tab": "runs",
        **extra,
    }


@perm_required(VIEW_REPORTS)
@require_http_methods(["GET", "POST"])
def runs(request: HttpRequest, fmt: str = "") -> HttpResponse:
    if request.method == "POST":
        return _paste(request)
    fmt = export_format(fmt)
    if fmt:
        dataset = dataset_or_404(request.GET)
        sample = sample_default(dataset=dataset) if dataset else None
        rows = [
            {
                "id": s.run.pk,
                "model": s.run.model,
                "source_name": s.run.source_name,
                "source_format": s.run.source_format,
                "extractions": s.run.n_extractions,
                "in_sample": s.in_sample,
                "scope_contracts": s.scope.n,
                "scope_declared": int(s.scope.declared),
                "content_sha256": s.run.content_sha256,
                "created_at": s.run.created_at.isoformat(),
                **(s.headline or {}),
            }
            for s in runs_list(sample=sample)
        ]
        if fmt == "json":
            return json_response(
                {"sample": sample.pk if sample else None, "thresholds": Thresholds().as_dict(), "runs": rows}
            )
        return csv_response(
            "cuad-runs",
            [
                "id",
                "model",
                "source_name",
                "source_format",
                "extractions",
                "in_sample",
                "scope_contracts",
                "scope_declared",
                "content_sha256",
                "created_at",
                "precision",
                "recall",
                "f1",
            ],
            rows,
        )
    return render(request, "cuad/runs.html", _runs_context(request))


def _paste(request: HttpRequest) -> HttpResponse:
    if not request.user.has_perm(LAUNCH_RUNS):  # the page is open to readers; pasting a run is not
        raise PermissionDenied
    # The dataset the run is graded against: the form's (a firm's gold set, chosen on the page), else CUAD's.
    dataset = dataset_or_404({"dataset": request.POST.get("dataset") or request.GET.get("dataset", "")})
    raw: str | bytes = request.POST.get("run_text", "")
    source_name = "pasted"
    upload = request.FILES.get("run_file")
    if upload is not None:
        if (upload.size or 0) > MAX_UPLOAD_BYTES:
            return render(
                request,
                "cuad/runs.html",
                _runs_context(
                    request, paste_errors=[f"file: {upload.size} bytes is over the {MAX_UPLOAD_BYTES} byte limit"]
                ),
                status=400,
            )
        raw, source_name = upload.read(), upload.name or ""
    if dataset is None:
        errors = ["no CUAD dataset is loaded (run load_cuad first)"]
    else:
        try:
            result = jobs.run_paste(dataset=dataset, raw=raw, source_name=source_name, user=request.user)
        except RunFormatError as exc:
            errors = exc.errors
        else:
            if result.job is not None:
                messages.success(
                    request, f"Run validated ({len(result.parsed.extractions)} extractions); grading on a worker."
                )
                return redirect("cuad:job", pk=result.job.pk)
            assert result.run is not None  # no job: graded inline
            verb = "graded" if result.created else "already stored (same content); showing it"
            messages.success(request, f"Run {result.run.pk} ({result.run.model}) {verb}.")
            return redirect("cuad:run", pk=result.run.pk)
    keep = raw if isinstance(raw, str) else ""
    return render(request, "cuad/runs.html", _runs_context(request, paste_errors=errors, run_text=keep), status=400)


@perm_required(LAUNCH_RUNS)
@require_POST
def launch(request: HttpRequest) -> HttpResponse:
    dataset = dataset_or_404({"dataset": request.POST.get("dataset", "")})
    sample = sample_default(dataset=dataset) if dataset else None
    if request.POST.get("sample"):
        raw_sample = request.POST["sample"]
        # A non-number (or a number no database column holds) is an unknown sample, not a crash.
        ok = raw_sample.isdecimal() and len(raw_sample) <= 18
        sample = Sample.objects.filter(pk=int(raw_sample)).first() if ok else None
    errors = []
    limit = None
    if request.POST.get("limit"):
        try:
            limit = int(request.POST["limit"])
        except ValueError:
            errors.append(f"limit: {request.POST['limit']!r} is not a whole number")
    if sample is None:
        errors.append("sample: no sample to run on")
    if not errors and sample is not None:
        try:
            job = jobs.extraction_job_create(
                sample=sample,
                provider=request.POST.get("provider", "local"),
                model_id=request.POST.get("model_id", ""),
                base_url=request.POST.get("base_url", "").strip()[:500],
                limit=limit,
                user=request.user,
            )
        except jobs.JobError as exc:
            errors.append(str(exc))
        else:
            messages.success(request, f"Extraction job {job.pk} queued ({job.total} contracts).")
            return redirect("cuad:job", pk=job.pk)
    return render(request, "cuad/runs.html", _runs_context(request, launch_errors=errors), status=400)


@perm_required(VIEW_REPORTS)
def run_detail(request: HttpRequest, pk: int, fmt: str = "") -> HttpResponse:
    run = get_object_or_404(ExtractionRun, pk=pk)
    fmt = export_format(fmt)
    if fmt == "json":
        # The run in the grader's own format: pasting it back reproduces the same run (same content hash).
        extractions = [
            {"contract": title, "category": category, "text": text}
            for title, category, text in run.extractions.order_by("position").values_list(
                "contract__title", "category__name", "text"
            )
        ]
        doc: dict = {"model": run.model}
        declared = run_scope_ids(run=run)
        if declared is not None:
            doc["contracts"] = sorted(Contract.objects.filter(pk__in=declared).values_list("title", flat=True))
        return json_response({**doc, "extractions": extractions})
    if fmt == "csv":
        fields = [
            "position",
            "contract",
            "category",
            "text",
            "grounding",
            "hungarian_f1",
            "hungarian_span",
            "greedy_f1",
            "greedy_span",
            "best_f1",
        ]
        rows = (
            {
                "position": e["position"],
                "contract": e["contract__title"],
                "category": e["category__name"],
                "text": e["text"],
                "grounding": f"{e['grounding']:.6f}",
                "hungarian_f1": f"{e['hungarian_f1']:.6f}",
                "hungarian_span": e["hungarian_span__qa_id"]
                and f"{e['hungarian_span__qa_id']}#{e['hungarian_span__answer_index']}",
                "greedy_f1": f"{e['greedy_f1']:.6f}",
                "greedy_span": e["greedy_span__qa_id"]
                and f"{e['greedy_span__qa_id']}#{e['greedy_span__answer_index']}",
                "best_f1": f"{e['best_f1']:.6f}",
            }
            for e in Extraction.objects.filter(run=run)
            .order_by("position")
            .values(
                "position",
                "contract__title",
                "category__name",
                "text",
                "grounding",
                "hungarian_f1",
                "hungarian_span__qa_id",
                "hungarian_span__answer_index",
                "greedy_f1",
                "greedy_span__qa_id",
                "greedy_span__answer_index",
                "best_f1",
            )
        )
        return csv_response(f"cuad-run-{run.pk}-pair-scores", fields, rows)
    sample = sample_default(dataset=run.dataset)
    scope = run_scope(run=run, sample=sample) if sample else None
    card = (
        run_card(run=run, sample=sample, thresholds=Thresholds(), matcher="hungarian")
        if sample is not None and scope and scope.n else None
    )
    job = ConsoleJob.objects.filter(run=run).order_by("created_at").first()
    context = {"run": run, "card": card, "scope": scope, "job": job, "sample": sample, "tab": "runs"}
    return render(request, "cuad/run_detail.html", context)


@perm_required(VIEW_REPORTS)
def job_detail(request: HttpRequest, pk: int, fmt: str = "") -> HttpResponse:
    job = get_object_or_404(ConsoleJob.objects.select_related("run", "sample"), pk=pk)
    fmt = export_format(fmt)
    members = list(job.contracts.select_related("contract").order_by("position")) if job.kind == "extract" else []
    if fmt == "json":
        return json_response(_job_json(job))
    if fmt == "csv":
        return csv_response(
            f"cuad-job-{job.pk}",
            ["position", "contract", "done", "extractions", "passages", "embedded", "seconds", "error"],
            [
                {
                    "position": m.position,
                    "contract": m.contract.title,
                    "done": int(m.done),
                    "extractions": len(m.extractions),
                    "passages": m.passages,
                    "embedded": m.embedded,
                    "seconds": f"{m.seconds:.3f}",
                    "error": m.error,
                }
                for m in members
            ],
        )
    context = {
        "job": job,
        "members": members,
        "params": job_params_rows(job.params),
        **job_progress_context(job),
        "tab": "runs",
    }
    return render(request, "cuad/job.html", context)


def job_params_rows(params: dict | None) -> list[tuple[str, str]]:
    """A job's parameters as (name, readable value) rows for a definition list, not a raw Python dict."""
    rows = []
    for key, value in (params or {}).items():
        if isinstance(value, list | tuple):
            value = ", ".join(str(v) for v in value)
        elif isinstance(value, dict):
            value = ", ".join(f"{k}: {v}" for k, v in value.items())
        elif isinstance(value, bool):
            value = "yes" if value else "no"
        rows.append((key.replace("_", " "), "" if value is None else str(value)))
    return rows


def _job_json(job: ConsoleJob) -> dict:
    return {
        "id": job.pk,
        "kind": job.kind,
        "status": job.status,
        "state": job_api_state(job),
        "provider": job.provider,
        "model": job.model_id,
        "params": job.params,
        "total": job.total,
        "done": job.done,
        "stage": job.stage,
        "error": job.error,
        "run": job.run_id,
        "ledger": job.ledger_id,
        "base_url": job.provider_setup.get("base_url", ""),
        "simulated": job.simulated,
        "sample": job.sample_id,
        "created_at": job.created_at.isoformat(),
        "finished_at": job.finished_at.isoformat() if job.finished_at else None,
    }


