"""CUAD console pages (thin: parse, call a selector or service, render). Reviewers get 403 everywhere here."""

from __future__ import annotations

import csv
import io
import json
import time
from collections.abc import Iterable, Sequence

from django.contrib import messages
from django.core.exceptions import PermissionDenied
from django.http import Http404, HttpRequest, HttpResponse, JsonResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse
from django.views.decorators.http import require_http_methods, require_POST

from grading import selectors
from grading.dataset.models import Sample
from grading.runs import jobs as console
from grading.runs.models import ConsoleJob, Extraction, ExtractionRun
from grading.runs.run_format import RunFormatError
from grading.scorecard import selectors as cs
from reviewapp.core.access import LAUNCH_RUNS, VIEW_REPORTS, perm_required
from scoring.cuad.grading import Thresholds
from scoring.cuad.matching import MATCHERS

MAX_UPLOAD_BYTES = 20 * 1024 * 1024
PLAYGROUND_EXAMPLE = {
    "a": "The Agreement shall be governed by the laws of the State of New York.",
    "b": "This Agreement shall be governed by and construed in accordance with the laws of the State of New York, "
    "without regard to its conflict of laws principles.",
    "claim": "governed by the laws of the State of Delaware",
    "source": "This Agreement shall be governed by and construed in accordance with the laws of the State of New "
    "York, without regard to its conflict of laws principles.",
}


# ---------------------------------------------------------------------------
# Exports


def _csv_response(name: str, fields: Sequence[str], rows: Iterable[dict]) -> HttpResponse:
    buffer = io.StringIO()
    writer = csv.DictWriter(buffer, fieldnames=list(fields), extrasaction="ignore")
    writer.writeheader()
    for row in rows:
        writer.writerow(row)
    response = HttpResponse(buffer.getvalue(), content_type="text/csv; charset=utf-8")
    response["Content-Disposition"] = f'attachment; filename="{name}.csv"'
    return response


def _json_response(data, *, status: int = 200) -> JsonResponse:
    return JsonResponse(data, status=status, json_dumps_params={"ensure_ascii": False, "indent": 1})


def _export_format(request: HttpRequest) -> str:
    fmt = request.GET.get("format", "")
    if fmt not in ("", "json", "csv"):
        raise Http404(f"unknown export format {fmt!r}")
    return fmt


def _error_response(request: HttpRequest, template: str, errors: list[str], context: dict | None = None):
    fmt = request.GET.get("format", "")
    if fmt in ("json", "csv"):
        return _json_response({"errors": errors}, status=400)
    ctx = {"errors": errors, **(context or {})}
    if request.htmx:
        # htmx swaps 2xx only: the refusal replaces the fragment, so the message shows where the figures were.
        return render(request, f"{template}#errors", ctx)
    return render(request, template, ctx, status=400)


def _launch_required(request: HttpRequest) -> None:
    if not request.user.has_perm(LAUNCH_RUNS):
        raise PermissionDenied


# ---------------------------------------------------------------------------
# Landing


@perm_required(VIEW_REPORTS)
def home(request: HttpRequest) -> HttpResponse:
    sample = cs.sample_default()
    summaries = cs.runs_list(sample=sample)
    data = {
        "sample": None if sample is None else {"id": sample.pk, "n": sample.n, "seed": sample.seed},
        "runs": [
            {"id": s.run.pk, "model": s.run.model, "extractions": s.run.n_extractions, "headline": s.headline}
            for s in summaries
        ],
    }
    fmt = _export_format(request)
    if fmt == "json":
        return _json_response(data)
    if fmt == "csv":
        return _csv_response(
            "cuad-overview",
            ["id", "model", "extractions", "precision", "recall", "f1"],
            [
                {"id": r["id"], "model": r["model"], "extractions": r["extractions"], **(r["headline"] or {})}
                for r in data["runs"]
            ],
        )
    return render(
        request,
        "cuad/home.html",
        {"sample": sample, "summaries": summaries, "jobs": cs.jobs_list(limit=5), "tab": "home"},
    )


