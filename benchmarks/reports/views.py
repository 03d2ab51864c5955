"""Benchmark report pages and exports (stakeholders and admins; reviewers never).

Thin: ``selectors`` reads, ``figures`` computes, ``exports`` writes, ``svg`` draws.
"""

from __future__ import annotations

from typing import Any

from django.db.models import Count
from django.http import Http404, HttpRequest, HttpResponse, JsonResponse
from django.shortcuts import render
from django.template.loader import render_to_string
from django.utils.text import slugify

from benchmarks.reports.exports.leaderboard import (
    leaderboard_as_json,
    leaderboard_csv,
    leaderboard_families,
    leaderboard_per_query,
    leaderboard_trec_qrels,
    leaderboard_trec_run,
)
from benchmarks.reports.exports.report import report_as_json, report_text_export
from benchmarks.reports.exposure import (
    exposure_declarations,
    exposure_record,
    known_targets_exposure_record,
    leaderboard_exposure_record,
)
from benchmarks.reports.figures import (
    COVERAGE_NOTE,
    DIAGNOSTIC_THRESHOLD,
    METRICS,
    PRIMARY_METRIC,
    PRIMARY_SPLIT,
    THRESHOLD_NOTE,
    Report,
    report_systems,
)
from benchmarks.reports.leaderboard import Leaderboard
from benchmarks.reports.models import HeldoutExposure
from benchmarks.reports.params import MAX_REPLICATES, MIN_REPLICATES, ReportParameterError
from benchmarks.reports.reading.summary import Summary, summary_build, summary_primary_first
from benchmarks.reports.reading.svg import (
    forest_plot_compact_svg,
    forest_plot_svg,
    leaderboard_forest_compact_svg,
    leaderboard_forest_svg,
)
from benchmarks.reports.selectors import (
    LeaderboardRequest,
    ReportRequest,
    leaderboard_build,
    leaderboard_request_parse,
    report_build,
    report_request_parse,
    rerank_run_list,
)
from benchmarks.retrieval.models import RetrievalRun, RunStatus
from reviewapp.core.auth.roles import VIEW_REPORTS, perm_required
from reviewapp.core.exports.downloads import as_download, content_type_of, download
from reviewapp.core.exports.pdf import pdf_from_html

EXPORTS = ("report.json", "queries.csv", "keyword.run", "reranked.run", "secondary.run", "qrels.txt", "families.txt")


def _build(source: str, pk: int, request: HttpRequest, *, purpose: str) -> tuple[ReportRequest, Report]:
    parsed = report_request_parse(source=source, pk=pk, params=request.GET)
    report = report_build(run=parsed.run, rerank=parsed.rerank, secondary=parsed.secondary,
                          replicates=parsed.replicates, seed=parsed.seed)
    return parsed, exposure_record(report, purpose=purpose, user=request.user)


@perm_required(VIEW_REPORTS)
def report_index(request: HttpRequest) -> HttpResponse:
    return render(request, "benchmarks/report_index.html", {
        "retrieval_runs": RetrievalRun.objects.filter(status=RunStatus.DONE).select_related("suite").order_by("-id"),
        "rerank_runs": rerank_run_list(),
    })


@perm_required(VIEW_REPORTS)
def report_page(request: HttpRequest, source: str, pk: int) -> HttpResponse:
    try:
        parsed, report = _build(source, pk, request, purpose=HeldoutExposure.Purpose.PAGE)
    except ReportParameterError as exc:
        return render(request, "benchmarks/report.html", {"error": str(exc), "source": source, "pk": pk,
                                                          "params": request.GET}, status=400)
    return render(request, "benchmarks/report.html", {
        "report": report, "source": source, "pk": pk, "parsed": parsed, "params": request.GET,
        "forest_svg": forest_plot_svg(report), "forest_svg_compact": forest_plot_compact_svg(report),
        "systems": report_systems(report),
        "caveats": report.caveats, "coverage_note": COVERAGE_NOTE,
        "threshold_note": THRESHOLD_NOTE, "threshold": DIAGNOSTIC_THRESHOLD,
        "exports": [name for name in EXPORTS if _export_available(name, report)],
        "min_replicates": MIN_REPLICATES, "max_replicates": MAX_REPLICATES,
    })


def _export_available(name: str, report: Report) -> bool:
    system = name.removesuffix(".run")
    return not name.endswith(".run") or system in report_systems(report)


@perm_required(VIEW_REPORTS)
def report_export(request: HttpRequest, source: str, pk: int, export: str) -> HttpResponse:
    if export not in EXPORTS:
        raise Http404(f"unknown export {export!r}; one of {', '.join(EXPORTS)}")
    try:
        _parsed, report = _build(source, pk, request, purpose=HeldoutExposure.Purpose.EXPORT)
    except ReportParameterError as exc:
        return JsonResponse({"error": str(exc)}, status=400)
    if not _export_available(export, report):
        raise Http404(f"this report has no {export.removesuffix('.run')} system")
    response: HttpResponse
    if export == "report.json":
        response = JsonResponse(report_as_json(report), json_dumps_params={"ensure_ascii": False, "indent": 1})
    else:
        response = HttpResponse(report_text_export(report, export), content_type=content_type_of(export))
    suite = report.inputs.suite
    stem = slugify(f"{suite.name}-v{suite.version}-{source}-{pk}")
    return as_download(response, f"{stem}-{export}")


# --------------------------------------------------------------------------- the statute leaderboard

LEADERBOARD_EXPORTS = ("leaderboard.json", "leaderboard.csv", "per-query.tsv", "qrels.txt", "families.txt")


