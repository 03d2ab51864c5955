"""JSON API of a snapshot compared with an earlier one of the same source, with explicit serializers."""

from __future__ import annotations

from django.http import Http404
from django.shortcuts import get_object_or_404
from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework import serializers
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from benchmarks.corpus.api import SnapshotOut
from benchmarks.corpus.models import SourceSnapshot
from benchmarks.snapshots import selectors
from benchmarks.snapshots.changes import KINDS
from benchmarks.snapshots.views import changes_kind, snapshot_against
from reviewapp.core.auth.roles import CanViewReports
from reviewapp.core.http.api import READ_ERRORS, error_responses
from reviewapp.core.http.api_filters import id_parameter


class SectionChangeOut(serializers.Serializer):
    kind = serializers.ChoiceField(choices=KINDS, help_text="added, removed, amended (the text), or notes (only "
                                                            "the history and notes)")
    citation = serializers.CharField(source="label")
    old_provision = serializers.IntegerField(source="old_pk", allow_null=True)
    new_provision = serializers.IntegerField(source="new_pk", allow_null=True)
    old_text_sha256 = serializers.CharField(help_text="sha256 of the heading, body and repealed flag; '' if added")
    new_text_sha256 = serializers.CharField(help_text="the same of the newer snapshot; '' if removed")
    diff = serializers.ListField(child=serializers.CharField(), help_text="unified diff lines, a paragraph a line")


class ChangeCountsOut(serializers.Serializer):
    added = serializers.IntegerField()
    removed = serializers.IntegerField()
    amended = serializers.IntegerField()
    notes = serializers.IntegerField()
    unchanged = serializers.IntegerField()


class SnapshotChangesOut(serializers.Serializer):
    old = SnapshotOut()
    new = SnapshotOut()
    sections_old = serializers.IntegerField()
    sections_new = serializers.IntegerField()
    counts = ChangeCountsOut()
    changes = SectionChangeOut(many=True)


class SnapshotChangesApi(APIView):
    """What a snapshot changed since the one of the same source before it (or since ``?against=ID``)."""

    permission_classes = [CanViewReports]

    @extend_schema(parameters=[id_parameter("against",
                                            description="compare with this snapshot of the same code instead"),
                               OpenApiParameter("kind", str, required=False, enum=KINDS,
                                                description="list only the changes of this kind (counts stay whole)")],
                   responses={200: SnapshotChangesOut, **error_responses(*READ_ERRORS)})
    def get(self, request: Request, pk: int) -> Response:
        new = get_object_or_404(SourceSnapshot.objects.defer("raw"), pk=pk)
        kind = changes_kind(request)
        comparison = selectors.snapshot_comparison(new=new, old=snapshot_against(request, new))
        if comparison is None:
            raise Http404(f"snapshot {pk} is the first of {new.source_key}: nothing to compare with")
        changes = comparison.changes
        return Response(SnapshotChangesOut({
            "old": comparison.old, "new": comparison.new, "sections_old": changes.sections_old,
            "sections_new": changes.sections_new, "counts": {**changes.counts, "unchanged": changes.unchanged},
            "changes": [c for c in changes.changes if not kind or c.kind == kind],
        }).data)
