"""Read-only API of benchmark reports (``CanViewReports``): the same figures as the page and its JSON export."""

from __future__ import annotations

from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework import serializers
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from benchmarks.reports.exports import report_as_json
from benchmarks.reports.exposure import exposure_record, leaderboard_exposure_record
from benchmarks.reports.leaderboard import leaderboard_as_json
from benchmarks.reports.models import HeldoutExposure
from benchmarks.reports.params import MAX_REPLICATES, MIN_REPLICATES, ReportParameterError
from benchmarks.reports.selectors import (
    leaderboard_build,
    leaderboard_request_parse,
    report_build,
    report_request_parse,
)
from reviewapp.core.access import CanViewReports
from scoring.ir.family_bootstrap import DEFAULT_REPLICATES, DEFAULT_SEED


class ReportOut(serializers.Serializer):
    """The report, section by section; each section's structure is documented in benchmarks/reports/exports.py."""

    schema = serializers.CharField()
    conclusion = serializers.JSONField(help_text="one quotable sentence from the primary endpoint and its interval")
    coverage = serializers.JSONField(help_text="what the rerank run covered: banner, counts, queries left out")
    heldout_exposure = serializers.JSONField(
        allow_null=True, help_text="the held-out ledger: times and configurations scored, freshness, this entry")
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
        report = exposure_record(report, purpose=HeldoutExposure.Purpose.API, user=request.user)
        return Response(ReportOut(report_as_json(report)).data)


class RerankReportApi(_ReportApi):
    """Report of a rerank run: keyword order vs reranked order of its retrieval run's candidates."""

    source = "rerank"


class RetrievalReportApi(_ReportApi):
    """Report of a retrieval run alone: the keyword order (no rerank)."""

    source = "retrieval"


class StatuteLeaderboardOut(serializers.Serializer):
    """The statute leaderboard; each section's structure is documented in benchmarks/reports/leaderboard.py."""

    schema = serializers.CharField()
    suite = serializers.JSONField()
    retrieval = serializers.JSONField()
    systems = serializers.JSONField(help_text="keyword order and each rerank run: coverage, why withheld, ledger")
    bootstrap = serializers.JSONField()
    multiple_comparisons = serializers.JSONField(help_text="the rule behind p_adjusted, and its family of pairs")
    primary_endpoint = serializers.JSONField()
    labels = serializers.JSONField(allow_null=True)
    notes = serializers.ListField(child=serializers.CharField())
    splits = serializers.JSONField(help_text="per split: each system's means, its difference against keyword "
                                             "order, human-label figures or why not, and every pair")


LEADERBOARD_PARAMETERS = [
    *PARAMETERS[:2],
    OpenApiParameter("rerank", int, many=True,
                     description="rerank run ids of this retrieval run (repeat or comma-separate); default: all"),
]


class StatuteLeaderboardApi(APIView):
    """Statute leaderboard of a retrieval run: its rerank runs against keyword order, on the same candidates."""

    permission_classes = [CanViewReports]

    @extend_schema(parameters=LEADERBOARD_PARAMETERS, responses={200: StatuteLeaderboardOut, 400: ReportError})
    def get(self, request: Request, pk: int) -> Response:
        try:
            parsed = leaderboard_request_parse(pk=pk, params=request.query_params)
            board = leaderboard_build(run=parsed.run, reranks=parsed.reranks, replicates=parsed.replicates,
                                      seed=parsed.seed)
        except ReportParameterError as exc:
            return Response(ReportError({"error": str(exc)}).data, status=400)
        board = leaderboard_exposure_record(board, purpose=HeldoutExposure.Purpose.API, user=request.user)
        return Response(StatuteLeaderboardOut(leaderboard_as_json(board)).data)
