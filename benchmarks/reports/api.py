"""Read-only API of benchmark reports (``CanViewReports``): the same figures as the page and its JSON export."""

from __future__ import annotations

from django.http import Http404, HttpResponse
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, OpenApiResponse, extend_schema
from rest_framework import serializers
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from benchmarks.reports.exports.leaderboard import leaderboard_as_json
from benchmarks.reports.exports.report import report_as_json, report_text_export
from benchmarks.reports.exposure import exposure_record, known_targets_exposure_record, leaderboard_exposure_record
from benchmarks.reports.figures import Report
from benchmarks.reports.models import HeldoutExposure
from benchmarks.reports.params import MAX_REPLICATES, MAX_SEED, MIN_REPLICATES, ReportParameterError
from benchmarks.reports.selectors import (
    leaderboard_build,
    leaderboard_request_parse,
    report_build,
    report_request_parse,
)
from reviewapp.core.auth.roles import CanViewReports
from reviewapp.core.http.api import READ_ERRORS, BootstrapOut, ErrorOut, error_responses
from reviewapp.core.http.api_filters import id_parameter, number_parameter
from scoring.ir.family_bootstrap import DEFAULT_REPLICATES, DEFAULT_SEED


class ConclusionOut(serializers.Serializer):
    """The report's headline (``benchmarks.reports.reading.conclusion.Conclusion.as_json``)."""

    kind = serializers.CharField()
    sentence = serializers.CharField()
    comparison = serializers.CharField(allow_blank=True, help_text="the primary figures with their intervals")


class ReportIntervalOut(serializers.Serializer):
    """An estimate with its percentile interval (null where undefined)."""

    estimate = serializers.FloatField(allow_null=True)
    low = serializers.FloatField(allow_null=True)
    high = serializers.FloatField(allow_null=True)
    note = serializers.CharField(allow_blank=True, required=False,
                                 help_text="why there is no interval (too few query families), or few units")


class PrimaryEndpointOut(serializers.Serializer):
    split = serializers.CharField()
    metric = serializers.CharField()
    keyword = ReportIntervalOut(allow_null=True)
    reranked = ReportIntervalOut(allow_null=True)
    difference_reranked_minus_keyword = ReportIntervalOut(allow_null=True)


class ReportSystemsOut(serializers.Serializer):
    keyword = serializers.CharField()
    reranked = serializers.CharField(allow_null=True)
    secondary = serializers.CharField(allow_null=True)


class MetricComparisonOut(serializers.Serializer):
    keyword = ReportIntervalOut(allow_null=True)
    reranked = ReportIntervalOut(allow_null=True)
    difference = ReportIntervalOut(allow_null=True)


class ReportSplitOut(serializers.Serializer):
    split = serializers.CharField()
    # A declared field, which DRF's metaclass takes off the class: it shadows no attribute.
    label = serializers.CharField()  # type: ignore[assignment]
    queries = serializers.IntegerField()
    families = serializers.IntegerField()
    retrieval_fallbacks = serializers.IntegerField()
    retrieval_failures = serializers.IntegerField()
    rerank_failures = serializers.IntegerField()
    coverage = ReportIntervalOut(allow_null=True)
    coverage_included = serializers.IntegerField()
    metrics = serializers.DictField(child=MetricComparisonOut(), help_text="by metric name (P@5, nDCG@5...)")


class ReportOut(serializers.Serializer):
    """The report, section by section; each section's structure is documented in reports/exports/report.py."""

    schema = serializers.CharField()
    conclusion = ConclusionOut(help_text="one quotable sentence from the primary endpoint and its interval")
    coverage = serializers.JSONField(help_text="what the rerank run covered: banner, counts, queries left out")
    heldout_exposure = serializers.JSONField(
        allow_null=True,
        help_text="the held-out ledger: times, configurations and looks scored, freshness, the comparison this "
                  "configuration was declared in (or the earlier one it was added after), this entry")
    population = serializers.CharField()
    caveats = serializers.ListField(child=serializers.CharField())
    coverage_note = serializers.CharField()
    primary_endpoint = PrimaryEndpointOut()
    systems = ReportSystemsOut()
    bootstrap = BootstrapOut()
    splits = ReportSplitOut(many=True)
    secondary = serializers.JSONField()
    queries = serializers.JSONField()
    failures = serializers.JSONField()
    fallbacks = serializers.JSONField()
    controls = serializers.JSONField()
    reproducibility = serializers.JSONField()


# 400: the report's parameters refused (one sentence); 404: no such run.
REPORT_ERRORS = error_responses(400, *READ_ERRORS, bad_request=ErrorOut)

PARAMETERS = [
    number_parameter(
        "replicates", minimum=MIN_REPLICATES, maximum=MAX_REPLICATES,
        description=f"bootstrap replicates, {MIN_REPLICATES}-{MAX_REPLICATES} (default {DEFAULT_REPLICATES})"),
    number_parameter("seed", minimum=0, maximum=MAX_SEED, description=f"bootstrap seed (default {DEFAULT_SEED})"),
    OpenApiParameter("secondary", str, description="'auto' (default), 'none' or a retrieval run id"),
]


