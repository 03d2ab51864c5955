"""Human-label metrics and calibration pages of a rerank run, their exports, and the pool declaration form.

Stakeholders and admins read (``reviewapp.view_reports``); reviewers get 403.
Declaring a pool needs ``reviewapp.manage_reviews``. Thin: benchmarks.labels.metrics
and benchmarks.labels.pools do the work.
"""

from __future__ import annotations

from django import forms
from django.contrib import messages
from django.http import Http404, HttpRequest, HttpResponse, JsonResponse
from django.shortcuts import get_object_or_404, redirect, render

from benchmarks.labels import metrics as hm
from benchmarks.labels import pools as review_pools
from benchmarks.labels.svg import reliability_svg
from benchmarks.reports import report as reports
from benchmarks.rerank.models import RerankRun
from reviewapp.core.access import MANAGE_REVIEWS, VIEW_REPORTS, perm_required
from reviewapp.review import selectors as review_selectors
from scoring.stats.calibration import DIAGNOSTIC_THRESHOLD

CSV = "text/csv; charset=utf-8"
HUMAN_EXPORTS = {"human-metrics.json": "application/json", **dict.fromkeys(hm.HUMAN_TABLES, CSV)}
CALIBRATION_EXPORTS = {"calibration.json": "application/json", **dict.fromkeys(hm.CALIBRATION_TABLES, CSV)}


def _run(pk: int) -> RerankRun:
    return get_object_or_404(RerankRun.objects.select_related("suite", "retrieval_run", "ledger"), pk=pk)


def _pool_links(pools, chosen) -> list[dict]:
    return [{"public_id": p.public_id, "name": p.name, "synthetic": review_pools.is_synthetic(p),
             "chosen": chosen is not None and p.pk == chosen.pk, "created_at": p.created_at} for p in pools]


def _query(request: HttpRequest, *names: str) -> str:
    parts = [f"{n}={request.GET[n]}" for n in names if request.GET.get(n)]
    return "&".join(parts)


def human_metrics_build(*, run: RerankRun, params) -> tuple[hm.HumanMetrics, list]:
    pool, pools = hm.pool_choose(rerank_run=run, public_id=params.get("pool") or None)
    metrics = hm.human_metrics_compute(hm.human_inputs_load(rerank_run=run, pool=pool),
                                       replicates=params.get("replicates") or hm.DEFAULT_REPLICATES,
                                       seed=params.get("seed") or hm.DEFAULT_SEED)
    return metrics, _pool_links(pools, pool)


def calibration_build(*, run: RerankRun, params) -> tuple[hm.Calibration, list]:
    pool, pools = hm.pool_choose(rerank_run=run, public_id=params.get("pool") or None)
    return hm.calibration_compute(hm.human_inputs_load(rerank_run=run, pool=pool)), _pool_links(pools, pool)


def _common(run: RerankRun, request: HttpRequest) -> dict:
    return {"run": run, "can_declare": request.user.has_perm(MANAGE_REVIEWS), "label_rule": review_selectors.LABEL_RULE}


@perm_required(VIEW_REPORTS)
def human_metrics_page(request: HttpRequest, pk: int) -> HttpResponse:
    run = _run(pk)
    try:
        metrics, pools = human_metrics_build(run=run, params=request.GET)
    except reports.ReportParameterError as exc:
        return render(request, "benchmarks/human_metrics.html", {**_common(run, request), "error": str(exc)},
                      status=400)
    return render(request, "benchmarks/human_metrics.html", {
        **_common(run, request), "metrics": metrics, "pool": metrics.inputs.pool, "pools": pools,
        "notes": {"p5": hm.P5_NOTE, "ndcg": hm.NDCG_NOTE, "missing": hm.MISSING_NOTE, "synthetic": hm.SYNTHETIC_NOTE},
        "exports": list(HUMAN_EXPORTS), "query_string": _query(request, "pool", "replicates", "seed"),
        "pool_query": _query(request, "pool"),
    })


@perm_required(VIEW_REPORTS)
def calibration_page(request: HttpRequest, pk: int) -> HttpResponse:
    run = _run(pk)
    try:
        calibration, pools = calibration_build(run=run, params=request.GET)
    except reports.ReportParameterError as exc:
        return render(request, "benchmarks/calibration.html", {**_common(run, request), "error": str(exc)},
                      status=400)
    diagrams = {
        s.split: reliability_svg(s.summary.bins, title=f"Reliability, {s.label} split ({s.summary.included} items)",
                                 ident=f"reliability-{s.split}")
        for s in calibration.splits
    }
    return render(request, "benchmarks/calibration.html", {
        **_common(run, request), "calibration": calibration, "pool": calibration.inputs.pool, "pools": pools,
        "splits": [(s, diagrams[s.split]) for s in calibration.splits],
        "notes": {"missing": hm.MISSING_NOTE, "confidence": hm.CONFIDENCE_NOTE, "threshold": hm.THRESHOLD_NOTE,
                  "synthetic": hm.SYNTHETIC_NOTE},
        "threshold": DIAGNOSTIC_THRESHOLD, "exports": list(CALIBRATION_EXPORTS),
        "query_string": _query(request, "pool"),
    })


