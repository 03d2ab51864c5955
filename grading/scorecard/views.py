"""Scorecard (live regrade), explorer and playground pages (thin: parse, call a selector, render; reviewers get 403)."""

from __future__ import annotations

import time
from dataclasses import dataclass

from django.http import HttpRequest, HttpResponse, JsonResponse
from django.shortcuts import render
from django.template.loader import render_to_string
from django.urls import reverse
from django.views.decorators.http import require_http_methods

from grading.comparisons.services import comparison_params
from grading.dataset.models import Sample
from grading.dataset.selectors import sample_default
from grading.responses import csv_response, dataset_or_404, error_response, export_format, json_response
from grading.runs.models import ExtractionRun
from grading.runs.selectors import run_scope
from grading.scorecard.explorer import explorer_json, explorer_view
from grading.scorecard.exports import (
    LEADERBOARD_CSV_FIELDS,
    SCORECARD_CSV_FIELDS,
    beside_cuad_json,
    comparison_json,
    leaderboard_csv_rows,
    leaderboard_json,
    scorecard_csv_rows,
    scorecard_json,
)
from grading.scorecard.leaderboard import LeaderboardError, leaderboard_runs, leaderboard_view
from grading.scorecard.params import NO_FULL_RUN, NO_RUN_YET, SORT_KEYS, ParameterError, View, parse_view
from grading.scorecard.playground import playground_check, playground_grounding, playground_overlap
from grading.scorecard.selectors import (
    ComparisonError,
    beside_cuad,
    conclusion,
    population,
    scorecard_view,
    sorted_rows,
)
from grading.scorecard.summary import CuadSummary, cuad_summary_build
from reviewapp.core.auth.roles import VIEW_REPORTS, perm_required
from reviewapp.core.exports.downloads import download
from reviewapp.core.exports.pdf import pdf_from_html
from reviewapp.core.http.requests import HtmxHttpRequest
from scoring.cuad.matching import MATCHERS

PLAYGROUND_EXAMPLE = {
    "a": "The Agreement shall be governed by the laws of the State of New York.",
    "b": "This Agreement shall be governed by and construed in accordance with the laws of the State of New York, "
    "without regard to its conflict of laws principles.",
    "claim": "governed by the laws of the State of Delaware",
    "source": "This Agreement shall be governed by and construed in accordance with the laws of the State of New "
    "York, without regard to its conflict of laws principles.",
}


# ---------------------------------------------------------------------------
# Scorecard (live regrade)


