"""API of the label exchange, under /api/v1/review/: pools/<id>/label-studio/, argilla/, label-imports/,
imported-labels/, and label-sources/ (labels from outside the blind review, e.g. source-derived section labels).
"""

from __future__ import annotations

import dataclasses
from typing import Any

from django.core.exceptions import ObjectDoesNotExist
from django.http import Http404
from drf_spectacular.utils import extend_schema
from rest_framework import serializers, status
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from reviewapp.core.auth.roles import CanManageReviews
from reviewapp.core.http.api import READ_ERRORS, WRITE_ERRORS, error_responses
from reviewapp.core.http.requests import SignedInRequest
from reviewapp.review.errors import ReviewError
from reviewapp.review.exchange import argilla, labelstudio, selectors, services
from reviewapp.review.exchange.texts import ExchangeError
from reviewapp.review.pools.models import ReviewPool
from reviewapp.review.pools.selectors import pool_model_get


def _pool_or_404(pool_id: str) -> ReviewPool:
    try:
        return pool_model_get(public_id=pool_id)
    except ObjectDoesNotExist:
        raise Http404 from None


class LabelStudioExportApi(APIView):
    permission_classes = [CanManageReviews]

    class LabelStudioOut(serializers.Serializer):
        label_config = serializers.CharField(help_text="the labeling config (XML) for the project")
        tasks = serializers.ListField(child=serializers.DictField(), help_text="Label Studio JSON import format")

    @extend_schema(responses={200: LabelStudioOut, **error_responses(*READ_ERRORS)})
    def get(self, request: Request, pool_id: str) -> Response:
        pool = _pool_or_404(pool_id)
        body = {"label_config": labelstudio.labelstudio_config(pool=pool),
                "tasks": labelstudio.labelstudio_tasks(pool=pool)}
        return Response(self.LabelStudioOut(body).data)


class ArgillaExportApi(APIView):
    permission_classes = [CanManageReviews]

    class ArgillaOut(serializers.Serializer):
        settings = serializers.DictField(help_text="as rg.Settings.serialize() (.argilla/settings.json)")
        dataset = serializers.DictField(help_text="the dataset model (.argilla/dataset.json)")
        records = serializers.ListField(child=serializers.DictField(), help_text="Record.to_dict() each (records.json)")

    @extend_schema(responses={200: ArgillaOut, **error_responses(*READ_ERRORS)})
    def get(self, request: Request, pool_id: str) -> Response:
        pool = _pool_or_404(pool_id)
        body = {"settings": argilla.argilla_settings(pool=pool),
                "dataset": argilla.argilla_dataset(pool=pool), "records": argilla.argilla_records(pool=pool)}
        return Response(self.ArgillaOut(body).data)


class ImportedLabelsApi(APIView):
    """Every imported grade of a pool, each marked not blind, with its tool, import and annotator as given."""

    permission_classes = [CanManageReviews]

    class ImportedLabelOut(serializers.Serializer):
        import_id = serializers.IntegerField()
        item_id = serializers.CharField()
        query_id = serializers.CharField()
        doc_id = serializers.CharField()
        tool = serializers.CharField()
        content_sha256 = serializers.CharField()
        blind = serializers.BooleanField()
        location = serializers.CharField()
        annotator = serializers.CharField()
        grade_type = serializers.CharField()
        value = serializers.JSONField()
        query_hash = serializers.CharField()
        source_hash = serializers.CharField()
        passage_hash = serializers.CharField()
        stale = serializers.BooleanField()

    @extend_schema(responses={200: ImportedLabelOut(many=True), **error_responses(*READ_ERRORS)})
    def get(self, request: Request, pool_id: str) -> Response:
        pool = _pool_or_404(pool_id)
        rows = [dataclasses.asdict(r) for r in selectors.pool_imported_labels(pool=pool)]
        return Response(self.ImportedLabelOut(rows, many=True).data)


class LabelNotImportedOut(serializers.Serializer):
    """An annotation or response of an imported file that did not become a label, and why."""

    location = serializers.CharField(help_text="where in the document, e.g. records[3].responses.section[0]")
    status = serializers.CharField(help_text="draft, discarded, cancelled, or not choices (...)")


