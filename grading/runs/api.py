"""Runs and jobs JSON API under /api/v1/cuad/runs/ and /api/v1/cuad/jobs/ (explicit serializers; reviewers get 403)."""

from __future__ import annotations

import json

from django.shortcuts import get_object_or_404
from drf_spectacular.utils import OpenApiExample, extend_schema, extend_schema_field, extend_schema_serializer
from rest_framework import serializers, status
from rest_framework.permissions import IsAuthenticated
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from grading.dataset.models import Sample
from grading.dataset.selectors import sample_default
from grading.responses import dataset_or_404, refused
from grading.runs import jobs
from grading.runs.models import ConsoleJob, ExtractionRun
from grading.runs.run_format import RunFormatError
from grading.runs.selectors import runs_list
from grading.scorecard.api import ScopeOut
from reviewapp.core.auth.roles import CanLaunchRuns, CanViewReports
from reviewapp.core.http.api import READ_ERRORS, WRITE_ERRORS, error_responses
from reviewapp.jobs.api import JobStateField


class ExtractionRunOut(serializers.Serializer):
    id = serializers.IntegerField(source="run.pk")
    model = serializers.CharField(source="run.model")
    source_name = serializers.CharField(source="run.source_name")
    source_format = serializers.CharField(source="run.source_format")
    n_extractions = serializers.IntegerField(source="run.n_extractions")
    content_sha256 = serializers.CharField(source="run.content_sha256")
    created_at = serializers.DateTimeField(source="run.created_at")
    in_sample = serializers.IntegerField()
    heuristic = serializers.BooleanField()
    headline = serializers.DictField(child=serializers.FloatField(allow_null=True), allow_null=True)
    scope = serializers.SerializerMethodField(help_text="the contracts of the sample the run attempted")

    @extend_schema_field(ScopeOut)
    def get_scope(self, summary) -> dict:
        return summary.scope.as_dict()


class ExtractionJobOut(serializers.Serializer):
    id = serializers.IntegerField()
    kind = serializers.CharField()
    status = serializers.CharField()
    state = JobStateField()
    provider = serializers.CharField()
    model_id = serializers.CharField()
    params = serializers.DictField()
    total = serializers.IntegerField()
    done = serializers.IntegerField()
    stage = serializers.CharField()
    error = serializers.CharField()
    run = serializers.IntegerField(source="run_id", allow_null=True)
    sample = serializers.IntegerField(source="sample_id", allow_null=True)
    ledger = serializers.IntegerField(source="ledger_id", allow_null=True)
    base_url = serializers.SerializerMethodField(help_text="the model server the job's ledger pinned (no credentials)")
    simulated = serializers.BooleanField(help_text="answered by a simulated provider (the loopback test server)")
    created_at = serializers.DateTimeField()
    finished_at = serializers.DateTimeField(allow_null=True)

    def get_base_url(self, job) -> str:
        return job.provider_setup.get("base_url", "")


class ExtractionRunListOut(serializers.Serializer):
    runs = ExtractionRunOut(many=True)


@extend_schema_serializer(examples=[OpenApiExample(
    "one extraction", request_only=True,
    value={"run": {"model": "my-model", "extractions": [
        {"contract": "<CUAD title>", "category": "Governing Law", "text": "This Agreement is governed by..."}]},
        "source_name": "api"})])
class RunPasteIn(serializers.Serializer):
    run = serializers.JSONField(help_text="the run: a JSON object, or its text (JSON or JSON Lines)")
    source_name = serializers.CharField(required=False, default="api", max_length=255)


class RunLaunchIn(serializers.Serializer):
    provider = serializers.ChoiceField(choices=jobs.PROVIDERS, default="local")
    model_id = serializers.CharField(required=False, default="", allow_blank=True)
    base_url = serializers.CharField(
        required=False, default="", allow_blank=True, max_length=500,
        help_text="the OpenAI-compatible or Anthropic server for this run (e.g. http://127.0.0.1:11434/v1); blank = "
                  "the server's default; never credentials (keys stay in the server's environment)")
    sample = serializers.IntegerField(required=False)
    limit = serializers.IntegerField(required=False, min_value=1)
    # Upper bounds: what the ledger's columns hold (beyond them the database refused with a 500).
    max_requests = serializers.IntegerField(required=False, min_value=1, max_value=2**31 - 1)
    max_input_tokens = serializers.IntegerField(required=False, min_value=1, max_value=2**63 - 1)


