"""Read-only JSON API of the CUAD label audits under /api/v1/cuad/audits/ (explicit serializers; reviewers get 403)."""

from __future__ import annotations

from django.shortcuts import get_object_or_404
from drf_spectacular.utils import extend_schema
from rest_framework import serializers
from rest_framework.permissions import IsAuthenticated
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from grading.audits.exports import audit_json, audit_summary_json
from grading.audits.models import Audit
from grading.audits.selectors import audit_list, audit_report
from reviewapp.core.access import CanViewReports
from reviewapp.core.api import READ_ERRORS, UnitIntervalOut, error_responses


class AuditSummarySerializer(serializers.Serializer):
    id = serializers.IntegerField()
    run = serializers.IntegerField(allow_null=True)
    model = serializers.CharField(allow_null=True)
    job = serializers.IntegerField(allow_null=True)
    sample = serializers.IntegerField()
    status = serializers.CharField()
    stage = serializers.CharField()
    error = serializers.CharField()
    thresholds = serializers.DictField(child=serializers.FloatField())
    matcher = serializers.CharField()
    candidates = serializers.IntegerField()
    created_at = serializers.CharField()
    finished_at = serializers.CharField(allow_null=True)


class JudgeSerializer(serializers.Serializer):
    slot = serializers.CharField()
    provider = serializers.CharField()
    model_id = serializers.CharField()
    method = serializers.CharField()
    heuristic = serializers.BooleanField()
    label = serializers.CharField()
    params = serializers.DictField()
    ledger = serializers.IntegerField(allow_null=True)


class AgreementSerializer(serializers.Serializer):
    n = serializers.IntegerField()
    excluded = serializers.IntegerField()
    kappa = serializers.FloatField(allow_null=True)
    band = serializers.CharField(allow_null=True)
    raw_agreement = serializers.FloatField(allow_null=True)
    kappa_interval = UnitIntervalOut()
    raw_agreement_interval = UnitIntervalOut()
    agreements = serializers.IntegerField(help_text="candidates on which the two verdicts are equal")
    ac1 = serializers.FloatField(allow_null=True, help_text="Gwet's AC1, robust when one verdict dominates")
    ac1_interval = UnitIntervalOut(allow_null=True)
    pabak = serializers.FloatField(allow_null=True, help_text="prevalence- and bias-adjusted kappa")
    prevalence = serializers.DictField(child=serializers.FloatField(), help_text="each verdict's share")
    paradox_note = serializers.CharField(help_text="the kappa paradox in one line, or ''")
    table = serializers.DictField()


class ImpactRowSerializer(serializers.Serializer):
    key = serializers.CharField()
    label = serializers.CharField()
    credited = serializers.IntegerField()
    precision = serializers.FloatField(allow_null=True)
    recall = serializers.FloatField(allow_null=True)
    f1 = serializers.FloatField(allow_null=True)
    ci = serializers.DictField(child=serializers.ListField(child=serializers.FloatField(allow_null=True)))
    counts = serializers.DictField(child=serializers.IntegerField())


class ImpactSerializer(serializers.Serializer):
    thresholds = serializers.DictField(child=serializers.FloatField())
    bootstrap = serializers.DictField(child=serializers.IntegerField())
    rows = ImpactRowSerializer(many=True)
    per_category = serializers.ListField(child=serializers.DictField())


class VerdictSerializer(serializers.Serializer):
    verdict = serializers.CharField()
    reason = serializers.CharField()
    score = serializers.FloatField(allow_null=True)
    receipt = serializers.IntegerField(allow_null=True)


class HumanSerializer(serializers.Serializer):
    state = serializers.CharField()
    value = serializers.CharField(allow_null=True)
    reason = serializers.CharField()
    completed = serializers.IntegerField()


class CandidateSerializer(serializers.Serializer):
    id = serializers.IntegerField()
    position = serializers.IntegerField()
    extraction = serializers.IntegerField()
    contract = serializers.CharField()
    category = serializers.CharField()
    text = serializers.CharField()
    grounding = serializers.FloatField()
    judges = serializers.DictField(child=VerdictSerializer(allow_null=True))
    both_yes = serializers.BooleanField()
    human = HumanSerializer(allow_null=True)


class AuditReportSerializer(serializers.Serializer):
    audit = AuditSummarySerializer()
    judges = JudgeSerializer(many=True)
    progress = serializers.DictField()
    agreement = AgreementSerializer(allow_null=True)
    impact = ImpactSerializer(allow_null=True)
    review_pool = serializers.CharField(allow_null=True)
    candidates = CandidateSerializer(many=True)


class AuditsApi(APIView):
    """Every label audit, newest first."""

    permission_classes = [IsAuthenticated, CanViewReports]
    serializer_class = AuditSummarySerializer

    @extend_schema(operation_id="cuad_audits_list",
                   responses={200: AuditSummarySerializer(many=True), **error_responses(403)})
    def get(self, request: Request) -> Response:
        data = [audit_summary_json(a) for a in audit_list()]
        return Response(AuditSummarySerializer(data, many=True).data)


class AuditApi(APIView):
    """One audit: judges, progress, agreement (kappa, band, 2x2, raw), impact before/after, candidates."""

    permission_classes = [IsAuthenticated, CanViewReports]
    serializer_class = AuditReportSerializer

    @extend_schema(responses={200: AuditReportSerializer, **error_responses(*READ_ERRORS)})
    def get(self, request: Request, pk: int) -> Response:
        audit = get_object_or_404(Audit.objects.select_related("run", "sample"), pk=pk)
        return Response(AuditReportSerializer(audit_json(audit_report(audit=audit))).data)
