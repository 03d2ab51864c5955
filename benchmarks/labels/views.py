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

from benchmarks.labels.metrics import (
    CALIBRATION_TABLES,
    CONFIDENCE_NOTE,
    DEFAULT_REPLICATES,
    DEFAULT_SEED,
    HUMAN_TABLES,
    MISSING_NOTE,
    NDCG_NOTE,
    P5_NOTE,
    SYNTHETIC_NOTE,
    THRESHOLD_NOTE,
    Calibration,
    HumanMetrics,
    calibration_as_json,
    calibration_compute,
    human_inputs_load,
    human_metrics_as_json,
    human_metrics_compute,
    pool_choose,
    reviewer_agreement_load,
    rows_csv,
)
from benchmarks.labels.pools import (
    DECLARABLE,
    DEFAULT_K,
    DEFAULT_REVIEWERS,
    MAX_K,
    DeclareResult,
    PoolPlan,
    ReviewPoolError,
    provisional_labels_import,
    review_pool_declare,
    review_pool_declare_runs,
    review_pool_plan,
    review_pool_plan_runs,
)
from benchmarks.labels.selectors import is_synthetic, run_pools
from benchmarks.labels.svg import reliability_svg
from benchmarks.reports.exposure import exposure_record_runs
from benchmarks.reports.models import HeldoutExposure
from benchmarks.reports.params import ReportParameterError, report_parameters
from benchmarks.rerank.models import RerankRun
from reviewapp.core.auth.roles import MANAGE_REVIEWS, VIEW_REPORTS, perm_required
from reviewapp.core.exports.downloads import as_download, content_type_of
from reviewapp.core.http.requests import SignedInHttpRequest
from reviewapp.review.agreement.selectors import LABEL_RULE
from reviewapp.review.assignment.selectors import reviewer_candidates
from scoring.stats.calibration import DIAGNOSTIC_THRESHOLD

HUMAN_EXPORTS = ("human-metrics.json", *HUMAN_TABLES)
CALIBRATION_EXPORTS = ("calibration.json", *CALIBRATION_TABLES)


def _run(pk: int) -> RerankRun:
    return get_object_or_404(RerankRun.objects.select_related("suite", "retrieval_run", "ledger"), pk=pk)


def _pool_links(pools, chosen) -> list[dict]:
    return [{"public_id": p.public_id, "name": p.name, "synthetic": is_synthetic(p),
             "chosen": chosen is not None and p.pk == chosen.pk, "created_at": p.created_at} for p in pools]


def _query(request: HttpRequest, *names: str) -> str:
    parts = [f"{n}={request.GET[n]}" for n in names if request.GET.get(n)]
    return "&".join(parts)


def _heldout_record(run: RerankRun, qids: set[str], *, purpose: str, user) -> None:
    """Append the computation to the held-out ledger when any of ``qids`` is a held-out query (nothing for dev).

    Human-label figures (P@5, nDCG@5, Brier, ECE) of held-out queries are held-out figures like the report's.
    """
    if qids:
        exposure_record_runs(retrieval_run=run.retrieval_run, rerank_run=run, qids=qids, purpose=purpose, user=user)


def human_metrics_build(*, run: RerankRun, params, purpose: str = HeldoutExposure.Purpose.PAGE,
                        user=None) -> tuple[HumanMetrics, list]:
    pool, pools = pool_choose(rerank_run=run, public_id=params.get("pool") or None)
    replicates, seed = report_parameters(replicates=params.get("replicates") or DEFAULT_REPLICATES,
                                         seed=params.get("seed") or DEFAULT_SEED)
    inputs = human_inputs_load(rerank_run=run, pool=pool)
    agreement = reviewer_agreement_load(pool=pool, rankings=inputs.rankings, replicates=replicates, seed=seed)
    metrics = human_metrics_compute(inputs, replicates=replicates, seed=seed, agreement=agreement)
    _heldout_record(run, {q.qid for q in metrics.queries if any(v is not None for v in q.values.values())},
                    purpose=purpose, user=user)
    return metrics, _pool_links(pools, pool)


def calibration_build(*, run: RerankRun, params, purpose: str = HeldoutExposure.Purpose.PAGE,
                      user=None) -> tuple[Calibration, list]:
    pool, pools = pool_choose(rerank_run=run, public_id=params.get("pool") or None)
    calibration = calibration_compute(human_inputs_load(rerank_run=run, pool=pool),
                                      replicates=params.get("replicates") or DEFAULT_REPLICATES,
                                      seed=params.get("seed") or DEFAULT_SEED)
    _heldout_record(run, {i.qid for i in calibration.items if i.label is not None and i.distribution is not None},
                    purpose=purpose, user=user)
    return calibration, _pool_links(pools, pool)