def _api_report(request: Request, *, source: str, pk: int) -> Report:
    """The report the query parameters ask for, its held-out reading recorded (raises ReportParameterError)."""
    parsed = report_request_parse(source=source, pk=pk, params=request.query_params)
    report = report_build(run=parsed.run, rerank=parsed.rerank, secondary=parsed.secondary,
                          replicates=parsed.replicates, seed=parsed.seed)
    return exposure_record(report, purpose=HeldoutExposure.Purpose.API, user=request.user)


class _ReportApi(APIView):
    permission_classes = [CanViewReports]
    source = ""

    @extend_schema(parameters=PARAMETERS, responses={200: ReportOut, **REPORT_ERRORS})
    def get(self, request: Request, pk: int) -> Response:
        try:
            report = _api_report(request, source=self.source, pk=pk)
        except ReportParameterError as exc:
            return Response(ErrorOut({"error": str(exc)}).data, status=400)
        return Response(ReportOut(report_as_json(report)).data)


class RerankReportApi(_ReportApi):
    """Report of a rerank run: keyword order vs reranked order of its retrieval run's candidates."""

    source = "rerank"


class RetrievalReportApi(_ReportApi):
    """Report of a retrieval run alone: the keyword order (no rerank)."""

    source = "retrieval"


# The report's TREC files (the page's exports of the same name): runs of each system and the label files.
TREC_EXPORTS = ("keyword.run", "reranked.run", "secondary.run", "qrels.txt", "families.txt")


class _ReportTrecApi(APIView):
    permission_classes = [CanViewReports]
    source = ""

    @extend_schema(
        parameters=[OpenApiParameter("export", str, OpenApiParameter.PATH, enum=TREC_EXPORTS,
                                     description="a system's TREC run file, the TREC qrels or the query families"),
                    *PARAMETERS],
        responses={(200, "text/plain"): OpenApiResponse(OpenApiTypes.STR, description="the TREC file"),
                   **REPORT_ERRORS})
    def get(self, request: Request, pk: int, export: str) -> HttpResponse | Response:
        if export not in TREC_EXPORTS:
            raise Http404(f"unknown export {export!r}; one of {', '.join(TREC_EXPORTS)}")
        try:
            report = _api_report(request, source=self.source, pk=pk)
        except ReportParameterError as exc:
            return Response(ErrorOut({"error": str(exc)}).data, status=400)
        body = report_text_export(report, export)
        if body is None:
            raise Http404(f"this report has no {export.removesuffix('.run')} system")
        return HttpResponse(body, content_type="text/plain; charset=utf-8")


class RerankReportTrecApi(_ReportTrecApi):
    """A TREC file of a rerank run's report: the same bytes as the report page's export of that name."""

    source = "rerank"


class RetrievalReportTrecApi(_ReportTrecApi):
    """A TREC file of a retrieval run's report (keyword order alone)."""

    source = "retrieval"


class StatuteLeaderboardOut(serializers.Serializer):
    """The statute leaderboard; each section's structure is documented in benchmarks/reports/exports/leaderboard.py."""

    schema = serializers.CharField()
    verdict = serializers.JSONField(help_text="the one sentence to quote across the systems (kind, sentence, best)")
    suite = serializers.JSONField()
    retrieval = serializers.JSONField()
    systems = serializers.JSONField(help_text="keyword order and each rerank run: coverage, why withheld, ledger")
    bootstrap = serializers.JSONField()
    multiple_comparisons = serializers.JSONField(help_text="the rule behind p_adjusted, and its family of pairs")
    primary_endpoint = serializers.JSONField()
    labels = serializers.JSONField(allow_null=True)
    notes = serializers.ListField(child=serializers.CharField())
    known_targets = serializers.JSONField(
        allow_null=True, help_text="the suite's finished retrieval runs compared on its known targets (Hit@k, RR, "
                                   "coverage), each on its own candidates: systems, verdict, per split means and pairs")
    splits = serializers.JSONField(help_text="per split: each system's means, its difference against keyword "
                                             "order, human-label figures or why not, and every pair")


LEADERBOARD_PARAMETERS = [
    *PARAMETERS[:2],
    id_parameter("rerank", many=True,
                     description="rerank run ids of this retrieval run (repeat or comma-separate); default: all"),
    OpenApiParameter("hybrid", str, many=True,
                     description="rerank run ids (among those shown) whose reciprocal rank fusion with keyword order "
                                 "is also a system, or 'none'; default: every shown run of the local model"),
]


class StatuteLeaderboardApi(APIView):
    """Statute leaderboard of a retrieval run: its rerank runs against keyword order, on the same candidates."""

    permission_classes = [CanViewReports]

    @extend_schema(parameters=LEADERBOARD_PARAMETERS, responses={200: StatuteLeaderboardOut, **REPORT_ERRORS})
    def get(self, request: Request, pk: int) -> Response:
        try:
            parsed = leaderboard_request_parse(pk=pk, params=request.query_params)
            board = leaderboard_build(run=parsed.run, reranks=parsed.reranks, replicates=parsed.replicates,
                                      seed=parsed.seed, hybrids=parsed.hybrids)
        except ReportParameterError as exc:
            return Response(ErrorOut({"error": str(exc)}).data, status=400)
        board = leaderboard_exposure_record(board, purpose=HeldoutExposure.Purpose.API, user=request.user)
        board = known_targets_exposure_record(board, purpose=HeldoutExposure.Purpose.API, user=request.user)
        return Response(StatuteLeaderboardOut(leaderboard_as_json(board)).data)
