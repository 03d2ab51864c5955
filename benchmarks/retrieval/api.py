"""Read-only API of keyword retrieval runs, with explicit serializers."""

from __future__ import annotations

from django.shortcuts import get_object_or_404
from rest_framework import generics, serializers
from rest_framework.response import Response
from rest_framework.views import APIView

from benchmarks.retrieval import selectors
from benchmarks.retrieval.models import RetrievalRun
from reviewapp.core.access import CanViewReports


class RunOut(serializers.ModelSerializer):
    suite = serializers.CharField(source="suite.__str__")

    class Meta:
        model = RetrievalRun
        fields = ["id", "suite", "suite_id", "engine", "configuration", "configuration_detail", "k", "passage_rule",
                  "index_documents", "status", "error", "started_at", "finished_at", "candidates_sha256"]


class RunList(generics.ListAPIView):
    permission_classes = [CanViewReports]
    serializer_class = RunOut
    queryset = RetrievalRun.objects.select_related("suite").order_by("-id")


class RunDetail(APIView):
    """A run with every query's result and candidates in keyword order."""

    permission_classes = [CanViewReports]

    def get(self, request, pk: int):
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
