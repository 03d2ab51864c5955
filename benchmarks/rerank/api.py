"""Rerank API: launch a run (admins), progress and per-candidate distributions (explicit fields; stakeholders
and admins read)."""

from __future__ import annotations

from django.shortcuts import get_object_or_404
from drf_spectacular.utils import OpenApiExample, extend_schema, extend_schema_serializer, inline_serializer
from rest_framework import serializers, status
from rest_framework.permissions import IsAuthenticated
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from benchmarks.rerank import services as rerank
from benchmarks.rerank.models import RerankRun
from benchmarks.rerank.questions import DEFAULT_VERSION
from benchmarks.retrieval.models import RetrievalRun
from reviewapp.core.auth.roles import CanLaunchRuns, CanViewReports
from reviewapp.core.http.api import READ_ERRORS, WRITE_ERRORS, error_responses
from reviewapp.jobs.api import JobStateField
from reviewapp.providers.selectors import LedgerSpend


def _request_counts(spend: LedgerSpend) -> dict[str, int]:
    """Requests by what happened to them; only ``sent`` is spend."""
    return {"sent": spend.requests, "answered": spend.answered, "failed": spend.failed, "unknown": spend.unknown,
            "in_flight": spend.in_flight, "not_sent": spend.not_sent}


class RequestCountsOut(serializers.Serializer):
    """Requests by what happened to them; only ``sent`` is spend."""

    sent = serializers.IntegerField()
    answered = serializers.IntegerField()
    failed = serializers.IntegerField()
    unknown = serializers.IntegerField()
    in_flight = serializers.IntegerField()
    not_sent = serializers.IntegerField()


class RerankProgressOut(serializers.Serializer):
    graded = serializers.IntegerField()
    failed = serializers.IntegerField()
    unknown = serializers.IntegerField()
    pending = serializers.IntegerField()
    requests = serializers.IntegerField()
    max_requests = serializers.IntegerField()
    input_tokens = serializers.IntegerField()
    max_input_tokens = serializers.IntegerField()
    requests_by_status = RequestCountsOut()
    reported_input_tokens = serializers.IntegerField()
    estimated_input_tokens = serializers.IntegerField()


class RerankRunLaunchApi(APIView):
    """POST: create and queue a rerank run. Refused (400, nothing created) when the provider is not configured."""

    permission_classes = [IsAuthenticated, CanLaunchRuns]

    @extend_schema_serializer(component_name="RerankRunLaunchIn", examples=[
        OpenApiExample("the local model", value={"retrieval_run": 1, "provider": "local"}, request_only=True)])
    class Input(serializers.Serializer):
        retrieval_run = serializers.IntegerField()
        provider = serializers.ChoiceField(choices=list(rerank.DEFAULT_METHOD))
        model_id = serializers.CharField(required=False, default="", allow_blank=True, max_length=200)
        base_url = serializers.CharField(
            required=False, default="", allow_blank=True, max_length=500,
            help_text="the OpenAI-compatible or Anthropic server for this run (e.g. http://127.0.0.1:11434/v1); "
                      "blank = the server's default; never credentials (keys stay in the server's environment)")
        method = serializers.CharField(required=False, default="", allow_blank=True, max_length=32)
        question_version = serializers.CharField(required=False, default=DEFAULT_VERSION, max_length=80)
        candidates_per_request = serializers.IntegerField(required=False, min_value=1, max_value=30,
                                                          default=rerank.DEFAULT_CANDIDATES_PER_REQUEST)
        # Upper bounds: what the ledger's columns hold.
        max_requests = serializers.IntegerField(required=False, min_value=1, max_value=2**31 - 1)
        max_input_tokens = serializers.IntegerField(required=False, min_value=1, max_value=2**63 - 1,
                                                    default=rerank.DEFAULT_MAX_INPUT_TOKENS)
        concurrency = serializers.IntegerField(required=False, min_value=1, max_value=64)

    @extend_schema_serializer(component_name="RerankRunLaunchedOut")
    class Output(serializers.Serializer):
        id = serializers.IntegerField()
        status = serializers.CharField()
        provider = serializers.CharField()
        model_id = serializers.CharField()
        requests_planned = serializers.IntegerField()
        candidates_planned = serializers.IntegerField()

    @extend_schema(request=Input, responses={202: Output, **error_responses(*WRITE_ERRORS)})
    def post(self, request: Request) -> Response:
        data = self.Input(data=request.data)
        data.is_valid(raise_exception=True)
        v = data.validated_data
        retrieval_run = RetrievalRun.objects.filter(pk=v["retrieval_run"]).first()
        if retrieval_run is None:
            return Response({"errors": [f"retrieval_run: no retrieval run #{v['retrieval_run']}"]},
                            status=status.HTTP_400_BAD_REQUEST)
        try:
            run = rerank.rerank_run_create(
                retrieval_run=retrieval_run, provider=v["provider"], model_id=v["model_id"], method=v["method"],
                question_version=v["question_version"], candidates_per_request=v["candidates_per_request"],
                max_requests=v.get("max_requests"), max_input_tokens=v["max_input_tokens"],
                concurrency=v.get("concurrency"), base_url=v["base_url"].strip(), user=request.user,
            )
        except (rerank.RerankError, ValueError) as error:
            return Response({"errors": [str(error)]}, status=status.HTTP_400_BAD_REQUEST)
        return Response(self.Output(run).data, status=status.HTTP_202_ACCEPTED)


