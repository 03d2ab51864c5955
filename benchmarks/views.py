"""The statute benchmark's landing page: corpora, suites and runs at a glance."""

from __future__ import annotations

from django.http import HttpRequest, HttpResponse
from django.shortcuts import render

from benchmarks.corpus.selectors import corpus_list
from benchmarks.retrieval.selectors import retrieval_run_list
from benchmarks.suites.selectors import suite_list
from reviewapp.core.auth.roles import VIEW_REPORTS, perm_required


@perm_required(VIEW_REPORTS)
def index(request: HttpRequest) -> HttpResponse:
    return render(request, "benchmarks/index.html", {
        "corpora": corpus_list(),
        "suites": suite_list(),
        "runs": retrieval_run_list()[:20],
    })
