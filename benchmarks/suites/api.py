"""Read-only API of frozen suites, with explicit serializers; each suite's definition as a JSON or YAML file."""

from __future__ import annotations

from django.http import Http404, HttpResponse
from django.shortcuts import get_object_or_404
from django.urls import reverse
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, extend_schema, extend_schema_field, extend_schema_view
from rest_framework import generics, serializers
from rest_framework.request import Request
from rest_framework.views import APIView

from benchmarks.corpus.api import SnapshotOut
from benchmarks.suites.models import NominatedTarget, Suite, SuiteQuery
from benchmarks.suites.selectors import suite_export
from reviewapp.core.auth.roles import CanViewReports
from reviewapp.core.exports.downloads import download
from reviewapp.core.http.api import READ_ERRORS, error_responses


class ConfirmedByOut(serializers.Serializer):
    lawyers = serializers.IntegerField(help_text="how many lawyers' complete judgments decided it")
    agreement = serializers.ChoiceField(choices=["unanimous", "adjudicated"],
                                        help_text="all said yes, or an adjudicator ruled after a disagreement")


class TargetOut(serializers.ModelSerializer):
    confirmed_by = ConfirmedByOut(allow_null=True, read_only=True,
                                  help_text="null while the target is not confirmed by lawyers")
    claimed_confirmed_by = ConfirmedByOut(
        allow_null=True, read_only=True,
        help_text="what the imported suite file claimed; never a confirmation made in this install")

    class Meta:
        model = NominatedTarget
        fields = ["citation", "provision", "provisional", "nominated_by", "note", "confirmed_by",
                  "claimed_confirmed_by"]


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


class SuiteExportsOut(serializers.Serializer):
    json = serializers.CharField(help_text="URL of the definition as a JSON suite file")
    yaml = serializers.CharField(help_text="URL of the definition as a YAML suite file")


class SuiteDetailOut(SuiteOut):
    queries = serializers.SerializerMethodField()
    snapshots = SnapshotOut(many=True, read_only=True)
    exports = serializers.SerializerMethodField()

    class Meta(SuiteOut.Meta):
        fields = [*SuiteOut.Meta.fields, "snapshots", "exports", "queries"]

    @extend_schema_field(SuiteExportsOut)
    def get_exports(self, obj: Suite) -> dict[str, str]:
        """Files ``import_suite`` reads back to this suite's definition and sha256."""
        request = self.context.get("request")
        urls = {fmt: reverse("benchmarks-api:suite-export", args=[obj.pk, fmt]) for fmt in ("json", "yaml")}
        return {fmt: request.build_absolute_uri(url) if request else url for fmt, url in urls.items()}

    @extend_schema_field(QueryOut(many=True))
    def get_queries(self, obj: Suite) -> list[dict]:
        qs = obj.queries.select_related("family").prefetch_related("targets").order_by("position")
        # many=True makes a ListSerializer, whose data is a list (the stubs give the child's ReturnDict).
        return QueryOut(qs, many=True).data  # type: ignore[return-value]


@extend_schema_view(get=extend_schema(responses={200: SuiteOut(many=True), **error_responses(400, 403)}))
class SuiteList(generics.ListAPIView):
    permission_classes = [CanViewReports]
    serializer_class = SuiteOut
    queryset = Suite.objects.order_by("name", "-version")


@extend_schema_view(get=extend_schema(responses={200: SuiteDetailOut, **error_responses(*READ_ERRORS)}))
class SuiteDetail(generics.RetrieveAPIView):
    permission_classes = [CanViewReports]
    serializer_class = SuiteDetailOut
    queryset = Suite.objects.prefetch_related("snapshots")


class SuiteExport(APIView):
    """The suite's frozen definition as a suite file (``json`` or ``yaml``); importing it gives the same sha256."""

    permission_classes = [CanViewReports]

    @extend_schema(parameters=[OpenApiParameter("fmt", str, OpenApiParameter.PATH, enum=("json", "yaml"))],
                   responses={(200, "application/json"): OpenApiTypes.OBJECT,
                              (200, "application/yaml"): OpenApiTypes.STR, **error_responses(*READ_ERRORS)})
    def get(self, request: Request, pk: int, fmt: str) -> HttpResponse:
        suite = get_object_or_404(Suite, pk=pk)
        try:
            body, content_type, filename = suite_export(suite=suite, fmt=fmt)
        except ValueError as exc:
            raise Http404(str(exc)) from exc
        return download(body, filename=filename, content_type=content_type)