def _common(run: RerankRun, request: HttpRequest) -> dict:
    return {"run": run, "can_declare": request.user.has_perm(MANAGE_REVIEWS), "label_rule": LABEL_RULE}


@perm_required(VIEW_REPORTS)
def human_metrics_page(request: HttpRequest, pk: int) -> HttpResponse:
    run = _run(pk)
    try:
        metrics, pools = human_metrics_build(run=run, params=request.GET, user=request.user)
    except ReportParameterError as exc:
        return render(request, "benchmarks/human_metrics.html", {**_common(run, request), "error": str(exc)},
                      status=400)
    return render(request, "benchmarks/human_metrics.html", {
        **_common(run, request), "metrics": metrics, "pool": metrics.inputs.pool, "pools": pools,
        "notes": {"p5": P5_NOTE, "ndcg": NDCG_NOTE, "missing": MISSING_NOTE, "synthetic": SYNTHETIC_NOTE},
        "exports": list(HUMAN_EXPORTS), "query_string": _query(request, "pool", "replicates", "seed"),
        "pool_query": _query(request, "pool"),
    })


@perm_required(VIEW_REPORTS)
def calibration_page(request: HttpRequest, pk: int) -> HttpResponse:
    run = _run(pk)
    try:
        calibration, pools = calibration_build(run=run, params=request.GET, user=request.user)
    except ReportParameterError as exc:
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
        "notes": {"missing": MISSING_NOTE, "confidence": CONFIDENCE_NOTE, "threshold": THRESHOLD_NOTE,
                  "synthetic": SYNTHETIC_NOTE},
        "threshold": DIAGNOSTIC_THRESHOLD, "exports": list(CALIBRATION_EXPORTS),
        "query_string": _query(request, "pool", "replicates", "seed"),
    })


def _attachment(response: HttpResponse, run: RerankRun, page: str, export: str) -> HttpResponse:
    return as_download(response, f"rerank-{run.pk}-{page}-{export}")


def _export(request: HttpRequest, pk: int, export: str, *, page: str, exports: tuple[str, ...], build, as_json,
            tables: dict) -> HttpResponse:
    """One export of a human-label page: its JSON, or one of its tables as CSV."""
    if export not in exports:
        raise Http404(f"unknown export {export!r}; one of {', '.join(exports)}")
    run = _run(pk)
    try:
        figures, _ = build(run=run, params=request.GET, purpose=HeldoutExposure.Purpose.EXPORT, user=request.user)
    except ReportParameterError as exc:
        return JsonResponse({"error": str(exc)}, status=400)
    response: HttpResponse
    if export.endswith(".json"):
        response = JsonResponse(as_json(figures), json_dumps_params={"ensure_ascii": False, "indent": 1})
    else:
        response = HttpResponse(rows_csv(tables[export](figures)), content_type=content_type_of(export))
    return _attachment(response, run, page, export)


@perm_required(VIEW_REPORTS)
def human_metrics_export(request: HttpRequest, pk: int, export: str) -> HttpResponse:
    return _export(request, pk, export, page="human-metrics", exports=HUMAN_EXPORTS, build=human_metrics_build,
                   as_json=human_metrics_as_json, tables=HUMAN_TABLES)


@perm_required(VIEW_REPORTS)
def calibration_export(request: HttpRequest, pk: int, export: str) -> HttpResponse:
    return _export(request, pk, export, page="calibration", exports=CALIBRATION_EXPORTS, build=calibration_build,
                   as_json=calibration_as_json, tables=CALIBRATION_TABLES)


# --------------------------------------------------------------------------- declaring a pool (admins)


