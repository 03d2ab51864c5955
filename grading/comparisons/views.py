"""CUAD comparisons: the list with each one's summary (readers of reports), and declaring one (admins)."""

from __future__ import annotations

from django.contrib import messages
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render

from grading.comparisons.services import CuadComparisonError, cuad_comparison_declare, cuad_comparison_list
from grading.dataset.selectors import ScopeError, dataset_chosen, sample_default
from grading.runs.models import ExtractionRun
from grading.scorecard.leaderboard import runs_default
from reviewapp.core.auth.roles import LAUNCH_RUNS, VIEW_REPORTS, perm_required


@perm_required(VIEW_REPORTS)
def comparisons(request: HttpRequest) -> HttpResponse:
    """GET: every declared comparison and (admins) the runs of a dataset to tick; POST (admins): declare them."""
    error = ""
    try:
        dataset = dataset_chosen(request.GET if request.method == "GET" else request.POST)
    except ScopeError as exc:
        dataset, error = None, str(exc)
    sample = sample_default(dataset=dataset) if dataset is not None else None
    runs = list(ExtractionRun.objects.filter(dataset=dataset).order_by("-created_at", "-id")) if dataset else []
    chosen = {r.pk for r in runs_default(sample=sample)[0]} if sample is not None else set()
    if request.method == "POST":
        if not request.user.has_perm(LAUNCH_RUNS):
            return HttpResponse("only an admin (who may launch runs) declares a comparison", status=403)
        wanted = [v for v in request.POST.getlist("run") if v]
        by_pk = {str(r.pk): r for r in runs}
        unknown = [v for v in wanted if v not in by_pk]
        chosen = {by_pk[v].pk for v in wanted if v in by_pk}
        try:
            if unknown:
                raise CuadComparisonError(f"not a run of {dataset.name if dataset else 'this dataset'}: "
                                          f"{', '.join(unknown)}")
            declared = cuad_comparison_declare(runs=[by_pk[v] for v in wanted], user=request.user, via="page",
                                               sample=sample)
        except CuadComparisonError as exc:
            error = str(exc)
        else:
            messages.success(request, f"Comparison declared: {declared.sentence}.")
            return redirect(declared.summary_url)
    return render(request, "cuad/comparisons.html", {
        "tab": "scorecard", "declarations": cuad_comparison_list(), "dataset": dataset, "sample": sample,
        "runs": runs, "chosen": chosen, "error": error,
    }, status=400 if error else 200)
