"""Rerank API: progress and per-candidate distributions (explicit fields; stakeholders and admins only)."""

from __future__ import annotations

from django.shortcuts import get_object_or_404
from rest_framework import serializers
from rest_framework.response import Response
from rest_framework.views import APIView

from benchmarks.rerank import services as rerank
from benchmarks.rerank.models import RerankRun
from reviewapp.core.access import CanViewReports


class RerankRunApi(APIView):
    permission_classes = [CanViewReports]

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

    class Output(serializers.Serializer):
        id = serializers.IntegerField()
        status = serializers.CharField()
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

    def get(self, request, pk: int):
        run = get_object_or_404(RerankRun, pk=pk)
        progress = rerank.rerank_run_progress(run=run)
        grades = rerank.rerank_run_grades(run=run)
        return Response({
            "run": self.Output(run).data,
            "progress": {"graded": progress.graded, "failed": progress.failed, "unknown": progress.unknown,
                         "pending": progress.pending, "requests": progress.spend.requests,
                         "max_requests": progress.spend.max_requests, "input_tokens": progress.spend.input_tokens,
                         "max_input_tokens": progress.spend.max_input_tokens},
            "grades": self.Grade(grades, many=True).data,
        })