class DeclarePoolForm(forms.Form):
    k = forms.IntegerField(min_value=1, max_value=MAX_K, initial=DEFAULT_K,
                           help_text="Top k of the keyword order and of the reranked order, per query.")
    reviewers_per_item = forms.IntegerField(min_value=1, max_value=10, initial=DEFAULT_REVIEWERS)
    explicit = forms.CharField(
        required=False, widget=forms.Textarea(attrs={"rows": 4}),
        help_text="Optional: an explicit list instead of the top-k union, one 'query_id doc_id' per line.")
    reviewers = forms.MultipleChoiceField(required=False, widget=forms.CheckboxSelectMultiple,
                                          help_text="Assign now (balanced); or later on the review admin page.")
    other_runs = forms.MultipleChoiceField(
        required=False, widget=forms.CheckboxSelectMultiple, label="Pool with other rerank runs",
        help_text="Other finished rerank runs of the same retrieval run (same candidates): the pool becomes the "
                  "union of the top k of keyword order and of every chosen run (depth-k pooling).")
    import_provisional = forms.BooleanField(
        required=False, label="Also import the suite's nominated targets as provisional section labels")

    def __init__(self, *args, run: RerankRun, **kwargs):
        super().__init__(*args, **kwargs)
        self.people = {str(u.pk): u for u in reviewer_candidates()}
        reviewers, other_runs = self.fields["reviewers"], self.fields["other_runs"]
        assert isinstance(reviewers, forms.ChoiceField) and isinstance(other_runs, forms.ChoiceField)  # above
        reviewers.choices = [(pk, u.get_username()) for pk, u in self.people.items()]
        self.others = {str(r.pk): r for r in RerankRun.objects.filter(
            retrieval_run_id=run.retrieval_run_id, status__in=DECLARABLE).exclude(pk=run.pk).order_by("pk")}
        other_runs.choices = [(pk, f"#{pk} {r.provider}:{r.model_id} ({r.method_label})")
                              for pk, r in self.others.items()]

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


def _declaration(run: RerankRun, form: DeclarePoolForm, *, plan_only: bool,
                 user) -> tuple[PoolPlan | DeclareResult, bool]:
    """(plan, False) for a preview, or (DeclareResult, True): one run, or depth-k pooling of several."""
    data = form.cleaned_data
    reviewers = [form.people[pk] for pk in data["reviewers"]]
    others = [form.others[pk] for pk in data["other_runs"]]
    if others and data["explicit"]:
        raise ReviewPoolError("explicit: an explicit list belongs to one run; clear it or the other runs")
    if plan_only:
        ids = [u.pk for u in reviewers] or None
        if others:
            return review_pool_plan_runs(rerank_runs=[run, *others], k=data["k"], reviewer_ids=ids,
                                         reviewers_per_item=data["reviewers_per_item"]), False
        return review_pool_plan(rerank_run=run, k=data["k"], explicit=data["explicit"], reviewer_ids=ids,
                                reviewers_per_item=data["reviewers_per_item"]), False
    if others:
        return review_pool_declare_runs(rerank_runs=[run, *others], k=data["k"], reviewers=reviewers,
                                        reviewers_per_item=data["reviewers_per_item"], created_by=user), True
    return review_pool_declare(rerank_run=run, k=data["k"], explicit=data["explicit"], reviewers=reviewers,
                               reviewers_per_item=data["reviewers_per_item"], created_by=user), True


@perm_required(MANAGE_REVIEWS)
def review_pool_declare_view(request: SignedInHttpRequest, pk: int) -> HttpResponse:
    """The declaration form; "Preview" (or any change, through htmx) shows what each system's figures need."""
    run = _run(pk)
    form = DeclarePoolForm(request.POST or None, run=run)
    error = ""
    preview = None
    plan_only = "preview" in request.POST or "preview" in request.GET
    if request.method == "POST" and form.is_valid():
        try:
            outcome, declared = _declaration(run, form, plan_only=plan_only, user=request.user)
            note = ""
            if declared and form.cleaned_data["import_provisional"]:
                _source, created = provisional_labels_import(suite=run.suite, created_by=request.user)
                note = " Provisional section labels imported." if created else " Provisional labels already present."
        except ReviewPoolError as exc:
            error = str(exc)
        else:
            if declared:
                assert isinstance(outcome, DeclareResult)  # declared: not a plan
                messages.success(request, outcome.message + note)
                return redirect("review:pool", pool_id=outcome.pool.public_id)
            preview = outcome
    if preview is None and not error and not form.is_bound:
        try:
            preview = review_pool_plan(rerank_run=run, k=DEFAULT_K)
        except ReviewPoolError as exc:
            error = str(exc)
    return render(request, "benchmarks/review_pool_declare.html", {
        "run": run, "form": form, "error": error, "preview": preview,
        "pools": _pool_links(run_pools(rerank_run=run), None),
    }, status=400 if error and request.method == "POST" else 200)
