"""Retrieval run pages: a run's candidates per query, and the form that makes a run."""

from __future__ import annotations

from django import forms
from django.contrib import messages
from django.http import HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.views.decorators.http import require_http_methods

from benchmarks.retrieval import selectors
from benchmarks.retrieval.engines import CONFIGURATIONS, DEFAULT_CONFIGURATION, engine_for_connection
from benchmarks.retrieval.models import RetrievalRun
from benchmarks.retrieval.services import retrieval_run_create
from benchmarks.suites.models import Suite
from reviewapp.core.auth.roles import LAUNCH_RUNS, VIEW_REPORTS, perm_required


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
    engine = (f"{engine_for_connection().name} for the engine-dependent baselines; "
              f"{DEFAULT_CONFIGURATION} (the default) is the same on every database")
    return render(request, "benchmarks/retrieval_run_new.html", {"form": form, "engine": engine})
