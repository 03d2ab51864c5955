"""The page of a frozen suite."""

from __future__ import annotations

from django.http import HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, render

from benchmarks.retrieval.selectors import retrieval_run_list
from benchmarks.suites import selectors
from benchmarks.suites.models import Suite
from reviewapp.core.access import VIEW_REPORTS, perm_required


@perm_required(VIEW_REPORTS)
def suite_detail(request: HttpRequest, pk: int) -> HttpResponse:
    suite = get_object_or_404(Suite, pk=pk)
    return render(request, "benchmarks/suite.html", {
        "suite": suite, "groups": selectors.suite_detail(suite=suite),
        "snapshots": suite.snapshots.order_by("source_key"),
        "runs": retrieval_run_list(suite=suite),
    })
