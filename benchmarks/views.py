"""Pages of the statute benchmark: corpus browser, suites, retrieval runs. Thin: selectors and services do the work."""

from __future__ import annotations

from django import forms
from django.contrib import messages
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.views.decorators.http import require_http_methods

from benchmarks import selectors
from benchmarks.models import Corpus, RetrievalRun, Suite
from benchmarks.retrieval import CONFIGURATIONS, DEFAULT_CONFIGURATION, engine_for_connection
from benchmarks.services import retrieval_run_create
from reviewapp.access import LAUNCH_RUNS, VIEW_REPORTS, perm_required


@perm_required(VIEW_REPORTS)
def index(request: HttpRequest) -> HttpResponse:
    return render(request, "benchmarks/index.html", {
        "corpora": selectors.corpus_list(),
        "suites": selectors.suite_list(),
        "runs": selectors.retrieval_run_list()[:20],
    })


@perm_required(VIEW_REPORTS)
def corpus_detail(request: HttpRequest, corpus: str) -> HttpResponse:
    if corpus not in Corpus.values:
        raise Http404("unknown corpus")
    return render(request, "benchmarks/corpus.html", {
        "corpus": corpus, "label": Corpus(corpus).label,
        "snapshots": selectors.corpus_current_snapshots(corpus=corpus),
        "chapters": selectors.corpus_chapters(corpus=corpus),
    })


@perm_required(VIEW_REPORTS)
def chapter_detail(request: HttpRequest, corpus: str, chapter: str) -> HttpResponse:
    if corpus not in Corpus.values:
        raise Http404("unknown corpus")
    provisions = list(selectors.chapter_provisions(corpus=corpus, chapter=chapter))
    if not provisions:
        raise Http404("no such chapter")
    return render(request, "benchmarks/chapter.html", {
        "corpus": corpus, "label": Corpus(corpus).label, "chapter": chapter,
        "chapter_title": provisions[0].chapter_title, "provisions": provisions,
    })


@perm_required(VIEW_REPORTS)
def provision_detail(request: HttpRequest, pk: int) -> HttpResponse:
    try:
        provision = selectors.provision_get(pk=pk)
    except Exception as exc:
        raise Http404("no such provision") from exc
    return render(request, "benchmarks/provision.html", {"provision": provision,
                                                          "passages": provision.passages.all()})


@perm_required(VIEW_REPORTS)
def suite_detail(request: HttpRequest, pk: int) -> HttpResponse:
    suite = get_object_or_404(Suite, pk=pk)
    return render(request, "benchmarks/suite.html", {
        "suite": suite, "groups": selectors.suite_detail(suite=suite),
        "snapshots": suite.snapshots.order_by("source_key"),
        "runs": selectors.retrieval_run_list(suite=suite),
    })


@perm_required(VIEW_REPORTS)
def retrieval_run_detail(request: HttpRequest, pk: int) -> HttpResponse:
    run = get_object_or_404(RetrievalRun.objects.select_related("suite", "created_by"), pk=pk)
    return render(request, "benchmarks/retrieval_run.html", {
        "run": run, "rows": selectors.retrieval_run_detail(run=run),
        "summary": selectors.retrieval_run_summary(run=run),
    })


class RetrievalRunForm(forms.Form):
    suite = forms.ModelChoiceField(queryset=Suite.objects.order_by("name", "-version"))
    configuration = forms.ChoiceField(choices=[(name, f"{name}: {c.description}") for name, c in
                                               CONFIGURATIONS.items()], initial=DEFAULT_CONFIGURATION)
    k = forms.IntegerField(min_value=1, max_value=200, initial=30, label="candidates per query (k)")


@perm_required(LAUNCH_RUNS)
@require_http_methods(["GET", "POST"])
def retrieval_run_new(request: HttpRequest) -> HttpResponse:
    form = RetrievalRunForm(request.POST or None)
    if request.method == "POST" and form.is_valid():
        run = retrieval_run_create(suite=form.cleaned_data["suite"], configuration=form.cleaned_data["configuration"],
                                   k=form.cleaned_data["k"], user=request.user)
        if run.status == "failed":
            messages.error(request, f"Retrieval run #{run.pk} failed: {run.error}")
        else:
            messages.success(request, f"Retrieval run #{run.pk} finished on {run.engine}.")
        return redirect("benchmarks:retrieval-run", pk=run.pk)
    return render(request, "benchmarks/retrieval_run_new.html", {"form": form,
                                                                 "engine": engine_for_connection().name})
