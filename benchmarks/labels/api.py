"""Read-only API of human-label metrics, calibration and review pools of a rerank run (``CanViewReports``).

The same figures as the pages and their JSON exports; explicit serializers.
"""

from __future__ import annotations

from django.shortcuts import get_object_or_404
from drf_spectacular.utils import OpenApiParameter, extend_schema, extend_schema_serializer
from rest_framework import serializers
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from benchmarks.labels.metrics import DEFAULT_REPLICATES, DEFAULT_SEED, calibration_as_json, human_metrics_as_json
from benchmarks.labels.pools import (
    DEFAULT_K,
    DEFAULT_REVIEWERS,
    MAX_K,
    ReviewPoolError,
    review_pool_plan_runs,
)
from benchmarks.labels.selectors import is_synthetic, run_pools
from benchmarks.labels.views import calibration_build, human_metrics_build
from benchmarks.reports.models import HeldoutExposure
from benchmarks.reports.params import MAX_REPLICATES, MAX_SEED, MIN_REPLICATES, ReportParameterError
from benchmarks.rerank.models import RerankRun
from reviewapp.core.auth.roles import CanManageReviews, CanViewReports
from reviewapp.core.http.api import READ_ERRORS, BootstrapOut, ErrorOut, UnitIntervalOut, error_responses
from reviewapp.core.http.api_filters import id_parameter, number_parameter
from reviewapp.review.pools.services import MAX_REVIEWERS_PER_ITEM


class ReviewerAgreementOut(serializers.Serializer):
    grade_type = serializers.CharField()
    reviewers = serializers.IntegerField()
    items_with_two_grades = serializers.IntegerField()
    grades = serializers.IntegerField()
    krippendorff_alpha_ordinal = UnitIntervalOut()


# Named apart from the review engine's own pool summary (reviewapp.review.pools.api.PoolOut), a different shape.
@extend_schema_serializer(component_name="LabelPoolOut")
class PoolOut(serializers.Serializer):
    public_id = serializers.CharField()
    name = serializers.CharField()
    declared_rule = serializers.CharField()
    declared_params = serializers.JSONField()
    reviewers_per_item = serializers.IntegerField()
    items_declared = serializers.IntegerField()
    items_labelled = serializers.IntegerField()
    label_states = serializers.DictField(child=serializers.IntegerField())
    complete_judgments = serializers.IntegerField()
    stale_judgments = serializers.IntegerField()
    selected = serializers.BooleanField()
    complete = serializers.BooleanField()
    synthetic = serializers.BooleanField()
    label_rule = serializers.CharField()


class HumanSummaryRowOut(serializers.Serializer):
    split = serializers.CharField()
    metric = serializers.CharField()
    system = serializers.CharField()
    estimate = serializers.FloatField(allow_null=True)
    low = serializers.FloatField(allow_null=True)
    high = serializers.FloatField(allow_null=True)
    included = serializers.IntegerField()
    excluded = serializers.IntegerField()
    families = serializers.IntegerField(allow_null=True)


class HumanQueryRowOut(serializers.Serializer):
    qid = serializers.CharField()
    split = serializers.CharField()
    family = serializers.CharField()
    keyword_P_at_5 = serializers.FloatField(allow_null=True, source="keyword_P@5")
    reranked_P_at_5 = serializers.FloatField(allow_null=True, source="reranked_P@5")
    keyword_nDCG_at_5 = serializers.FloatField(allow_null=True, source="keyword_nDCG@5")
    reranked_nDCG_at_5 = serializers.FloatField(allow_null=True, source="reranked_nDCG@5")
    keyword_top5_labelled = serializers.IntegerField()
    reranked_top5_labelled = serializers.IntegerField()
    pool_members = serializers.IntegerField()
    pool_labelled = serializers.IntegerField()


class HumanMetricsOut(serializers.Serializer):
    schema = serializers.CharField()
    run = serializers.CharField()
    pool = PoolOut(allow_null=True)
    notes = serializers.ListField(child=serializers.CharField())
    bootstrap = BootstrapOut()
    summary = HumanSummaryRowOut(many=True)
    queries = HumanQueryRowOut(many=True)
    reviewer_agreement = ReviewerAgreementOut(allow_null=True)


class CalibrationSummaryRowOut(serializers.Serializer):
    split = serializers.CharField()
    declared = serializers.IntegerField()
    included = serializers.IntegerField()
    excluded_no_label = serializers.IntegerField()
    excluded_no_model_probability = serializers.IntegerField()
    brier = serializers.FloatField(allow_null=True)
    brier_low = serializers.FloatField(allow_null=True)
    brier_high = serializers.FloatField(allow_null=True)
    ece = serializers.FloatField(allow_null=True)
    ece_low = serializers.FloatField(allow_null=True)
    ece_high = serializers.FloatField(allow_null=True)
    interval_unit = serializers.CharField()
    interval_units = serializers.IntegerField()
    interval_replicates = serializers.IntegerField()
    interval_seed = serializers.IntegerField()
    interval_undefined_replicates = serializers.IntegerField()
    interval_caveat = serializers.CharField(allow_null=True)
    diagnostic_threshold = serializers.FloatField()
    at_or_above_threshold = serializers.IntegerField()
    at_or_above_judged_useful = serializers.IntegerField()


