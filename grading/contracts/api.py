"""The firm's contracts in the JSON API under /api/v1/cuad/contract-sets/ (readers GET; admins create and upload)."""

from __future__ import annotations

from django.shortcuts import get_object_or_404
from drf_spectacular.utils import extend_schema
from rest_framework import serializers, status
from rest_framework.permissions import IsAuthenticated
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from grading.contracts.models import ContractSet
from grading.contracts.selectors import contract_sets, set_contracts
from grading.contracts.services import (
    TaxonomyError,
    contract_set_get_or_create,
    contracts_import,
    taxonomy_current,
    taxonomy_publish,
)
from grading.contracts.views import contract_row
from grading.responses import refused
from reviewapp.core.auth.roles import CanManageReviews, CanViewReports
from reviewapp.core.http.api import READ_ERRORS, WRITE_ERRORS, error_responses


class ContractSetOut(serializers.Serializer):
    id = serializers.IntegerField()
    name = serializers.CharField()
    contracts = serializers.IntegerField(help_text="contracts that count (excluded ones not among them)")
    excluded = serializers.IntegerField(help_text="contracts taken back out of the set before labelling")


class ContractSetListOut(serializers.Serializer):
    contract_sets = ContractSetOut(many=True)


class ContractSetIn(serializers.Serializer):
    name = serializers.CharField(max_length=100)
    description = serializers.CharField(required=False, default="", allow_blank=True, max_length=2000)


class CategoryOut(serializers.Serializer):
    name = serializers.CharField()
    description = serializers.CharField(allow_blank=True)
    origin = serializers.CharField(help_text='"cuad", "cuad:<CUAD name>" (renamed or re-described) or "firm"')


class TaxonomyOut(serializers.Serializer):
    version = serializers.IntegerField()
    sha256 = serializers.CharField()
    categories = CategoryOut(many=True)


class ContractOut(serializers.Serializer):
    id = serializers.IntegerField()
    title = serializers.CharField()
    filename = serializers.CharField()
    kind = serializers.CharField()
    units = serializers.IntegerField(help_text="pages (PDF), paragraphs (DOCX) or lines (text, HTML)")
    characters = serializers.IntegerField()
    text_sha256 = serializers.CharField()
    source_sha256 = serializers.CharField()
    source_bytes = serializers.IntegerField()
    imported_by = serializers.CharField()
    imported_at = serializers.CharField()
    excluded_reason = serializers.CharField(allow_blank=True, help_text="why it was excluded; empty if it counts")
    excluded_by = serializers.CharField(allow_blank=True)
    excluded_at = serializers.CharField(allow_blank=True)


class ContractSetDetailOut(serializers.Serializer):
    id = serializers.IntegerField()
    name = serializers.CharField()
    taxonomy = TaxonomyOut(allow_null=True)
    contracts = ContractOut(many=True)


class UploadIn(serializers.Serializer):
    files = serializers.ListField(child=serializers.FileField(), allow_empty=False)


class OutcomeOut(serializers.Serializer):
    filename = serializers.CharField()
    status = serializers.CharField(help_text="imported, duplicate (the same text is already in the set) or refused")
    detail = serializers.CharField()
    contract = serializers.IntegerField(allow_null=True)


class UploadOut(serializers.Serializer):
    outcomes = OutcomeOut(many=True)


class TaxonomyRowIn(serializers.Serializer):
    name = serializers.CharField(max_length=100)
    description = serializers.CharField(allow_blank=True, required=False, default="")
    cuad_name = serializers.CharField(allow_blank=True, required=False, default="")


class TaxonomyIn(serializers.Serializer):
    categories = TaxonomyRowIn(many=True)
    note = serializers.CharField(allow_blank=True, required=False, default="", max_length=2000)


def _detail(contract_set: ContractSet) -> dict:
    taxonomy = taxonomy_current(contract_set)
    return {"id": contract_set.pk, "name": contract_set.name,
            "taxonomy": None if taxonomy is None else {"version": taxonomy.version, "sha256": taxonomy.sha256,
                                                       "categories": taxonomy.categories},
            "contracts": [contract_row(m) for m in set_contracts(contract_set=contract_set)]}