class LabelImportsApi(APIView):
    """Imports of Label Studio or Argilla annotations into a pool: a label source that is not blind."""

    permission_classes = [CanManageReviews]

    class ImportIn(serializers.Serializer):
        tool = serializers.ChoiceField(choices=list(services.TOOLS))
        filename = serializers.CharField(required=False, allow_blank=True, default="")
        document = serializers.JSONField(help_text="Label Studio: the list of tasks of its JSON export; Argilla: the "
                                                   "list of records of records.json")
        unstated = serializers.ChoiceField(
            choices=list(argilla.UNSTATED_READINGS), required=False,
            help_text="how to read Argilla responses that carry no status (Argilla's to_disk leaves it out); "
                      "without it such a document is refused")

    class ImportOut(serializers.Serializer):
        pk = serializers.IntegerField()
        tool = serializers.CharField()
        filename = serializers.CharField()
        content_sha256 = serializers.CharField()
        blind = serializers.BooleanField()
        imported_by = serializers.CharField()
        created_at = serializers.DateTimeField()
        annotations = serializers.IntegerField()
        stale = serializers.IntegerField()

    class ImportResultOut(serializers.Serializer):
        label_import = serializers.IntegerField()
        annotations = serializers.IntegerField(help_text="submitted annotations imported as labels")
        skipped = serializers.IntegerField(help_text="annotations and responses not imported")
        skipped_by_status = serializers.DictField(child=serializers.IntegerField())
        not_imported = LabelNotImportedOut(many=True)
        report = serializers.CharField(help_text="the import report, as the page and the command give it")
        blind = serializers.BooleanField()

    @extend_schema(responses={200: ImportOut(many=True), **error_responses(*READ_ERRORS)})
    def get(self, request: Request, pool_id: str) -> Response:
        pool = _pool_or_404(pool_id)
        rows = [dataclasses.asdict(s) for s in selectors.pool_label_imports(pool=pool)]
        return Response(self.ImportOut(rows, many=True).data)

    @extend_schema(request=ImportIn, responses={201: ImportResultOut, **error_responses(*WRITE_ERRORS)})
    def post(self, request: Request, pool_id: str) -> Response:
        pool = _pool_or_404(pool_id)
        data = self.ImportIn(data=request.data)
        data.is_valid(raise_exception=True)
        values: dict[str, Any] = data.validated_data
        try:
            result = services.annotations_import(pool=pool, tool=values["tool"], document=values["document"],
                                                 filename=values["filename"], imported_by=request.user.get_username(),
                                                 unstated=values.get("unstated"))
        except ExchangeError as error:
            return Response({"detail": str(error)}, status=status.HTTP_400_BAD_REQUEST)
        body = {"label_import": result.label_import.pk, "annotations": result.annotations,
                "skipped": result.skipped, "skipped_by_status": result.skipped_by_status,
                "not_imported": [{"location": where, "status": why} for where, why in result.not_imported],
                "report": services.import_report(result, tool=values["tool"]), "blind": result.label_import.blind}
        return Response(self.ImportResultOut(body).data, status=status.HTTP_201_CREATED)


class LabelSourcesApi(APIView):
    permission_classes = [CanManageReviews]

    class LabelSourceIn(serializers.Serializer):
        name = serializers.CharField(max_length=200)
        description = serializers.CharField(allow_blank=True, default="")
        provisional = serializers.BooleanField(default=True)
        labels = serializers.ListField(child=serializers.DictField(), allow_empty=False)

    class LabelSourceOut(serializers.Serializer):
        name = serializers.CharField()
        description = serializers.CharField()
        provisional = serializers.BooleanField()
        labels = serializers.IntegerField()
        grade_types = serializers.ListField(child=serializers.CharField())

    @extend_schema(responses={200: LabelSourceOut(many=True), **error_responses(403)})
    def get(self, request: Request) -> Response:
        return Response(self.LabelSourceOut([dataclasses.asdict(s) for s in selectors.label_source_list()],
                                              many=True).data)

    @extend_schema(request=LabelSourceIn, responses={201: LabelSourceOut, **error_responses(*WRITE_ERRORS)})
    def post(self, request: SignedInRequest) -> Response:
        data = self.LabelSourceIn(data=request.data)
        data.is_valid(raise_exception=True)
        try:
            source = services.label_source_import(created_by=request.user, **data.validated_data)
        except ReviewError as error:
            return Response({"detail": str(error)}, status=status.HTTP_400_BAD_REQUEST)
        summary = next(s for s in selectors.label_source_list() if s.pk == source.pk)
        return Response(self.LabelSourceOut(dataclasses.asdict(summary)).data, status=status.HTTP_201_CREATED)