# ---------------------------------------------------------------------------
# Dataset


@perm_required(VIEW_REPORTS)
def dataset(request: HttpRequest) -> HttpResponse:
    fmt = _export_format(request)
    if request.GET.get("sample"):
        try:
            sample = Sample.objects.select_related("dataset").get(pk=int(request.GET["sample"]))
        except (ValueError, Sample.DoesNotExist):
            return _error_response(request, "cuad/dataset.html", [f"sample: no sample {request.GET['sample']!r}"])
    else:
        sample = cs.sample_default()
    if sample is None:
        return _error_response(
            request, "cuad/dataset.html", ["no CUAD sample exists yet (load_cuad then sample_cuad, or make demo)"]
        )
    overview = cs.dataset_overview(sample=sample)
    if fmt == "json":
        return _json_response(
            {
                "dataset": {
                    "source": overview.dataset.source_name,
                    "sha256": overview.dataset.sha256,
                    "version": overview.dataset.version,
                    "contracts": overview.dataset.n_contracts,
                    "spans": overview.dataset.n_spans,
                },
                "sample": {"id": sample.pk, "manifest_sha256": sample.manifest_sha256, "spans": overview.n_spans},
                "manifest": overview.manifest,
                "length_histogram": {
                    "edges": overview.histogram.edges,
                    "sample": overview.histogram.sample,
                    "population": overview.histogram.population,
                },
            }
        )
    if fmt == "csv":
        return _csv_response(
            f"cuad-sample-{sample.pk}-types",
            ["type", "sampled_contracts", "target", "available_contracts", "met"],
            [
                {
                    "type": t.name,
                    "sampled_contracts": t.sampled,
                    "target": t.target,
                    "available_contracts": t.available,
                    "met": int(t.met),
                }
                for t in overview.types
            ],
        )
    return render(
        request,
        "cuad/dataset.html",
        {
            "o": overview,
            "chart": cs.histogram_svg_bars(overview.histogram),
            "samples": Sample.objects.filter(dataset=sample.dataset_id),
            "tab": "dataset",
        },
    )


# ---------------------------------------------------------------------------
# Runs: list, paste/upload, launch, detail, jobs


def _runs_context(request: HttpRequest, **extra) -> dict:
    sample = cs.sample_default()
    return {
        "sample": sample,
        "summaries": cs.runs_list(sample=sample),
        "jobs": cs.jobs_list(),
        "providers": console.PROVIDERS,
        "tab": "runs",
        **extra,
    }


