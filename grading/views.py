"""The CUAD console's home page: the default sample's runs with their headline figures, and recent jobs."""

from __future__ import annotations

from typing import Any

from django.http import HttpRequest, HttpResponse
from django.shortcuts import render

from grading.dataset.selectors import sample_default
from grading.responses import csv_response, dataset_or_404, export_format, json_response
from grading.runs.selectors import jobs_list, runs_list
from reviewapp.core.auth.roles import VIEW_REPORTS, perm_required


@perm_required(VIEW_REPORTS)
def home(request: HttpRequest, fmt: str = "") -> HttpResponse:
    dataset = dataset_or_404(request.GET)
    sample = sample_default(dataset=dataset) if dataset else None
    summaries = runs_list(sample=sample)
    data: dict[str, Any] = {
        "sample": None if sample is None else {"id": sample.pk, "n": sample.n, "seed": sample.seed},
        "runs": [
            {
                "id": s.run.pk,
                "model": s.run.model,
                "extractions": s.run.n_extractions,
                "scope": s.scope.as_dict(),
                "headline": s.headline,
            }
            for s in summaries
        ],
    }
    fmt = export_format(fmt)
    if fmt == "json":
        return json_response(data)
    if fmt == "csv":
        return csv_response(
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
        {"sample": sample, "summaries": summaries, "jobs": jobs_list(limit=5), "tab": "home"},
    )