class ReliabilityRowOut(serializers.Serializer):
    split = serializers.CharField()
    bin = serializers.IntegerField()
    low = serializers.FloatField()
    high = serializers.FloatField()
    count = serializers.IntegerField()
    mean_predicted = serializers.FloatField(allow_null=True)
    observed_rate = serializers.FloatField(allow_null=True)


class AgreementRowOut(serializers.Serializer):
    split = serializers.CharField()
    bin = serializers.IntegerField()
    low = serializers.FloatField()
    high = serializers.FloatField()
    count = serializers.IntegerField()
    mean_confidence = serializers.FloatField(allow_null=True)
    exact_agreement = serializers.FloatField(allow_null=True)


class CalibrationItemOut(serializers.Serializer):
    qid = serializers.CharField()
    docid = serializers.CharField()
    split = serializers.CharField()
    p0 = serializers.FloatField(allow_null=True)
    p1 = serializers.FloatField(allow_null=True)
    p2 = serializers.FloatField(allow_null=True)
    p3 = serializers.FloatField(allow_null=True)
    p_useful = serializers.FloatField(allow_null=True)
    confidence = serializers.FloatField(allow_null=True)
    human_grade = serializers.IntegerField(allow_null=True)


class CalibrationOut(serializers.Serializer):
    schema = serializers.CharField()
    run = serializers.CharField()
    pool = PoolOut(allow_null=True)
    caveats = serializers.ListField(child=serializers.CharField())
    notes = serializers.ListField(child=serializers.CharField())
    bootstrap = BootstrapOut()
    definitions = serializers.DictField(child=serializers.CharField())
    summary = CalibrationSummaryRowOut(many=True)
    reliability = ReliabilityRowOut(many=True)
    agreement = AgreementRowOut(many=True)
    items = CalibrationItemOut(many=True)


class ReviewPoolOut(serializers.Serializer):
    public_id = serializers.CharField()
    name = serializers.CharField()
    declared_rule = serializers.CharField()
    declared_params = serializers.JSONField()
    reviewers_per_item = serializers.IntegerField()
    synthetic = serializers.BooleanField()
    created_at = serializers.DateTimeField()


POOL_PARAMETER = OpenApiParameter("pool", str, description="review pool public id (default: the newest pool of "
                                  "people's judgments declared from this run)")
BOOTSTRAP_PARAMETERS = [
    number_parameter(
        "replicates", minimum=MIN_REPLICATES, maximum=MAX_REPLICATES,
        description=f"bootstrap replicates, {MIN_REPLICATES}-{MAX_REPLICATES} (default {DEFAULT_REPLICATES})"),
    number_parameter("seed", minimum=0, maximum=MAX_SEED, description=f"bootstrap seed (default {DEFAULT_SEED})"),
]


# 400: a pool or bootstrap parameter refused (one sentence); 404: no such rerank run or pool.
LABEL_ERRORS = error_responses(400, *READ_ERRORS, bad_request=ErrorOut)


def _run(pk: int) -> RerankRun:
    return get_object_or_404(RerankRun.objects.select_related("suite", "retrieval_run", "ledger"), pk=pk)


class HumanMetricsApi(APIView):
    """Judged P@5 and pooled nDCG@5 per split of a rerank run's keyword and reranked orders; reviewers' alpha."""

    permission_classes = [CanViewReports]

    @extend_schema(parameters=[POOL_PARAMETER, *BOOTSTRAP_PARAMETERS], responses={200: HumanMetricsOut, **LABEL_ERRORS})
    def get(self, request: Request, pk: int) -> Response:
        try:
            metrics, _ = human_metrics_build(run=_run(pk), params=request.query_params,
                                             purpose=HeldoutExposure.Purpose.API, user=request.user)
        except ReportParameterError as exc:
            return Response(ErrorOut({"error": str(exc)}).data, status=400)
        return Response(HumanMetricsOut(human_metrics_as_json(metrics)).data)


class CalibrationApi(APIView):
    """Brier and ECE with intervals over query families, reliability bins, confidence vs agreement, diagnostic."""

    permission_classes = [CanViewReports]

    @extend_schema(parameters=[POOL_PARAMETER, *BOOTSTRAP_PARAMETERS], responses={200: CalibrationOut, **LABEL_ERRORS})
    def get(self, request: Request, pk: int) -> Response:
        try:
            calibration, _ = calibration_build(run=_run(pk), params=request.query_params,
                                               purpose=HeldoutExposure.Purpose.API, user=request.user)
        except ReportParameterError as exc:
            return Response(ErrorOut({"error": str(exc)}).data, status=400)
        return Response(CalibrationOut(calibration_as_json(calibration)).data)


