"""Read-only API of keyword retrieval runs, with explicit serializers."""

from __future__ import annotations

from django.shortcuts import get_object_or_404
from drf_spectacular.utils import extend_schema, extend_schema_view
from rest_framework import generics, serializers
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from benchmarks.retrieval import selectors
from benchmarks.retrieval.models import RetrievalRun
from reviewapp.core.auth.roles import CanViewReports
from reviewapp.core.http.api import READ_ERRORS, error_responses


class RunOut(serializers.ModelSerializer):
    suite = serializers.CharField(source="suite.__str__")

    class Meta:
        model = RetrievalRun
        fields = ["id", "suite", "suite_id", "engine", "configuration", "configuration_detail", "k", "passage_rule",
                  "index_documents", "status", "error", "started_at", "finished_at", "candidates_sha256"]


class RetrievalCandidateOut(serializers.Serializer):
    rank = serializers.IntegerField(help_text="1-based keyword order")
    citation = serializers.CharField()
    provision = serializers.IntegerField()
    passage_sha256 = serializers.CharField()
    score = serializers.FloatField(help_text="engine score, higher is better")
    via_fallback = serializers.BooleanField()
    is_target = serializers.BooleanField()


class RetrievalResultOut(serializers.Serializer):
    qid = serializers.CharField()
    kind = serializers.CharField()
    split = serializers.CharField()
    family = serializers.CharField()
    method = serializers.CharField()
    status = serializers.CharField()
    error = serializers.CharField()
    primary_expression = serializers.CharField()
    primary_count = serializers.IntegerField()
    fallback_used = serializers.BooleanField()
    fallback_expression = serializers.CharField()
    fallback_count = serializers.IntegerField()
    parsed_citation = serializers.CharField()
    targets_total = serializers.IntegerField()
    targets_found = serializers.ListField(child=serializers.CharField())
    coverage = serializers.FloatField(allow_null=True)
    candidates = RetrievalCandidateOut(many=True)


class RunDetailOut(RunOut):
    results = RetrievalResultOut(many=True)

    class Meta(RunOut.Meta):
        fields = [*RunOut.Meta.fields, "results"]


@extend_schema_view(get=extend_schema(responses={200: RunOut(many=True), **error_responses(400, 403)}))
class RunList(generics.ListAPIView):
    permission_classes = [CanViewReports]
    serializer_class = RunOut
    queryset = RetrievalRun.objects.select_related("suite").order_by("-id")


class RunDetail(APIView):
    """A run with every query's result and candidates in keyword order."""

    permission_classes = [CanViewReports]

    @extend_schema(responses={200: RunDetailOut, **error_responses(*READ_ERRORS)})
    def get(self, request: Request, pk: int) -> Response:
        run = get_object_or_404(RetrievalRun.objects.select_related("suite"), pk=pk)
        results = [{
            "qid": row.query.qid, "kind": row.query.kind, "split": row.query.split,
            "family": row.query.family.name if row.query.family else "",
            "method": row.result.method, "status": row.result.status, "error": row.result.error,
            "primary_expression": row.result.primary_expression, "primary_count": row.result.primary_count,
            "fallback_used": row.result.fallback_used, "fallback_expression": row.result.fallback_expression,
            "fallback_count": row.result.fallback_count, "parsed_citation": row.result.parsed_citation,
            "targets_total": row.result.targets_total, "targets_found": row.result.targets_found,
            "coverage": row.result.coverage,
            "candidates": [{"rank": c.rank, "citation": c.citation, "provision": c.provision_id,
                            "passage_sha256": c.passage_sha256, "score": c.score, "via_fallback": c.via_fallback,
                            "is_target": c.is_target} for c in row.candidates],
        } for row in selectors.retrieval_run_detail(run=run)]
        return Response({**RunOut(run).data, "results": results})