def _leaderboard(pk: int, request: HttpRequest, *, purpose: str,
                 known_targets: bool = True) -> tuple[LeaderboardRequest, Leaderboard]:
    """The board with its held-out figures in the exposure ledger; ``known_targets``: the page shows that table."""
    parsed = leaderboard_request_parse(pk=pk, params=request.GET)
    board = leaderboard_build(run=parsed.run, reranks=parsed.reranks, replicates=parsed.replicates,
                              seed=parsed.seed, hybrids=parsed.hybrids,
                              others=parsed.others if parsed.comparison is not None else None)
    board = leaderboard_exposure_record(board, purpose=purpose, user=request.user)
    if known_targets:
        board = known_targets_exposure_record(board, purpose=purpose, user=request.user)
    return parsed, board


@perm_required(VIEW_REPORTS)
def leaderboard_index(request: HttpRequest) -> HttpResponse:
    return render(request, "benchmarks/leaderboard_index.html", {
        "retrieval_runs": RetrievalRun.objects.filter(status=RunStatus.DONE).select_related("suite")
        .annotate(reranks=Count("rerank_runs")).order_by("-id"),
    })


@perm_required(VIEW_REPORTS)
def leaderboard_page(request: HttpRequest, pk: int) -> HttpResponse:
    try:
        parsed, board = _leaderboard(pk, request, purpose=HeldoutExposure.Purpose.PAGE)
    except ReportParameterError as exc:
        return render(request, "benchmarks/leaderboard.html", {"error": str(exc), "pk": pk}, status=400)
    run_exports = [f"{s.key}.run" for s in board.systems if s.has_figures]
    return render(request, "benchmarks/leaderboard.html", {
        "board": board, "parsed": parsed, "pk": pk, "chosen": {r.pk for r in parsed.reranks},
        "hybrids": {r.pk for r in parsed.hybrids},
        "forest_svg": leaderboard_forest_svg(board.forest_rows(), endpoint=f"{PRIMARY_SPLIT} {PRIMARY_METRIC}",
                                             replicates=board.replicates, seed=board.seed),
        "forest_svg_compact": leaderboard_forest_compact_svg(
            board.forest_rows(), endpoint=f"{PRIMARY_SPLIT} {PRIMARY_METRIC}", replicates=board.replicates,
            seed=board.seed),
        "exports": [*LEADERBOARD_EXPORTS, *run_exports], "metrics": METRICS,
        "declarations": exposure_declarations([s.exposure for s in board.systems]),
        "min_replicates": MIN_REPLICATES, "max_replicates": MAX_REPLICATES,
    })


@perm_required(VIEW_REPORTS)
def leaderboard_export(request: HttpRequest, pk: int, export: str) -> HttpResponse:
    is_run = export.endswith(".run")
    if export not in LEADERBOARD_EXPORTS and not is_run:
        raise Http404(f"unknown export {export!r}; one of {', '.join(LEADERBOARD_EXPORTS)} or <system>.run")
    try:
        _parsed, board = _leaderboard(pk, request, purpose=HeldoutExposure.Purpose.EXPORT)
    except ReportParameterError as exc:
        return JsonResponse({"error": str(exc)}, status=400)
    if export == "leaderboard.json":
        response: HttpResponse = JsonResponse(leaderboard_as_json(board),
                                              json_dumps_params={"ensure_ascii": False, "indent": 1})
    elif is_run:
        system = export.removesuffix(".run")
        if not any(s.key == system and s.has_figures for s in board.systems):
            raise Http404(f"this leaderboard has no {system} system with figures")
        response = HttpResponse(leaderboard_trec_run(board, system=system), content_type=content_type_of(export))
    else:
        body = {"leaderboard.csv": leaderboard_csv, "per-query.tsv": leaderboard_per_query,
                "qrels.txt": leaderboard_trec_qrels, "families.txt": leaderboard_families}[export](board)
        response = HttpResponse(body, content_type=content_type_of(export))
    suite = board.inputs.suite
    stem = slugify(f"{suite.name}-v{suite.version}-leaderboard-{pk}")
    return as_download(response, f"{stem}-{export}")


# --------------------------------------------------------------------------- the one page to send


def _summary(pk: int, request: HttpRequest, *, purpose: str) -> tuple[LeaderboardRequest, Summary]:
    parsed, board = _leaderboard(pk, request, purpose=purpose, known_targets=False)
    return parsed, summary_build(board=board)


def _summary_context(parsed: LeaderboardRequest, summary: Summary, pk: int) -> dict[str, Any]:
    return {"summary": summary, "board": summary.board, "parsed": parsed, "pk": pk, "metrics": METRICS,
            "splits": summary_primary_first(summary.board)}


@perm_required(VIEW_REPORTS)
def summary_page(request: HttpRequest, pk: int) -> HttpResponse:
    try:
        parsed, summary = _summary(pk, request, purpose=HeldoutExposure.Purpose.PAGE)
    except ReportParameterError as exc:
        return render(request, "benchmarks/summary.html", {"error": str(exc), "pk": pk}, status=400)
    return render(request, "benchmarks/summary.html", _summary_context(parsed, summary, pk))


@perm_required(VIEW_REPORTS)
def summary_pdf(request: HttpRequest, pk: int) -> HttpResponse:
    try:
        parsed, summary = _summary(pk, request, purpose=HeldoutExposure.Purpose.EXPORT)
    except ReportParameterError as exc:
        return JsonResponse({"error": str(exc)}, status=400)
    html = render_to_string("benchmarks/summary_pdf.html", _summary_context(parsed, summary, pk), request=request)
    suite = summary.board.inputs.suite
    return download(pdf_from_html(html), filename=f"{slugify(f'{suite.name}-v{suite.version}-summary-{pk}')}.pdf")
