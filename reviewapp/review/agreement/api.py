"""API of a pool's judgments read together (/api/v1/review/pools/<id>/progress|agreement|qrels|judgments/)."""

from __future__ import annotations

import json
import math
from typing import Any

from django.http import HttpResponse
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, OpenApiResponse, extend_schema, extend_schema_field
from rest_framework import serializers
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from reviewapp.core.auth.roles import CanManageReviews
from reviewapp.core.http.api import READ_ERRORS, error_responses
from reviewapp.core.http.api_filters import query_bool
from reviewapp.review.agreement.exports import pool_jsonl, pool_qrels
from reviewapp.review.agreement.selectors import LABEL_RULE, pool_agreement, pool_progress
from reviewapp.review.pools.api import pool_or_404


class ReviewerProgressOut(serializers.Serializer):
    username = serializers.CharField()
    assigned = serializers.IntegerField()
    complete = serializers.IntegerField()
    draft = serializers.IntegerField()
    not_started = serializers.IntegerField()
    stale = serializers.IntegerField()


class QueryProgressOut(serializers.Serializer):
    query_id = serializers.CharField()
    items = serializers.IntegerField()
    assignments = serializers.IntegerField()
    complete = serializers.IntegerField()
    labelled = serializers.IntegerField()


class ProgressOut(serializers.Serializer):
    items = serializers.IntegerField()
    assignments = serializers.IntegerField()
    complete = serializers.IntegerField()
    stale = serializers.IntegerField()
    per_reviewer = ReviewerProgressOut(many=True)
    per_query = QueryProgressOut(many=True)


class ProgressApi(APIView):
    permission_classes = [CanManageReviews]

    @extend_schema(responses={200: ProgressOut, **error_responses(*READ_ERRORS)})
    def get(self, request: Request, pool_id: str) -> Response:
        return Response(ProgressOut(pool_progress(pool=pool_or_404(pool_id))).data)


class PoolUnitIntervalOut(serializers.Serializer):
    """A statistic's percentile bootstrap interval with the units resampled (scoring.stats.bootstrap.UnitBootstrap)."""

    estimate = serializers.FloatField(allow_null=True, source="interval.estimate")
    low = serializers.FloatField(allow_null=True, source="interval.low")
    high = serializers.FloatField(allow_null=True, source="interval.high")
    level = serializers.FloatField(source="interval.level")
    unit = serializers.CharField()
    units = serializers.IntegerField()
    observation = serializers.CharField()
    observations = serializers.IntegerField()
    replicates = serializers.IntegerField()
    seed = serializers.IntegerField()
    undefined_replicates = serializers.IntegerField(source="undefined")
    caveat = serializers.CharField(allow_null=True)

    def to_representation(self, instance):
        data = super().to_representation(instance)
        # NaN is not JSON: an undefined estimate or a missing bound is null.
        return {k: (None if isinstance(v, float) and math.isnan(v) else v) for k, v in data.items()}


class PairOut(serializers.Serializer):
    reviewer_a = serializers.CharField()
    reviewer_b = serializers.CharField()
    n = serializers.IntegerField()
    excluded = serializers.IntegerField()
    raw_agreement = serializers.FloatField(allow_null=True)
    kappa_quadratic = serializers.FloatField(allow_null=True)
    band = serializers.CharField(allow_null=True)
    kappa_interval = PoolUnitIntervalOut()
    raw_agreement_interval = PoolUnitIntervalOut()
    agreements = serializers.IntegerField(help_text="items on which the two grades are equal")
    ac2_quadratic = serializers.FloatField(
        allow_null=True, help_text="Gwet's AC2 with quadratic weights (equals AC1 for a yes/no grade)"
    )
    ac2_interval = PoolUnitIntervalOut()
    ac1 = serializers.FloatField(allow_null=True, help_text="Gwet's AC1, nominal")
    pabak = serializers.FloatField(allow_null=True, help_text="prevalence- and bias-adjusted kappa")
    prevalence = serializers.SerializerMethodField()
    paradox_note = serializers.CharField(help_text="the kappa paradox in one line, or ''")

    @extend_schema_field(serializers.DictField(child=serializers.FloatField()))
    def get_prevalence(self, row: Any) -> dict[str, float]:
        return {str(grade): share for grade, share in row.prevalence}


class AgreementOut(serializers.Serializer):
    grade_type = serializers.CharField()
    pairs = PairOut(many=True)
    alpha = serializers.FloatField(allow_null=True)
    alpha_items = serializers.IntegerField()
    alpha_values = serializers.IntegerField()
    reviewers = serializers.IntegerField()
    alpha_interval = PoolUnitIntervalOut()


class PoolAgreementOut(serializers.Serializer):
    label_rule = serializers.CharField()
    grade_types = AgreementOut(many=True)


class AgreementApi(APIView):
    permission_classes = [CanManageReviews]

    @extend_schema(responses={200: PoolAgreementOut, **error_responses(*READ_ERRORS)})
    def get(self, request: Request, pool_id: str) -> Response:
        pool = pool_or_404(pool_id)
        return Response(
            {"label_rule": LABEL_RULE,
             "grade_types": AgreementOut(pool_agreement(pool=pool), many=True).data}
        )


class QrelsApi(APIView):
    permission_classes = [CanManageReviews]

    @extend_schema(
        parameters=[OpenApiParameter("grade_type", str, description="which grade (default: the kind's first)")],
        responses={(200, "text/plain"): OpenApiResponse(OpenApiTypes.STR, description="TREC qrels"),
                   (400, "text/plain"): OpenApiResponse(OpenApiTypes.STR, description="unknown grade type"),
                   **error_responses(*READ_ERRORS)})
    def get(self, request: Request, pool_id: str) -> HttpResponse:
        pool = pool_or_404(pool_id)
        try:
            body = pool_qrels(pool=pool, grade_type=request.query_params.get("grade_type") or None)
        except ValueError as error:
            return HttpResponse(str(error), status=400, content_type="text/plain; charset=utf-8")
        return HttpResponse(body, content_type="text/plain; charset=utf-8")


class JudgmentsExportApi(APIView):
    permission_classes = [CanManageReviews]

    @extend_schema(
        parameters=[OpenApiParameter("pseudonymise", bool, description="reviewer names replaced by stable ids"),
                    OpenApiParameter("drafts", bool, description="include draft judgments")],
        responses={200: OpenApiResponse({"type": "array", "items": {"type": "object", "additionalProperties": {}}},
                                        description="one object per judgment (the JSON Lines export as a list)"),
                   **error_responses(400, *READ_ERRORS)})
    def get(self, request: Request, pool_id: str) -> Response:
        pool = pool_or_404(pool_id)
        lines = pool_jsonl(
            pool=pool,
            pseudonymise=query_bool(request.query_params, "pseudonymise"),
            include_drafts=query_bool(request.query_params, "drafts"),
        )
        return Response([json.loads(line) for line in lines])