def _attachment(response: HttpResponse, run: RerankRun, page: str, export: str) -> HttpResponse:
    response["Content-Disposition"] = f'attachment; filename="rerank-{run.pk}-{page}-{export}"'
    return response


def _export(request: HttpRequest, pk: int, export: str, *, page: str, exports: dict, build, as_json,
            tables: dict) -> HttpResponse:
    """One export of a human-label page: its JSON, or one of its tables as CSV."""
    if export not in exports:
        raise Http404(f"unknown export {export!r}; one of {', '.join(exports)}")
    run = _run(pk)
    try:
        figures, _ = build(run=run, params=request.GET)
    except reports.ReportParameterError as exc:
        return JsonResponse({"error": str(exc)}, status=400)
    if export.endswith(".json"):
        response = JsonResponse(as_json(figures), json_dumps_params={"ensure_ascii": False, "indent": 1})
    else:
        response = HttpResponse(hm.rows_csv(tables[export](figures)), content_type=exports[export])
    return _attachment(response, run, page, export)


@perm_required(VIEW_REPORTS)
def human_metrics_export(request: HttpRequest, pk: int, export: str) -> HttpResponse:
    return _export(request, pk, export, page="human-metrics", exports=HUMAN_EXPORTS, build=human_metrics_build,
                   as_json=hm.human_metrics_as_json, tables=hm.HUMAN_TABLES)


@perm_required(VIEW_REPORTS)
def calibration_export(request: HttpRequest, pk: int, export: str) -> HttpResponse:
    return _export(request, pk, export, page="calibration", exports=CALIBRATION_EXPORTS, build=calibration_build,
                   as_json=hm.calibration_as_json, tables=hm.CALIBRATION_TABLES)


# --------------------------------------------------------------------------- declaring a pool (admins)


class DeclarePoolForm(forms.Form):
    k = forms.IntegerField(min_value=1, max_value=review_pools.MAX_K, initial=review_pools.DEFAULT_K,
                           help_text="Top k of the keyword order and of the reranked order, per query.")
    reviewers_per_item = forms.IntegerField(min_value=1, max_value=10, initial=review_pools.DEFAULT_REVIEWERS)
    explicit = forms.CharField(
        required=False, widget=forms.Textarea(attrs={"rows": 4}),
        help_text="Optional: an explicit list instead of the top-k union, one 'query_id doc_id' per line.")
    reviewers = forms.MultipleChoiceField(required=False, widget=forms.CheckboxSelectMultiple,
                                          help_text="Assign now (balanced); or later on the review admin page.")
    import_provisional = forms.BooleanField(
        required=False, label="Also import the suite's nominated targets as provisional section labels")

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.people = {str(u.pk): u for u in review_selectors.reviewer_candidates()}
        self.fields["reviewers"].choices = [(pk, u.get_username()) for pk, u in self.people.items()]

    def clean_explicit(self) -> list[tuple[str, str]] | None:
        text = self.cleaned_data.get("explicit") or ""
        pairs = []
        for number, line in enumerate(text.splitlines(), start=1):
            fields = line.split()
            if not fields:
                continue
            if len(fields) != 2:
                raise forms.ValidationError(f"line {number}: expected 'query_id doc_id', got {line.strip()!r}")
            pairs.append((fields[0], fields[1]))
        return pairs or None


@perm_required(MANAGE_REVIEWS)
def review_pool_declare_view(request: HttpRequest, pk: int) -> HttpResponse:
    run = _run(pk)
    form = DeclarePoolForm(request.POST or None)
    error = ""
    if request.method == "POST" and form.is_valid():
        data = form.cleaned_data
        try:
            result = review_pools.review_pool_declare(
                rerank_run=run, k=data["k"], explicit=data["explicit"],
                reviewers_per_item=data["reviewers_per_item"],
                reviewers=[form.people[pk] for pk in data["reviewers"]], created_by=request.user)
            note = ""
            if data["import_provisional"]:
                _source, created = review_pools.provisional_labels_import(suite=run.suite, created_by=request.user)
                note = " Provisional section labels imported." if created else " Provisional labels already present."
        except review_pools.ReviewPoolError as exc:
            error = str(exc)
        else:
            verb = "Declared" if result.created else "This declaration exists already:"
            messages.success(request, f"{verb} pool {result.pool.name!r} ({result.pool.items.count()} items); "
                                      f"{result.assigned} assignments added.{note}")
            return redirect("review:admin-pool", pool_id=result.pool.public_id)
    preview = None
    if not error:
        try:
            preview = review_pools.review_pool_plan(rerank_run=run, k=review_pools.DEFAULT_K)
        except review_pools.ReviewPoolError as exc:
            error = str(exc)
    return render(request, "benchmarks/review_pool_declare.html", {
        "run": run, "form": form, "error": error, "preview": preview,
        "pools": _pool_links(review_pools.run_pools(rerank_run=run), None),
    }, status=400 if error and request.method == "POST" else 200)