class RunsApi(APIView):
    permission_classes = [IsAuthenticated, CanViewReports]

    def get_permissions(self):
        if self.request.method == "POST":
            return [IsAuthenticated(), CanLaunchRuns()]
        return super().get_permissions()

    @extend_schema(operation_id="cuad_runs_list", responses={200: ExtractionRunListOut, **error_responses(403)})
    def get(self, request: Request) -> Response:
        dataset = dataset_or_404(request.query_params)
        sample = sample_default(dataset=dataset) if dataset else None
        return Response({"runs": ExtractionRunOut(runs_list(sample=sample), many=True).data})

    @extend_schema(request=RunPasteIn,
                   responses={201: ExtractionRunOut, 202: ExtractionJobOut, **error_responses(*WRITE_ERRORS)})
    def post(self, request: Request) -> Response:
        """Paste a run (validated, nothing stored when invalid); 201 when graded now, 202 when queued."""
        data = RunPasteIn(data=request.data)
        data.is_valid(raise_exception=True)
        dataset = dataset_or_404({"dataset": request.query_params.get("dataset", "")})
        if dataset is None:
            return refused(["no CUAD dataset is loaded"])
        raw = data.validated_data["run"]
        if not isinstance(raw, str):
            raw = json.dumps(raw, ensure_ascii=False)
        try:
            result = jobs.run_paste(
                dataset=dataset, raw=raw, source_name=data.validated_data["source_name"], user=request.user
            )
        except RunFormatError as exc:
            return refused(exc.errors)
        if result.job is not None:
            return Response(ExtractionJobOut(result.job).data, status=status.HTTP_202_ACCEPTED)
        assert result.run is not None  # no job: graded inline
        sample = sample_default(dataset=dataset)
        summary = next((s for s in runs_list(sample=sample) if s.run.pk == result.run.pk), None)
        return Response(ExtractionRunOut(summary).data, status=status.HTTP_201_CREATED)


class RunApi(APIView):
    permission_classes = [IsAuthenticated, CanViewReports]

    @extend_schema(responses={200: ExtractionRunOut, **error_responses(*READ_ERRORS)})
    def get(self, request: Request, pk: int) -> Response:
        run = get_object_or_404(ExtractionRun, pk=pk)
        summary = next(s for s in runs_list(sample=sample_default(dataset=run.dataset)) if s.run.pk == pk)
        return Response(ExtractionRunOut(summary).data)


class JobsApi(APIView):
    permission_classes = [IsAuthenticated, CanLaunchRuns]

    @extend_schema(request=RunLaunchIn, responses={202: ExtractionJobOut, **error_responses(*WRITE_ERRORS)})
    def post(self, request: Request) -> Response:
        data = RunLaunchIn(data=request.data)
        data.is_valid(raise_exception=True)
        v = data.validated_data
        dataset = dataset_or_404({"dataset": request.query_params.get("dataset", "")})
        sample = (Sample.objects.filter(pk=v["sample"]).first() if "sample" in v
                  else sample_default(dataset=dataset) if dataset else None)
        if sample is None:
            return refused(["sample: no sample to run on"])
        try:
            job = jobs.extraction_job_create(
                sample=sample,
                provider=v["provider"],
                model_id=v["model_id"],
                limit=v.get("limit"),
                max_requests=v.get("max_requests"),
                max_input_tokens=v.get("max_input_tokens"),
                base_url=v["base_url"].strip(),
                user=request.user,
            )
        except jobs.JobError as exc:
            return refused([str(exc)])
        return Response(ExtractionJobOut(job).data, status=status.HTTP_202_ACCEPTED)


class JobApi(APIView):
    permission_classes = [IsAuthenticated, CanViewReports]

    @extend_schema(responses={200: ExtractionJobOut, **error_responses(*READ_ERRORS)})
    def get(self, request: Request, pk: int) -> Response:
        return Response(ExtractionJobOut(get_object_or_404(ConsoleJob, pk=pk)).data)