@perm_required(VIEW_REPORTS)
def scorecard(request: HtmxHttpRequest, fmt: str = "") -> HttpResponse:
    fmt = export_format(fmt)
    started = time.perf_counter()
    try:
        view = parse_view(request.GET)
        card, comparison = scorecard_view(view=view)
    except (ParameterError, ComparisonError) as exc:
        errors = exc.errors if isinstance(exc, ParameterError) else [str(exc)]
        if errors in ([NO_RUN_YET], [NO_FULL_RUN]) and not fmt:
            # Not a bad request: there is nothing to show by default; the controls let the person choose.
            return render(request, "cuad/scorecard.html", {"errors": errors, **_controls_context(request)})
        return error_response(request, "cuad/scorecard.html", errors, _controls_context(request), fmt=fmt)
    rows = sorted_rows(card.card.rows, key=view.sort, descending=view.descending)
    server_ms = (time.perf_counter() - started) * 1000
    if fmt == "json":
        data = {"conclusion": conclusion(card=card, comparison=comparison), **scorecard_json(card, view.sample)}
        beside = beside_cuad_json(card=card, view=view)
        if beside is not None:
            data["beside_cuad"] = beside
        if comparison:
            data["comparison"] = comparison_json(comparison, view.sample)
        return json_response(data)
    if fmt == "csv":
        return csv_response(
            f"cuad-scorecard-run-{card.run.pk}", SCORECARD_CSV_FIELDS, scorecard_csv_rows(card, rows)
        )
    context = {
        "view": view,
        "card": card,
        "beside": beside_cuad(card=card, thresholds=view.thresholds, matcher=view.matcher),
        "rows": rows,
        "comparison": comparison,
        "conclusion": conclusion(card=card, comparison=comparison),
        "server_ms": server_ms,
        "population": population(scope=card.scope),
        "columns": SORT_KEYS,
        "sort_links": {
            col: view.query(
                sort=col,
                dir=("asc" if view.descending else "desc")
                if col == view.sort
                else ("asc" if col == "category" else "desc"),
            )
            for col in SORT_KEYS
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


@dataclass(frozen=True)
class RunChoice:
    pk: int
    model: str
    scope: str  # "" for a run covering the whole sample, else "5 of 100 contracts"


def run_choices(sample: Sample | None) -> list[RunChoice]:
    """Every run of the sample's dataset, newest first, a partial one labelled with what it covers."""
    if sample is None:
        return []
    out = []
    for run in ExtractionRun.objects.filter(dataset=sample.dataset_id):
        scope = run_scope(run=run, sample=sample)
        out.append(RunChoice(run.pk, run.model, "" if scope.full else f"{scope.n} of {scope.sample_size} contracts"))
    return out


def _controls_context(request: HttpRequest, view: View | None = None) -> dict:
    sample: Sample | None
    if view:
        sample = view.sample
    else:
        dataset = dataset_or_404(request.GET)
        sample = sample_default(dataset=dataset) if dataset else None
    g = request.GET
    return {
        "run_choices": run_choices(sample),
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
# Leaderboard (every chosen run at once, live thresholds)


def _runs_asked(request: HttpRequest) -> bool:
    return any(value.strip() for value in request.GET.getlist("run"))


@perm_required(VIEW_REPORTS)
def leaderboard(request: HtmxHttpRequest, fmt: str = "") -> HttpResponse:
    fmt = export_format(fmt)
    started = time.perf_counter()
    try:
        params = comparison_params(request.GET)
        view, by_default = leaderboard_runs(view=parse_view(params, need_run=False),
                                            asked=any(v.strip() for v in params.getlist("run")))
        lb = leaderboard_view(view=view, chosen_by_default=by_default)
    except (ParameterError, LeaderboardError) as exc:
        errors = exc.errors if isinstance(exc, ParameterError) else [str(exc)]
        controls = {**_controls_context(request), "tab": "leaderboard"}
        if not _runs_asked(request) and isinstance(exc, LeaderboardError) and not fmt:
            # Not a bad request: nothing to rank by default; the controls let the person choose.
            return render(request, "cuad/leaderboard.html", {"errors": errors, **controls})
        return error_response(request, "cuad/leaderboard.html", errors, controls, fmt=fmt)
    server_ms = (time.perf_counter() - started) * 1000
    if fmt == "json":
        return json_response(leaderboard_json(lb))
    if fmt == "csv":
        return csv_response(f"cuad-leaderboard-sample-{lb.sample.pk}", LEADERBOARD_CSV_FIELDS,
                            leaderboard_csv_rows(lb))
    context = {
        "lb": lb,
        "view": view,
        "server_ms": server_ms,
        "scorecard_links": {e.run.pk: view.query(runs=[e.run.pk], sort="", dir="") for e in lb.entries},
    }
    if not request.htmx:  # the controls are not part of the swapped fragment
        context.update(_controls_context(request, view))
        context["tab"] = "leaderboard"
    template = "cuad/leaderboard.html#board" if request.htmx else "cuad/leaderboard.html"
    response = render(request, template, context)
    response["Server-Timing"] = f"regrade;dur={server_ms:.1f}"
    return response


# ---------------------------------------------------------------------------
# Explorer


@perm_required(VIEW_REPORTS)
def explorer(request: HtmxHttpRequest, fmt: str = "") -> HttpResponse:
    fmt = export_format(fmt)
    try:
        view = parse_view(request.GET)
    except ParameterError as exc:
        return error_response(request, "cuad/explorer.html", exc.errors, {"tab": "explorer"}, fmt=fmt)
    ex = explorer_view(view=view)
    if fmt == "json":
        return json_response(explorer_json(ex))
    if fmt == "csv":
        data = explorer_json(ex)
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
        return csv_response(
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


def _fixed(value: float | None) -> str:
    return "" if value is None else f"{value:.6f}"


@perm_required(VIEW_REPORTS)
@require_http_methods(["GET", "POST"])
def playground(request: HtmxHttpRequest, fmt: str = "") -> HttpResponse:
    """The texts come by POST (a contract is far longer than a URL may be); GET serves the page and exports."""
    source = request.POST if request.method == "POST" else request.GET
    values = {k: source.get(k, v) for k, v in PLAYGROUND_EXAMPLE.items()}
    fmt = export_format(fmt)
    part = request.GET.get("part")
    errors = playground_check(values)
    if errors:
        ctx: dict[str, object] = {"values": values, "errors": errors, "tab": "playground"}
        if fmt:
            return json_response({"errors": errors}, status=400)
        if request.htmx and part in ("overlap", "grounding"):
            # 200 so htmx swaps it: the message replaces the figures of the previous texts.
            return render(request, f"cuad/playground.html#{part}", ctx)
        return render(request, "cuad/playground.html", ctx, status=400)
    overlap = playground_overlap(a=values["a"], b=values["b"])
    ground = playground_grounding(claim=values["claim"], source=values["source"])
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
            "note": "no tokens in either text" if overlap.no_tokens else "",
        },
        "grounding": {
            "claim": values["claim"],
            "source": values["source"],
            "grounding": ground.grounding,
            "n": ground.n,
            "found": ground.found,
            "total": ground.total,
            "verbatim": ground.verbatim,
            "note": "no tokens in the claim" if ground.grounding is None else "",
        },
    }
    if fmt == "json":
        return json_response(data)
    if fmt == "csv":
        return csv_response(
            "cuad-playground",
            ["axis", "value", "detail"],
            [
                {
                    "axis": "token_f1",
                    "value": _fixed(overlap.f1),
                    "detail": "no tokens in either text" if overlap.no_tokens
                    else f"shared {overlap.shared} of {overlap.a_tokens} / {overlap.b_tokens} tokens",
                },
                {
                    "axis": "grounding",
                    "value": _fixed(ground.grounding),
                    "detail": "no tokens in the claim" if ground.grounding is None
                    else f"{ground.found} of {ground.total} distinct {ground.n}-grams found",
                },
            ],
        )
    ctx = {"values": values, "overlap": overlap, "ground": ground, "tab": "playground"}
    if request.htmx and part in ("overlap", "grounding"):
        return render(request, f"cuad/playground.html#{part}", ctx)
    return render(request, "cuad/playground.html", ctx)


# ---------------------------------------------------------------------------
# The one page to send


def _summary(request: HttpRequest) -> tuple[CuadSummary | None, list[str], str]:
    try:
        # A declared comparison (``comparison=``) fixes the runs and the sample: every one of them is listed.
        params = comparison_params(request.GET)
        view, by_default = leaderboard_runs(view=parse_view(params, need_run=False),
                                            asked=any(v.strip() for v in params.getlist("run")))
        lb = leaderboard_view(view=view, chosen_by_default=by_default)
    except (ParameterError, LeaderboardError) as exc:
        return None, (exc.errors if isinstance(exc, ParameterError) else [str(exc)]), ""
    return cuad_summary_build(lb=lb), [], request.GET.urlencode()


@perm_required(VIEW_REPORTS)
def summary(request: HttpRequest) -> HttpResponse:
    built, errors, query = _summary(request)
    if built is None:
        return render(request, "cuad/summary.html", {"errors": errors}, status=400)
    return render(request, "cuad/summary.html", {"lb": built.lb, "audits": built.audits,
                                                "provenance": built.provenance, "query": query})


@perm_required(VIEW_REPORTS)
def summary_pdf(request: HttpRequest) -> HttpResponse:
    built, errors, query = _summary(request)
    if built is None:
        return JsonResponse({"errors": errors}, status=400)
    html = render_to_string("cuad/summary_pdf.html", {"lb": built.lb, "audits": built.audits,
                                                        "provenance": built.provenance, "query": query},
                            request=request)
    return download(pdf_from_html(html), filename=f"cuad-summary-sample-{built.lb.sample.pk}.pdf")
