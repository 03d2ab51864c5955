"""CUAD comparisons in the API: the list (readers of reports), and declaring one (admins)."""

from __future__ import annotations

from typing import Any

from drf_spectacular.utils import extend_schema
from rest_framework import serializers, status
from rest_framework.permissions import BasePermission, IsAuthenticated
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from grading.comparisons.services import CuadComparisonError, cuad_comparison_declare, cuad_comparison_list
from grading.dataset.models import Sample
from grading.runs.models import ExtractionRun
from reviewapp.core.auth.roles import CanLaunchRuns, CanViewReports
from reviewapp.core.http.api import WRITE_ERRORS, error_responses


class CuadComparisonRunOut(serializers.Serializer):
    id = serializers.IntegerField()
    # A declared field, which DRF's metaclass takes off the class: it shadows no attribute.
    label = serializers.CharField()  # type: ignore[assignment]


class CuadComparisonOut(serializers.Serializer):
    id = serializers.IntegerField()
    sha256 = serializers.CharField(help_text="of dataset, sample manifest, the runs' contents, who declared and when")
    dataset = serializers.CharField()
    sample = serializers.IntegerField()
    runs = CuadComparisonRunOut(many=True)
    declared_by = serializers.CharField()
    declared_via = serializers.CharField()
    declared_at = serializers.DateTimeField()
    sentence = serializers.CharField()
    summary_url = serializers.CharField(help_text="the one-page summary ranking every declared run")


class CuadComparisonListOut(serializers.Serializer):
    comparisons = CuadComparisonOut(many=True)


class CuadComparisonIn(serializers.Serializer):
    runs = serializers.ListField(child=serializers.IntegerField(), allow_empty=False, max_length=100)
    sample = serializers.IntegerField(required=False, allow_null=True, default=None,
                                      help_text="omit: the newest sample of the runs' dataset")


def _out(declaration: Any) -> dict[str, Any]:
    return CuadComparisonOut(declaration.as_json() | {"declared_at": declaration.declared_at}).data


class CuadComparisonsApi(APIView):
    """GET: every declared CUAD comparison. POST (admins): declare runs of one dataset one comparison."""

    def get_permissions(self) -> list[BasePermission]:
        if self.request.method == "POST":
            return [IsAuthenticated(), CanLaunchRuns()]
        return [IsAuthenticated(), CanViewReports()]

    @extend_schema(operation_id="cuad_comparisons_list", responses={200: CuadComparisonListOut,
                                                                   **error_responses(403)})
    def get(self, request: Request) -> Response:
        return Response({"comparisons": [_out(d) for d in cuad_comparison_list()]})

    @extend_schema(operation_id="cuad_comparisons_declare", request=CuadComparisonIn,
                   responses={201: CuadComparisonOut, **error_responses(*WRITE_ERRORS)})
    def post(self, request: Request) -> Response:
        data = CuadComparisonIn(data=request.data)
        data.is_valid(raise_exception=True)
        wanted = data.validated_data["runs"]
        runs = ExtractionRun.objects.select_related("dataset").in_bulk(wanted)
        errors = [f"runs[{n}]: no run #{pk}" for n, pk in enumerate(wanted) if pk not in runs]
        sample = None
        if data.validated_data["sample"] is not None:
            sample = Sample.objects.filter(pk=data.validated_data["sample"]).first()
            if sample is None:
                errors.append(f"sample: no sample #{data.validated_data['sample']}")
        if errors:
            return Response({"errors": errors}, status=status.HTTP_400_BAD_REQUEST)
        try:
            declared = cuad_comparison_declare(runs=[runs[pk] for pk in wanted], user=request.user, via="api",
                                               sample=sample)
        except CuadComparisonError as exc:
            return Response({"errors": [str(exc)]}, status=status.HTTP_400_BAD_REQUEST)
        return Response(_out(declared), status=status.HTTP_201_CREATED)
