"""Scorecard (live regrade), explorer and playground pages (thin: parse, call a selector, render; reviewers get 403)."""

from __future__ import annotations

import time

from django.http import HttpRequest, HttpResponse
from django.shortcuts import render
from django.urls import reverse

from grading.dataset.selectors import sample_default
from grading.responses import csv_response, error_response, export_format, json_response
from grading.runs.models import ExtractionRun
from grading.scorecard.explorer import explorer_json, explorer_view
from grading.scorecard.exports import SCORECARD_CSV_FIELDS, scorecard_csv_rows, scorecard_json
from grading.scorecard.params import NO_RUN_YET, SORT_KEYS, ParameterError, View, parse_view
from grading.scorecard.playground import playground_grounding, playground_overlap
from grading.scorecard.selectors import population, scorecard_view, sorted_rows
from reviewapp.core.access import VIEW_REPORTS, perm_required
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
def scorecard(request: HttpRequest) -> HttpResponse:
    fmt = export_format(request)
    started = time.perf_counter()
    try:
        view = parse_view(request.GET)
    except ParameterError as exc:
        if exc.errors == [NO_RUN_YET] and not request.GET.get("format"):
            # Not a bad request: there is simply nothing to grade yet.
            return render(request, "cuad/scorecard.html", {"errors": exc.errors, **_controls_context(request)})
        return error_response(request, "cuad/scorecard.html", exc.errors, _controls_context(request))
    card, comparison = scorecard_view(view=view)
    rows = sorted_rows(card.card.rows, key=view.sort, descending=view.descending)
    server_ms = (time.perf_counter() - started) * 1000
    if fmt == "json":
        data = scorecard_json(card, view.sample)
        if comparison:
            data["comparison"] = [scorecard_json(c, view.sample) for c in comparison.cards]
        return json_response(data)
    if fmt == "csv":
        return csv_response(
            f"cuad-scorecard-run-{card.run.pk}", SCORECARD_CSV_FIELDS, scorecard_csv_rows(card, rows)
        )
    context = {
        "view": view,
        "card": card,
        "rows": rows,
        "comparison": comparison,
        "server_ms": server_ms,
        "population": population(sample=view.sample, n_contracts=card.card.n_contracts),
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


def _controls_context(request: HttpRequest, view: View | None = None) -> dict:
    sample = view.sample if view else sample_default()
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
    fmt = export_format(request)
    try:
        view = parse_view(request.GET)
    except ParameterError as exc:
        return error_response(request, "cuad/explorer.html", exc.errors, {"tab": "explorer"})
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


@perm_required(VIEW_REPORTS)
def playground(request: HttpRequest) -> HttpResponse:
    values = {k: request.GET.get(k, v) for k, v in PLAYGROUND_EXAMPLE.items()}
    overlap = playground_overlap(a=values["a"], b=values["b"])
    ground = playground_grounding(claim=values["claim"], source=values["source"])
    fmt = export_format(request)
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
        return json_response(data)
    if fmt == "csv":
        return csv_response(
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