class _ReadOrManage(APIView):
    permission_classes = [IsAuthenticated, CanViewReports]

    def get_permissions(self):
        if self.request.method == "POST":
            return [IsAuthenticated(), CanManageReviews()]
        return super().get_permissions()


class ContractSetsApi(_ReadOrManage):
    @extend_schema(operation_id="cuad_contract_sets_list", responses={200: ContractSetListOut,
                                                                     **error_responses(403)})
    def get(self, request: Request) -> Response:
        return Response({"contract_sets": [{"id": s.pk, "name": s.name, "contracts": s.n_contracts,
                                            "excluded": s.n_excluded} for s in contract_sets()]})

    @extend_schema(request=ContractSetIn, responses={201: ContractSetDetailOut, 200: ContractSetDetailOut,
                                                     **error_responses(*WRITE_ERRORS)})
    def post(self, request: Request) -> Response:
        """Create a contract set (CUAD's taxonomy as version 1); 200 with the set when the name exists."""
        data = ContractSetIn(data=request.data)
        data.is_valid(raise_exception=True)
        try:
            contract_set, created = contract_set_get_or_create(
                name=data.validated_data["name"], description=data.validated_data["description"], user=request.user)
        except ValueError as exc:
            return refused([str(exc)])
        return Response(_detail(contract_set), status=status.HTTP_201_CREATED if created else status.HTTP_200_OK)


class ContractSetApi(APIView):
    permission_classes = [IsAuthenticated, CanViewReports]

    @extend_schema(responses={200: ContractSetDetailOut, **error_responses(*READ_ERRORS)})
    def get(self, request: Request, pk: int) -> Response:
        return Response(_detail(get_object_or_404(ContractSet, pk=pk)))


class ContractUploadApi(APIView):
    permission_classes = [IsAuthenticated, CanManageReviews]

    @extend_schema(request={"multipart/form-data": UploadIn},
                   responses={200: UploadOut, **error_responses(*WRITE_ERRORS, 404)})
    def post(self, request: Request, pk: int) -> Response:
        """Import files into the set: every file gets an outcome; 400 only when none could be imported."""
        contract_set = get_object_or_404(ContractSet, pk=pk)
        uploads = request.FILES.getlist("files")
        if not uploads:
            return refused(["files: choose at least one file (multipart field 'files')"])
        outcomes = contracts_import(contract_set=contract_set, user=request.user,
                                    files=[(f.name or "", f.read()) for f in uploads])
        body = {"outcomes": [{"filename": o.filename, "status": o.status, "detail": o.detail,
                              "contract": o.contract.pk if o.contract else None} for o in outcomes]}
        ok = any(o.status != "refused" for o in outcomes)
        return Response(body, status=status.HTTP_200_OK if ok else status.HTTP_400_BAD_REQUEST)


class TaxonomyApi(APIView):
    permission_classes = [IsAuthenticated, CanManageReviews]

    @extend_schema(request=TaxonomyIn, responses={201: TaxonomyOut, **error_responses(*WRITE_ERRORS, 404)})
    def post(self, request: Request, pk: int) -> Response:
        """Publish a taxonomy version (201; the current version, unchanged, when the categories are the same)."""
        contract_set = get_object_or_404(ContractSet, pk=pk)
        data = TaxonomyIn(data=request.data)
        data.is_valid(raise_exception=True)
        try:
            taxonomy = taxonomy_publish(contract_set=contract_set, categories=data.validated_data["categories"],
                                        user_name=request.user.get_username(), note=data.validated_data["note"])
        except TaxonomyError as exc:
            return refused([str(exc)])
        return Response({"version": taxonomy.version, "sha256": taxonomy.sha256,
                         "categories": taxonomy.categories}, status=status.HTTP_201_CREATED)
