"""Gold sets in the JSON API under /api/v1/cuad/contract-sets/<id>/gold-sets/ (readers GET; admins freeze)."""

from __future__ import annotations

from django.http import Http404, HttpResponse
from django.shortcuts import get_object_or_404
from drf_spectacular.utils import OpenApiResponse, extend_schema
from rest_framework import serializers, status
from rest_framework.permissions import IsAuthenticated
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from grading.contracts.gold.exports import GoldExportError, gold_csv, gold_cuad_json
from grading.contracts.gold.freeze import GoldSetError, gold_set_freeze
from grading.contracts.gold.models import GoldSet
from grading.contracts.gold.provenance import gold_set_origin
from grading.contracts.gold.selectors import GoldSetMissing, gold_set_get, gold_sets
from grading.contracts.models import ContractSet
from grading.responses import refused
from reviewapp.core.auth.roles import CanManageReviews, CanViewReports
from reviewapp.core.exports.downloads import download
from reviewapp.core.http.api import READ_ERRORS, WRITE_ERRORS, error_responses
from reviewapp.core.records.provenance import provenance_records


class GoldSetOut(serializers.Serializer):
    version = serializers.IntegerField()
    sha256 = serializers.CharField(help_text="sha256 of the content as canonical JSON")
    taxonomy_version = serializers.IntegerField()
    taxonomy_sha256 = serializers.CharField()
    contracts = serializers.IntegerField()
    categories = serializers.IntegerField()
    spans = serializers.IntegerField()
    adjudicated = serializers.IntegerField(help_text="(contract, category) answers that come from a ruling")
    left_out = serializers.IntegerField()
    created_by = serializers.CharField(allow_blank=True)
    created_at = serializers.CharField()


class GoldSetListOut(serializers.Serializer):
    gold_sets = GoldSetOut(many=True)


class GoldSetDetailOut(GoldSetOut):
    counts = serializers.DictField()
    content = serializers.DictField(help_text="taxonomy, categories, contracts with per-category answers")
    provenance = serializers.DictField(help_text="per contract: who labelled it; per category agreed/adjudicated")
    statement = serializers.ListField(
        child=serializers.DictField(), help_text="who made the answers and by which procedure, counted, with the "
        "sentence the gold set page and the CUAD summary print")
    left_out_contracts = serializers.ListField(child=serializers.DictField())
    agreement = serializers.ListField(child=serializers.DictField())
    pools = serializers.ListField(child=serializers.CharField())


class FreezeOut(serializers.Serializer):
    created = serializers.BooleanField(help_text="false: this content was frozen before, as this version")
    gold_set = GoldSetOut()


def _row(gold: GoldSet) -> dict:
    counts = gold.counts
    return {"version": gold.version, "sha256": gold.sha256, "taxonomy_version": gold.taxonomy_version,
            "taxonomy_sha256": gold.taxonomy_sha256, "contracts": counts.get("contracts", 0),
            "categories": counts.get("categories", 0), "spans": counts.get("spans", 0),
            "adjudicated": counts.get("adjudicated", 0), "left_out": counts.get("left_out", 0),
            "created_by": gold.created_by, "created_at": gold.created_at.isoformat()}


def _gold(pk: int, version: int) -> GoldSet:
    try:
        return gold_set_get(contract_set=get_object_or_404(ContractSet, pk=pk), version=version)
    except GoldSetMissing as error:
        raise Http404(str(error)) from None


class GoldSetsApi(APIView):
    permission_classes = [IsAuthenticated, CanViewReports]

    def get_permissions(self):
        if self.request.method == "POST":
            return [IsAuthenticated(), CanManageReviews()]
        return super().get_permissions()

    @extend_schema(operation_id="cuad_gold_sets_list", responses={200: GoldSetListOut,
                                                                 **error_responses(*READ_ERRORS)})
    def get(self, request: Request, pk: int) -> Response:
        contract_set = get_object_or_404(ContractSet, pk=pk)
        return Response({"gold_sets": [_row(g) for g in gold_sets(contract_set=contract_set)]})

    @extend_schema(request=None, responses={201: FreezeOut, 200: FreezeOut, **error_responses(*WRITE_ERRORS, 404)})
    def post(self, request: Request, pk: int) -> Response:
        """Freeze the set's agreed and adjudicated labels (201); 200 with the version that already holds them."""
        contract_set = get_object_or_404(ContractSet, pk=pk)
        try:
            result = gold_set_freeze(contract_set=contract_set, user=request.user)
        except GoldSetError as exc:
            return refused([str(exc)])
        return Response({"created": result.created, "gold_set": _row(result.gold_set)},
                        status=status.HTTP_201_CREATED if result.created else status.HTTP_200_OK)


class GoldSetApi(APIView):
    permission_classes = [IsAuthenticated, CanViewReports]

    @extend_schema(responses={200: GoldSetDetailOut, **error_responses(*READ_ERRORS)})
    def get(self, request: Request, pk: int, version: int) -> Response:
        gold = _gold(pk, version)
        return Response({**_row(gold), "counts": gold.counts, "content": gold.content, "provenance": gold.provenance,
                         "statement": provenance_records([gold_set_origin(gold)]),
                         "left_out_contracts": gold.left_out, "agreement": gold.agreement, "pools": gold.pools})


class GoldSetExportApi(APIView):
    permission_classes = [IsAuthenticated, CanViewReports]

    @extend_schema(responses={200: OpenApiResponse(description="CUAD_v1.json's shape, or CSV"),
                              **error_responses(*READ_ERRORS)})
    def get(self, request: Request, pk: int, version: int, fmt: str) -> HttpResponse:
        gold = _gold(pk, version)
        try:
            body = gold_csv(gold) if fmt == "csv" else gold_cuad_json(gold)
        except GoldExportError as exc:
            return refused([str(exc)])
        return download(body, filename=f"gold-set-{pk}-v{gold.version}.{'csv' if fmt == 'csv' else 'json'}")
