"""Read-only API under /api/benchmarks/ with explicit serializers (no ``__all__``)."""

from __future__ import annotations

from django.shortcuts import get_object_or_404
from rest_framework import generics, serializers
from rest_framework.response import Response
from rest_framework.views import APIView

from benchmarks import selectors
from benchmarks.models import NominatedTarget, Provision, RetrievalRun, SourceSnapshot, Suite, SuiteQuery
from reviewapp.access import CanViewReports


class SnapshotOut(serializers.ModelSerializer):
    class Meta:
        model = SourceSnapshot
        fields = ["id", "corpus", "source_key", "title", "official_url", "retrieved_at", "byte_size", "sha256",
                  "parser_name", "parser_version", "provision_count"]


class ProvisionOut(serializers.ModelSerializer):
    class Meta:
        model = Provision
        fields = ["id", "snapshot", "corpus", "citation", "variant", "docid", "chapter", "chapter_title", "heading",
                  "repealed", "official_url", "content_sha256"]


class ProvisionDetailOut(ProvisionOut):
    passages = serializers.SerializerMethodField()

    class Meta(ProvisionOut.Meta):
        fields = [*ProvisionOut.Meta.fields, "body", "history", "notes", "passages"]

    def get_passages(self, obj: Provision) -> list[dict]:
        return [{"rule": p.rule, "caption": p.caption, "text": p.text, "word_count": p.word_count,
                 "truncated": p.truncated, "sha256": p.sha256} for p in obj.passages.all()]


class TargetOut(serializers.ModelSerializer):
    class Meta:
        model = NominatedTarget
        fields = ["citation", "provision", "provisional", "nominated_by", "note"]


class QueryOut(serializers.ModelSerializer):
    family = serializers.CharField(source="family.name", default="")
    targets = TargetOut(many=True, read_only=True)

    class Meta:
        model = SuiteQuery
        fields = ["qid", "text", "kind", "split", "family", "expected_citation", "expected_provision",
                  "text_sha256", "targets"]


class SuiteOut(serializers.ModelSerializer):
    class Meta:
        model = Suite
        fields = ["id", "name", "version", "corpus", "description", "sha256", "sources_sha256", "frozen_at",
                  "frozen_by"]


class SuiteDetailOut(SuiteOut):
    queries = serializers.SerializerMethodField()
    snapshots = SnapshotOut(many=True, read_only=True)

    class Meta(SuiteOut.Meta):
        fields = [*SuiteOut.Meta.fields, "snapshots", "queries"]

    def get_queries(self, obj: Suite) -> list[dict]:
        qs = obj.queries.select_related("family").prefetch_related("targets").order_by("position")
        return QueryOut(qs, many=True).data


class RunOut(serializers.ModelSerializer):
    suite = serializers.CharField(source="suite.__str__")

    class Meta:
        model = RetrievalRun
        fields = ["id", "suite", "suite_id", "engine", "configuration", "configuration_detail", "k", "passage_rule",
                  "index_documents", "status", "error", "started_at", "finished_at", "candidates_sha256"]


class SnapshotList(generics.ListAPIView):
    permission_classes = [CanViewReports]
    serializer_class = SnapshotOut
    queryset = SourceSnapshot.objects.order_by("id")


class ProvisionList(generics.ListAPIView):
    permission_classes = [CanViewReports]
    serializer_class = ProvisionOut

    def get_queryset(self):
        qs = Provision.objects.order_by("snapshot_id", "position")
        for field in ("corpus", "chapter", "citation", "snapshot"):
            if value := self.request.query_params.get(field):
                qs = qs.filter(**{field: value})
        return qs


class ProvisionDetail(generics.RetrieveAPIView):
    permission_classes = [CanViewReports]
    serializer_class = ProvisionDetailOut
    queryset = Provision.objects.prefetch_related("passages")


class SuiteList(generics.ListAPIView):
    permission_classes = [CanViewReports]
    serializer_class = SuiteOut
    queryset = Suite.objects.order_by("name", "-version")


class SuiteDetail(generics.RetrieveAPIView):
    permission_classes = [CanViewReports]
    serializer_class = SuiteDetailOut
    queryset = Suite.objects.prefetch_related("snapshots")


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
