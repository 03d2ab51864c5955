"""Read-only API of benchmark reports (``CanViewReports``): the same figures as the page and its JSON export."""

from __future__ import annotations

from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework import serializers
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from benchmarks.reports.exports import report_as_json
from benchmarks.reports.params import MAX_REPLICATES, MIN_REPLICATES, ReportParameterError
from benchmarks.reports.selectors import report_build, report_request_parse
from reviewapp.core.access import CanViewReports
from scoring.ir.family_bootstrap import DEFAULT_REPLICATES, DEFAULT_SEED


class ReportOut(serializers.Serializer):
    """The report, section by section; each section's structure is documented in benchmarks/reports/exports.py."""

    schema = serializers.CharField()
    population = serializers.CharField()
    caveats = serializers.ListField(child=serializers.CharField())
    coverage_note = serializers.CharField()
    primary_endpoint = serializers.JSONField()
    systems = serializers.JSONField()
    bootstrap = serializers.JSONField()
    splits = serializers.JSONField()
    secondary = serializers.JSONField()
    queries = serializers.JSONField()
    failures = serializers.JSONField()
    fallbacks = serializers.JSONField()
    controls = serializers.JSONField()
    reproducibility = serializers.JSONField()


class ReportError(serializers.Serializer):
    error = serializers.CharField()


PARAMETERS = [
    OpenApiParameter(
        "replicates", int,
        description=f"bootstrap replicates, {MIN_REPLICATES}-{MAX_REPLICATES} (default {DEFAULT_REPLICATES})"),
    OpenApiParameter("seed", int, description=f"bootstrap seed (default {DEFAULT_SEED})"),
    OpenApiParameter("secondary", str, description="'auto' (default), 'none' or a retrieval run id"),
]


class _ReportApi(APIView):
    permission_classes = [CanViewReports]
    source = ""

    @extend_schema(parameters=PARAMETERS, responses={200: ReportOut, 400: ReportError})
    def get(self, request: Request, pk: int) -> Response:
        try:
            parsed = report_request_parse(source=self.source, pk=pk, params=request.query_params)
            report = report_build(run=parsed.run, rerank=parsed.rerank, secondary=parsed.secondary,
                                  replicates=parsed.replicates, seed=parsed.seed)
        except ReportParameterError as exc:
            return Response(ReportError({"error": str(exc)}).data, status=400)
        return Response(ReportOut(report_as_json(report)).data)


class RerankReportApi(_ReportApi):
    """Report of a rerank run: keyword order vs reranked order of its retrieval run's candidates."""

    source = "rerank"


class RetrievalReportApi(_ReportApi):
    """Report of a retrieval run alone: the keyword order (no rerank)."""

    source = "retrieval"