class RerankRunApi(APIView):
    permission_classes = [CanViewReports]

    @extend_schema_serializer(component_name="RerankGradeOut")
    class Grade(serializers.Serializer):
        query = serializers.CharField(source="query.qid")
        candidate = serializers.IntegerField(source="candidate_id")
        attempt = serializers.IntegerField()
        status = serializers.CharField()
        method = serializers.CharField()
        p0 = serializers.FloatField(allow_null=True)
        p1 = serializers.FloatField(allow_null=True)
        p2 = serializers.FloatField(allow_null=True)
        p3 = serializers.FloatField(allow_null=True)
        p_useful = serializers.FloatField(allow_null=True)
        confidence = serializers.FloatField(allow_null=True, help_text="concentration, not P(correct)")
        captured_mass = serializers.FloatField(allow_null=True)
        error = serializers.CharField()

    @extend_schema_serializer(component_name="RerankRunOut")
    class Output(serializers.Serializer):
        id = serializers.IntegerField()
        status = serializers.CharField()
        state = JobStateField()
        provider = serializers.CharField()
        model_id = serializers.CharField()
        method = serializers.CharField(source="method_label")
        question_version = serializers.CharField()
        question_sha256 = serializers.CharField()
        candidates_per_request = serializers.IntegerField()
        requests_planned = serializers.IntegerField()
        candidates_planned = serializers.IntegerField()
        stop_reason = serializers.CharField()
        error = serializers.CharField()
        ledger = serializers.IntegerField(source="ledger_id")
        base_url = serializers.CharField(source="ledger.base_url", help_text="the model server (no credentials)")
        simulated = serializers.BooleanField(help_text="answered by a simulated provider (loopback test server)")

    @extend_schema(responses={
        200: inline_serializer("RerankRunDetailOut", {"run": Output(), "progress": RerankProgressOut(),
                                                      "grades": Grade(many=True)}),
        **error_responses(*READ_ERRORS)})
    def get(self, request: Request, pk: int) -> Response:
        run = get_object_or_404(RerankRun, pk=pk)
        progress = rerank.rerank_run_progress(run=run)
        grades = rerank.rerank_run_grades(run=run)
        return Response({
            "run": self.Output(run).data,
            "progress": {"graded": progress.graded, "failed": progress.failed, "unknown": progress.unknown,
                         "pending": progress.pending, "requests": progress.spend.requests,
                         "max_requests": progress.spend.max_requests, "input_tokens": progress.spend.input_tokens,
                         "max_input_tokens": progress.spend.max_input_tokens,
                         "requests_by_status": _request_counts(progress.spend),
                         "reported_input_tokens": progress.spend.reported_input_tokens,
                         "estimated_input_tokens": progress.spend.estimated_input_tokens},
            "grades": self.Grade(grades, many=True).data,
        })
