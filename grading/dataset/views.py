"""The dataset page: the loaded CUAD, a sample's manifest, type coverage and length histogram (reviewers get 403)."""

from __future__ import annotations

from django.http import HttpResponse
from django.shortcuts import render

from grading.dataset.models import Sample
from grading.dataset.selectors import dataset_overview, histogram_svg_bars, sample_default
from grading.responses import csv_response, dataset_or_404, error_response, export_format, json_response
from reviewapp.core.auth.roles import VIEW_REPORTS, perm_required
from reviewapp.core.http.requests import HtmxHttpRequest


@perm_required(VIEW_REPORTS)
def dataset(request: HtmxHttpRequest, fmt: str = "") -> HttpResponse:
    fmt = export_format(fmt)
    sample: Sample | None
    if request.GET.get("sample"):
        try:
            sample = Sample.objects.select_related("dataset").get(pk=int(request.GET["sample"]))
        except (ValueError, Sample.DoesNotExist):
            return error_response(request, "cuad/dataset.html", [f"sample: no sample {request.GET['sample']!r}"],
                                  fmt=fmt)
    else:
        dataset = dataset_or_404(request.GET)
        sample = sample_default(dataset=dataset) if dataset else None
    if sample is None:
        return error_response(
            request, "cuad/dataset.html", ["no CUAD sample exists yet (load_cuad then sample_cuad, or make demo)"],
            fmt=fmt,
        )
    overview = dataset_overview(sample=sample)
    if fmt == "json":
        return json_response(
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
        return csv_response(
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
            "chart": histogram_svg_bars(overview.histogram),
            "samples": Sample.objects.filter(dataset=sample.dataset_id),
            "tab": "dataset",
        },
    )