class ReviewPoolListApi(APIView):
    """Review pools declared from a rerank run, newest first."""

    permission_classes = [CanViewReports]

    @extend_schema(responses={200: ReviewPoolOut(many=True), **error_responses(*READ_ERRORS)})
    def get(self, request: Request, pk: int) -> Response:
        pools = run_pools(rerank_run=_run(pk))
        return Response(ReviewPoolOut([
            {"public_id": p.public_id, "name": p.name, "declared_rule": p.declared_rule,
             "declared_params": p.declared_params, "reviewers_per_item": p.reviewers_per_item,
             "synthetic": is_synthetic(p), "created_at": p.created_at} for p in pools
        ], many=True).data)


class PlanSystemOut(serializers.Serializer):
    system = serializers.CharField()
    # A declared field, which DRF's metaclass takes off the class: it shadows no attribute.
    label = serializers.CharField()  # type: ignore[assignment]
    p5_judgments = serializers.FloatField(help_text="judgments still needed before its judged P@5 is complete")
    judgments = serializers.FloatField(help_text="judgments still needed before all its figures are complete")


class ReviewPoolPlanOut(serializers.Serializer):
    rule = serializers.CharField()
    k = serializers.IntegerField(allow_null=True)
    declared_rule = serializers.CharField()
    items = serializers.IntegerField()
    items_needing_work = serializers.IntegerField()
    items_judged_enough = serializers.IntegerField()
    tiers = serializers.IntegerField()
    systems = PlanSystemOut(many=True)
    total_p5_judgments = serializers.FloatField()
    total_judgments = serializers.FloatField()
    mean_judgments = serializers.FloatField()
    mean_judgments_shuffled = serializers.FloatField()
    figures_out_of_reach = serializers.IntegerField(
        help_text="figures needing items outside the pool (k below 5): never complete from it")


class ReviewPoolPlanApi(APIView):
    """What declaring a pool from this run (and ``with`` runs of the same retrieval run) would need; no writes.

    Depth-k pooling of keyword order and every run; per system the judgments its figures still need (judge once:
    completed judgments of the same texts count), the total, and the work order's tiers.
    """

    permission_classes = [CanManageReviews]

    @extend_schema(parameters=[
        id_parameter("with", many=True, description="other rerank runs of the same retrieval run"),
        number_parameter("k", minimum=1, maximum=MAX_K, description=f"depth k, 1-{MAX_K} (default {DEFAULT_K})"),
        number_parameter("reviewers_per_item", minimum=1, maximum=MAX_REVIEWERS_PER_ITEM,
                         description=f"default {DEFAULT_REVIEWERS}"),
    ], responses={200: ReviewPoolPlanOut, **LABEL_ERRORS})
    def get(self, request: Request, pk: int) -> Response:
        run = _run(pk)
        try:
            others = [int(x) for x in request.query_params.getlist("with")]
            k = int(request.query_params.get("k") or DEFAULT_K)
            per_item = int(request.query_params.get("reviewers_per_item") or DEFAULT_REVIEWERS)
        except ValueError:
            return Response(ErrorOut({"error": "with, k and reviewers_per_item must be whole numbers"}).data,
                            status=400)
        found = list(RerankRun.objects.select_related("suite").filter(pk__in=others))
        missing = sorted(set(others) - {r.pk for r in found})
        if missing:
            return Response(ErrorOut({"error": f"with: no rerank run {missing}"}).data, status=400)
        if not 1 <= per_item <= MAX_REVIEWERS_PER_ITEM:
            return Response(ErrorOut({"error": "reviewers_per_item: out of range"}).data, status=400)
        try:
            plan = review_pool_plan_runs(rerank_runs=[run, *found], k=k, reviewers_per_item=per_item)
        except ReviewPoolError as exc:
            return Response(ErrorOut({"error": str(exc)}).data, status=400)
        work = plan.work
        assert work is not None  # a plan of several runs always prices its work
        return Response(ReviewPoolPlanOut({
            "rule": plan.rule, "k": plan.k, "declared_rule": plan.declared_rule, "items": len(plan.items),
            "items_needing_work": work.items_needing_work, "items_judged_enough": work.items_judged_enough,
            "tiers": work.tiers, "total_p5_judgments": work.needed_p5["total"], "total_judgments": work.needed["total"],
            "systems": [{"system": key, "label": label, "p5_judgments": p5, "judgments": needed}
                        for key, label, p5, needed in work.rows()],
            "mean_judgments": work.mean_judgments, "mean_judgments_shuffled": work.mean_judgments_shuffled,
            "figures_out_of_reach": work.figures_out_of_reach,
        }).data)

