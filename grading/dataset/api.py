"""The dataset's JSON API under /api/v1/cuad/dataset/ (explicit serializers; reviewers get 403)."""

from __future__ import annotations

from drf_spectacular.utils import extend_schema
from rest_framework import serializers
from rest_framework.permissions import IsAuthenticated
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from grading.dataset.models import Sample
from grading.dataset.selectors import dataset_overview, sample_default
from grading.responses import dataset_or_404, refused
from reviewapp.core.auth.roles import CanViewReports
from reviewapp.core.http.api import error_responses
from reviewapp.core.http.api_filters import id_parameter, query_int


class TypeCountOut(serializers.Serializer):
    name = serializers.CharField()
    sampled = serializers.IntegerField()
    available = serializers.IntegerField()
    target = serializers.IntegerField()
    met = serializers.BooleanField()


class DatasetOut(serializers.Serializer):
    source_name = serializers.CharField(source="dataset.source_name")
    sha256 = serializers.CharField(source="dataset.sha256")
    version = serializers.CharField(source="dataset.version")
    n_contracts = serializers.IntegerField(source="dataset.n_contracts")
    sample_id = serializers.IntegerField(source="sample.pk")
    manifest_sha256 = serializers.CharField(source="sample.manifest_sha256")
    parameters = serializers.DictField(source="manifest.parameters")
    contracts = serializers.ListField(child=serializers.DictField(), source="manifest.contracts")
    types = TypeCountOut(many=True)
    phases = serializers.DictField(child=serializers.IntegerField())
    length_stats = serializers.DictField(child=serializers.IntegerField())
    n_spans = serializers.IntegerField()


class DatasetApi(APIView):
    permission_classes = [IsAuthenticated, CanViewReports]

    @extend_schema(
        parameters=[id_parameter("sample", description="sample id (default: the newest sample)"),
                    id_parameter("dataset", description="dataset id (default: the newest CUAD public one)")],
        responses={200: DatasetOut, **error_responses(400, 403, 404)})
    def get(self, request: Request) -> Response:
        sample_id = query_int(request.query_params, "sample", minimum=1)
        if sample_id is None:
            dataset = dataset_or_404({"dataset": request.query_params.get("dataset", "")})
            sample = sample_default(dataset=dataset) if dataset else None
        else:
            sample = Sample.objects.filter(pk=sample_id).first()
        if sample is None:
            return refused(["sample: no CUAD sample exists"])
        return Response(DatasetOut(dataset_overview(sample=sample)).data)