@perm_required(VIEW_REPORTS)
@require_http_methods(["GET", "POST"])
def runs(request: HttpRequest) -> HttpResponse:
    if request.method == "POST":
        return _paste(request)
    fmt = _export_format(request)
    if fmt:
        sample = cs.sample_default()
        rows = [
            {
                "id": s.run.pk,
                "model": s.run.model,
                "source_name": s.run.source_name,
                "source_format": s.run.source_format,
                "extractions": s.run.n_extractions,
                "in_sample": s.in_sample,
                "content_sha256": s.run.content_sha256,
                "created_at": s.run.created_at.isoformat(),
                **(s.headline or {}),
            }
            for s in cs.runs_list(sample=sample)
        ]
        if fmt == "json":
            return _json_response(
                {"sample": sample.pk if sample else None, "thresholds": Thresholds().as_dict(), "runs": rows}
            )
        return _csv_response(
            "cuad-runs",
            [
                "id",
                "model",
                "source_name",
                "source_format",
                "extractions",
                "in_sample",
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
    _launch_required(request)
    dataset = selectors.dataset_current()
    raw: str | bytes = request.POST.get("run_text", "")
    source_name = "pasted"
    upload = request.FILES.get("run_file")
    if upload is not None:
        if upload.size > MAX_UPLOAD_BYTES:
            return render(
                request,
                "cuad/runs.html",
                _runs_context(
                    request, paste_errors=[f"file: {upload.size} bytes is over the {MAX_UPLOAD_BYTES} byte limit"]
                ),
                status=400,
            )
        raw, source_name = upload.read(), upload.name
    if dataset is None:
        errors = ["no CUAD dataset is loaded (run load_cuad first)"]
    else:
        try:
            result = console.run_paste(dataset=dataset, raw=raw, source_name=source_name, user=request.user)
        except RunFormatError as exc:
            errors = exc.errors
        else:
            if result.job is not None:
                messages.success(
                    request, f"Run validated ({len(result.parsed.extractions)} extractions); grading on a worker."
                )
                return redirect("cuad:job", pk=result.job.pk)
            verb = "graded" if result.created else "already stored (same content); showing it"
            messages.success(request, f"Run {result.run.pk} ({result.run.model}) {verb}.")
            return redirect("cuad:run", pk=result.run.pk)
    keep = raw if isinstance(raw, str) else ""
    return render(request, "cuad/runs.html", _runs_context(request, paste_errors=errors, run_text=keep), status=400)


@perm_required(LAUNCH_RUNS)
@require_POST
def launch(request: HttpRequest) -> HttpResponse:
    sample = cs.sample_default()
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
    if not errors:
        try:
            job = console.extraction_job_create(
                sample=sample,
                provider=request.POST.get("provider", "local"),
                model_id=request.POST.get("model_id", ""),
                limit=limit,
                user=request.user,
            )
        except console.JobError as exc:
            errors.append(str(exc))
        else:
            messages.success(request, f"Extraction job {job.pk} queued ({job.total} contracts).")
            return redirect("cuad:job", pk=job.pk)
    return render(request, "cuad/runs.html", _runs_context(request, launch_errors=errors), status=400)


@perm_required(VIEW_REPORTS)
def run_detail(request: HttpRequest, pk: int) -> HttpResponse:
    run = get_object_or_404(ExtractionRun, pk=pk)
    fmt = _export_format(request)
    if fmt == "json":
        # The run in the grader's own format: pasting it back reproduces the same run (same content hash).
        extractions = [
            {"contract": title, "category": category, "text": text}
            for title, category, text in run.extractions.order_by("position").values_list(
                "contract__title", "category__name", "text"
            )
        ]
        return _json_response({"model": run.model, "extractions": extractions})
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
        return _csv_response(f"cuad-run-{run.pk}-pair-scores", fields, rows)
    sample = cs.sample_default(dataset=run.dataset)
    card = cs.run_card(run=run, sample=sample, thresholds=Thresholds(), matcher="hungarian") if sample else None
    job = ConsoleJob.objects.filter(run=run).order_by("created_at").first()
    return render(
        request, "cuad/run_detail.html", {"run": run, "card": card, "job": job, "sample": sample, "tab": "runs"}
    )


@perm_required(VIEW_REPORTS)
def job_detail(request: HttpRequest, pk: int) -> HttpResponse:
    job = get_object_or_404(ConsoleJob.objects.select_related("run", "sample"), pk=pk)
    fmt = _export_format(request)
    members = list(job.contracts.select_related("contract").order_by("position")) if job.kind == "extract" else []
    if fmt == "json":
        return _json_response(_job_json(job))
    if fmt == "csv":
        return _csv_response(
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
        "stale": console.is_stale(job),
        "last_progress": console.last_progress(job),
        "tab": "runs",
    }
    return render(request, "cuad/job.html", context)


def _job_json(job: ConsoleJob) -> dict:
    return {
        "id": job.pk,
        "kind": job.kind,
        "status": job.status,
        "provider": job.provider,
        "model": job.model_id,
        "params": job.params,
        "total": job.total,
        "done": job.done,
        "stage": job.stage,
        "error": job.error,
        "run": job.run_id,
        "ledger": job.ledger_id,
        "sample": job.sample_id,
        "created_at": job.created_at.isoformat(),
        "finished_at": job.finished_at.isoformat() if job.finished_at else None,
    }


@perm_required(VIEW_REPORTS)
def job_progress(request: HttpRequest, pk: int) -> HttpResponse:
    """The polled fragment; answers 286 once the job is finished so htmx stops polling."""
    job = get_object_or_404(ConsoleJob.objects.select_related("run"), pk=pk)
    response = render(request, "cuad/job.html#progress", {"job": job})
    if job.finished:
        response.status_code = 286
    return response


@perm_required(LAUNCH_RUNS)
@require_POST
def job_resume(request: HttpRequest, pk: int) -> HttpResponse:
    job = get_object_or_404(ConsoleJob, pk=pk)
    # worker_lost=1 comes from the "worker seems to have stopped" action: honoured only for a stale running job.
    worker_lost = request.POST.get("worker_lost") == "1"
    try:
        console.job_resume(
            job=job, reattempt=request.POST.get("reattempt") == "1", worker_lost=worker_lost, only_if_stale=worker_lost
        )
    except console.JobError as exc:
        messages.error(request, str(exc))
    else:
        messages.success(request, f"Job {job.pk} queued again; done contracts are skipped.")
    return redirect("cuad:job", pk=job.pk)


# ---------------------------------------------------------------------------
# Scorecard (live regrade)


@perm_required(VIEW_REPORTS)
def scorecard(request: HttpRequest) -> HttpResponse:
    fmt = _export_format(request)
    started = time.perf_counter()
    try:
        view = cs.parse_view(request.GET)
    except cs.ParameterError as exc:
        if exc.errors == [cs.NO_RUN_YET] and not request.GET.get("format"):
            # Not a bad request: there is simply nothing to grade yet.
            return render(request, "cuad/scorecard.html", {"errors": exc.errors, **_controls_context(request)})
        return _error_response(request, "cuad/scorecard.html", exc.errors, _controls_context(request))
    card, comparison = cs.scorecard_view(view=view)
    rows = cs.sorted_rows(card.card.rows, key=view.sort, descending=view.descending)
    server_ms = (time.perf_counter() - started) * 1000
    if fmt == "json":
        data = cs.scorecard_json(card, view.sample)
        if comparison:
            data["comparison"] = [cs.scorecard_json(c, view.sample) for c in comparison.cards]
        return _json_response(data)
    if fmt == "csv":
        return _csv_response(
            f"cuad-scorecard-run-{card.run.pk}", cs.SCORECARD_CSV_FIELDS, cs.scorecard_csv_rows(card, rows)
        )
    context = {
        "view": view,
        "card": card,
        "rows": rows,
        "comparison": comparison,
        "server_ms": server_ms,
        "population": cs.population(sample=view.sample, n_contracts=card.card.n_contracts),
        "columns": cs.SORT_KEYS,
        "sort_links": {
            col: view.query(
                sort=col,
                dir=("asc" if view.descending else "desc")
                if col == view.sort
                else ("asc" if col == "category" else "desc"),
            )
            for col in cs.SORT_KEYS
        },
        "explorer_links": {
            row.category: view.query(type=row.category, contract="", runs=[view.run.pk], sort="", dir="")
            for row in rows
        },
    }
    if not request.htmx:  # the controls are not part of the swapped fragment
        context.update(_controls_context(request, view))
    template = "cuad/scorecard.html#card" if request.htmx else "cuad/scorecard.html"
    response = render(request, template, context)
    response["Server-Timing"] = f"regrade;dur={server_ms:.1f}"
    return response


def _controls_context(request: HttpRequest, view: cs.View | None = None) -> dict:
    sample = view.sample if view else cs.sample_default()
    run_choices = list(ExtractionRun.objects.filter(dataset=sample.dataset_id)) if sample else []
    g = request.GET
    return {
        "run_choices": run_choices,
        "matchers": MATCHERS,
        "selected_runs": [r.pk for r in view.runs] if view
        else [int(x) for x in g.getlist("run") if x.isdecimal() and len(x) <= 18],
        "form": {
            "correct": g.get("correct", "0.7"),
            "partial": g.get("partial", "0.4"),
            "grounding": g.get("grounding", "0.8"),
            "matcher": g.get("matcher", "hungarian"),
            "sort": g.get("sort", "category"),
            "dir": g.get("dir", "asc"),
        },
        "sample": sample,
        "tab": "scorecard",
    }


# ---------------------------------------------------------------------------
# Explorer


@perm_required(VIEW_REPORTS)
def explorer(request: HttpRequest) -> HttpResponse:
    fmt = _export_format(request)
    try:
        view = cs.parse_view(request.GET)
    except cs.ParameterError as exc:
        return _error_response(request, "cuad/explorer.html", exc.errors, {"tab": "explorer"})
    ex = cs.explorer_view(view=view)
    if fmt == "json":
        return _json_response(cs.explorer_json(ex))
    if fmt == "csv":
        data = cs.explorer_json(ex)
        rows = [
            {
                "kind": "extraction",
                "id": e["id"],
                "category": e["category"],
                "outcome": e["outcome"],
                "f1": f"{e['f1']:.6f}",
                "grounding": f"{e['grounding']:.6f}",
                "matched": e["matched_span"] or "",
                "start": (e["located"] or {}).get("start", ""),
                "end": (e["located"] or {}).get("end", ""),
                "text": e["text"],
            }
            for e in data["extractions"]
        ] + [
            {
                "kind": "cuad_span",
                "id": s["id"],
                "category": s["category"],
                "outcome": s["outcome"],
                "matched": s["matched_extraction"] or "",
                "start": s["located"]["start"],
                "end": s["located"]["end"],
                "text": s["text"],
            }
            for s in data["spans"]
        ]
        return _csv_response(
            f"cuad-explorer-run-{view.run.pk}",
            ["kind", "id", "category", "outcome", "f1", "grounding", "matched", "start", "end", "text"],
            rows,
        )
    context = {
        "ex": ex,
        "view": view,
        "run_choices": ExtractionRun.objects.filter(dataset=view.sample.dataset_id),
        "matchers": MATCHERS,
        "tab": "explorer",
        "contract_text": ex.contract_text,
        "scorecard_url": reverse("cuad:scorecard") + "?" + view.query(contract="", runs=[r.pk for r in view.runs]),
    }
    return render(request, "cuad/explorer.html", context)


# ---------------------------------------------------------------------------
# Playground (the grader's own two primitives)


@perm_required(VIEW_REPORTS)
def playground(request: HttpRequest) -> HttpResponse:
    values = {k: request.GET.get(k, v) for k, v in PLAYGROUND_EXAMPLE.items()}
    overlap = cs.playground_overlap(a=values["a"], b=values["b"])
    ground = cs.playground_grounding(claim=values["claim"], source=values["source"])
    fmt = _export_format(request)
    data = {
        "overlap": {
            "a": values["a"],
            "b": values["b"],
            "f1": overlap.f1,
            "precision": overlap.precision,
            "recall": overlap.recall,
            "shared_tokens": overlap.shared,
            "a_tokens": overlap.a_tokens,
            "b_tokens": overlap.b_tokens,
        },
        "grounding": {
            "claim": values["claim"],
            "source": values["source"],
            "grounding": ground.grounding,
            "n": ground.n,
            "found": ground.found,
            "total": ground.total,
            "verbatim": ground.verbatim,
        },
    }
    if fmt == "json":
        return _json_response(data)
    if fmt == "csv":
        return _csv_response(
            "cuad-playground",
            ["axis", "value", "detail"],
            [
                {
                    "axis": "token_f1",
                    "value": f"{overlap.f1:.6f}",
                    "detail": f"shared {overlap.shared} of {overlap.a_tokens} / {overlap.b_tokens} tokens",
                },
                {
                    "axis": "grounding",
                    "value": f"{ground.grounding:.6f}",
                    "detail": f"{ground.found} of {ground.total} distinct {ground.n}-grams found",
                },
            ],
        )
    part = request.GET.get("part")
    ctx = {"values": values, "overlap": overlap, "ground": ground, "tab": "playground"}
    if request.htmx and part in ("overlap", "grounding"):
        return render(request, f"cuad/playground.html#{part}", ctx)
    return render(request, "cuad/playground.html", ctx)


def dumps(value) -> str:
    return json.dumps(value, ensure_ascii=False)
