"""Read-only API of frozen suites, with explicit serializers."""

from __future__ import annotations

from rest_framework import generics, serializers

from benchmarks.corpus.api import SnapshotOut
from benchmarks.suites.models import NominatedTarget, Suite, SuiteQuery
from reviewapp.core.access import CanViewReports


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


class SuiteList(generics.ListAPIView):
    permission_classes = [CanViewReports]
    serializer_class = SuiteOut
    queryset = Suite.objects.order_by("name", "-version")


class SuiteDetail(generics.RetrieveAPIView):
    permission_classes = [CanViewReports]
    serializer_class = SuiteDetailOut
    queryset = Suite.objects.prefetch_related("snapshots")
