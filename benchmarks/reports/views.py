"""Benchmark report pages and exports (stakeholders and admins; reviewers never). Thin: the report module computes."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from django.http import Http404, HttpRequest, HttpResponse, JsonResponse
from django.shortcuts import get_object_or_404, render
from django.utils.text import slugify

from benchmarks.reports import report as reports
from benchmarks.reports import svg
from benchmarks.retrieval.models import RetrievalRun, RunStatus
from reviewapp.core.access import VIEW_REPORTS, perm_required

EXPORTS = {
    "report.json": "application/json",
    "queries.csv": "text/csv; charset=utf-8",
    "keyword.run": "text/plain; charset=utf-8",
    "reranked.run": "text/plain; charset=utf-8",
    "secondary.run": "text/plain; charset=utf-8",
    "qrels.txt": "text/plain; charset=utf-8",
    "families.txt": "text/plain; charset=utf-8",
}


@dataclass(frozen=True)
class ReportRequest:
    run: RetrievalRun
    rerank: reports.RerankScores | None
    secondary: RetrievalRun | None
    replicates: int
    seed: int
    query_string: str


def report_request_parse(*, source: str, pk: int, params: Mapping[str, str]) -> ReportRequest:
    """Resolve (suite, retrieval run, rerank run) and the bootstrap settings from a URL; 404 for unknown runs.

    ReportParameterError (shown to the user) for absurd replicates/seed or an unusable secondary run.
    """
    if source == "rerank":
        scores, run = reports.rerank_scores_load(pk=pk)
    elif source == "retrieval":
        run = get_object_or_404(RetrievalRun.objects.select_related("suite"), pk=pk)
        scores = None
    else:  # pragma: no cover - the URLconf only routes the two sources
        raise Http404("unknown report source")
    if run.status != RunStatus.DONE:
        raise reports.ReportParameterError(f"retrieval run #{run.pk} is {run.status}; a report needs a finished run")
    replicates, seed = reports.report_parameters(
        replicates=params.get("replicates") or reports.DEFAULT_REPLICATES,
        seed=params.get("seed") or reports.DEFAULT_SEED,
    )
    choice = params.get("secondary", "auto") or "auto"
    if choice == "auto":
        secondary = reports.secondary_run_default(run=run)
    elif choice == "none":
        secondary = None
    else:
        secondary = RetrievalRun.objects.filter(pk=int(choice) if choice.isdecimal() and len(choice) <= 18 else -1,
                                                status=RunStatus.DONE).first()
        if secondary is None or secondary.suite_id != run.suite_id or secondary.pk == run.pk:
            raise reports.ReportParameterError(
                f"secondary={choice!r}: expected 'auto', 'none' or the id of another finished retrieval run "
                f"of suite {run.suite}")
    query = {k: v for k, v in (("replicates", params.get("replicates")), ("seed", params.get("seed")),
                                ("secondary", params.get("secondary"))) if v}
    query_string = "&".join(f"{k}={v}" for k, v in query.items())
    return ReportRequest(run, scores, secondary, replicates, seed, query_string)


def _build(source: str, pk: int, request: HttpRequest) -> tuple[ReportRequest, reports.Report]:
    parsed = report_request_parse(source=source, pk=pk, params=request.GET)
    return parsed, reports.report_build(run=parsed.run, rerank=parsed.rerank, secondary=parsed.secondary,
                                        replicates=parsed.replicates, seed=parsed.seed)


@perm_required(VIEW_REPORTS)
def report_index(request: HttpRequest) -> HttpResponse:
    return render(request, "benchmarks/report_index.html", {
        "retrieval_runs": RetrievalRun.objects.filter(status=RunStatus.DONE).select_related("suite").order_by("-id"),
        "rerank_runs": reports.rerank_run_list(),
    })


@perm_required(VIEW_REPORTS)
def report_page(request: HttpRequest, source: str, pk: int) -> HttpResponse:
    try:
        parsed, report = _build(source, pk, request)
    except reports.ReportParameterError as exc:
        return render(request, "benchmarks/report.html", {"error": str(exc), "source": source, "pk": pk,
                                                          "params": request.GET}, status=400)
    return render(request, "benchmarks/report.html", {
        "report": report, "source": source, "pk": pk, "parsed": parsed, "params": request.GET,
        "forest_svg": svg.forest_plot_svg(report), "systems": reports.report_systems(report),
        "caveats": reports.CAVEATS, "coverage_note": reports.COVERAGE_NOTE,
        "threshold_note": reports.THRESHOLD_NOTE, "threshold": reports.DIAGNOSTIC_THRESHOLD,
        "exports": [name for name in EXPORTS if _export_available(name, report)],
        "min_replicates": reports.MIN_REPLICATES, "max_replicates": reports.MAX_REPLICATES,
    })


def _export_available(name: str, report: reports.Report) -> bool:
    system = name.removesuffix(".run")
    return not name.endswith(".run") or system in reports.report_systems(report)


@perm_required(VIEW_REPORTS)
def report_export(request: HttpRequest, source: str, pk: int, export: str) -> HttpResponse:
    if export not in EXPORTS:
        raise Http404(f"unknown export {export!r}; one of {', '.join(EXPORTS)}")
    try:
        _parsed, report = _build(source, pk, request)
    except reports.ReportParameterError as exc:
        return JsonResponse({"error": str(exc)}, status=400)
    if not _export_available(export, report):
        raise Http404(f"this report has no {export.removesuffix('.run')} system")
    if export == "report.json":
        body: str | None = None
        response = JsonResponse(reports.report_as_json(report), json_dumps_params={"ensure_ascii": False, "indent": 1})
    else:
        if export == "queries.csv":
            body = reports.report_csv(report)
        elif export == "qrels.txt":
            body = reports.report_trec_qrels(report)
        elif export == "families.txt":
            body = reports.report_families(report)
        else:
            body = reports.report_trec_run(report, system=export.removesuffix(".run"))
        response = HttpResponse(body, content_type=EXPORTS[export])
    suite = report.inputs.suite
    stem = slugify(f"{suite.name}-v{suite.version}-{source}-{pk}")
    response["Content-Disposition"] = f'attachment; filename="{stem}-{export}"'
    return response
