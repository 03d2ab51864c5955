"""The dataset's JSON API under /api/v1/cuad/dataset/ (explicit serializers; reviewers get 403)."""

from __future__ import annotations

from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework import serializers
from rest_framework.permissions import IsAuthenticated
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from grading.dataset.models import Sample
from grading.dataset.selectors import dataset_overview, sample_default
from grading.responses import refused
from reviewapp.core.auth.roles import CanViewReports
from reviewapp.core.http.api import error_responses
from reviewapp.core.http.api_filters import query_int


class TypeCountSerializer(serializers.Serializer):
    name = serializers.CharField()
    sampled = serializers.IntegerField()
    available = serializers.IntegerField()
    target = serializers.IntegerField()
    met = serializers.BooleanField()


class DatasetSerializer(serializers.Serializer):
    source_name = serializers.CharField(source="dataset.source_name")
    sha256 = serializers.CharField(source="dataset.sha256")
    version = serializers.CharField(source="dataset.version")
    n_contracts = serializers.IntegerField(source="dataset.n_contracts")
    sample_id = serializers.IntegerField(source="sample.pk")
    manifest_sha256 = serializers.CharField(source="sample.manifest_sha256")
    parameters = serializers.DictField(source="manifest.parameters")
    contracts = serializers.ListField(child=serializers.DictField(), source="manifest.contracts")
    types = TypeCountSerializer(many=True)
    phases = serializers.DictField(child=serializers.IntegerField())
    length_stats = serializers.DictField(child=serializers.IntegerField())
    n_spans = serializers.IntegerField()


class DatasetApi(APIView):
    permission_classes = [IsAuthenticated, CanViewReports]

    @extend_schema(
        parameters=[OpenApiParameter("sample", int, description="sample id (default: the newest sample)")],
        responses={200: DatasetSerializer, **error_responses(400, 403)})
    def get(self, request: Request) -> Response:
        sample_id = query_int(request.query_params, "sample", minimum=1)
        sample = sample_default() if sample_id is None else Sample.objects.filter(pk=sample_id).first()
        if sample is None:
            return refused(["sample: no CUAD sample exists"])
        return Response(DatasetSerializer(dataset_overview(sample=sample)).data)
