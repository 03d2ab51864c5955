"""Declared comparisons: the list (stakeholders and admins) and the declaration form of a retrieval run (admins)."""

from __future__ import annotations

from urllib.parse import urlencode

from django.contrib import messages
from django.http import HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse

from benchmarks.comparisons.selectors import comparison_get, comparison_list
from benchmarks.comparisons.services import ComparisonError, comparison_declare, comparison_plan
from benchmarks.retrieval.models import RetrievalRun
from reviewapp.core.auth.roles import LAUNCH_RUNS, VIEW_REPORTS, perm_required


@perm_required(VIEW_REPORTS)
def comparison_index(request: HttpRequest) -> HttpResponse:
    return render(request, "benchmarks/comparison_index.html", {"declarations": comparison_list()})


@perm_required(LAUNCH_RUNS)
def comparison_declare_view(request: HttpRequest, pk: int) -> HttpResponse:
    """Tick systems of the suite of retrieval run ``pk`` (any of its retrieval configurations, rerank runs and
    hybrids; that run's first) to be compared on its held-out split; declared before any is scored."""
    run = get_object_or_404(RetrievalRun.objects.select_related("suite"), pk=pk)
    plan = comparison_plan(retrieval_run=run)
    error = ""
    chosen = {row.system.key for row in plan if not row.refusal}
    if request.method == "POST":
        chosen = set(request.POST.getlist("system"))
        systems = [(row.system.retrieval_run, row.system.rerank_run, row.system.hybrid) for row in plan
                   if row.system.key in chosen]
        unknown = chosen - {row.system.key for row in plan}
        try:
            if unknown:
                raise ComparisonError(f"not a system of {run.suite.name} v{run.suite.version}: "
                                      f"{', '.join(sorted(unknown))}")
            declared = comparison_declare(systems=systems, user=request.user, via="page")
        except ComparisonError as exc:
            error = str(exc)
        else:
            messages.success(request, f"Comparison declared: {len(declared.systems)} systems planned together on "
                                      f"the held-out split (sha256 {declared.sha256[:12]}…).")
            declaration = comparison_get(pk=declared.pk)
            assert declaration is not None and declaration.base_run_id is not None
            return redirect(reverse("benchmarks:leaderboard", args=[declaration.base_run_id])
                            + f"?{urlencode({'comparison': declared.pk})}")
    return render(request, "benchmarks/comparison_declare.html", {
        "run": run, "plan": plan, "chosen": chosen, "error": error,
        "declarations": comparison_list(suite_id=run.suite_id),
    }, status=400 if error else 200)
