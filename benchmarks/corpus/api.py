"""Read-only API of snapshots and provisions, with explicit serializers (no ``__all__``)."""

from __future__ import annotations

from drf_spectacular.utils import extend_schema, extend_schema_field, extend_schema_view
from rest_framework import generics, serializers

from benchmarks.corpus.models import Provision, SourceSnapshot
from reviewapp.core.auth.roles import CanViewReports
from reviewapp.core.http.api import READ_ERRORS, error_responses
from reviewapp.core.http.api_filters import IdFilter, TextFilter

# A list answers 400 for a filter, limit or offset out of range (reviewapp.core.http.api_filters), naming it.
LIST_ERRORS = error_responses(400, 403)


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


class PassageOut(serializers.Serializer):
    rule = serializers.CharField()
    caption = serializers.CharField()
    text = serializers.CharField()
    word_count = serializers.IntegerField()
    truncated = serializers.BooleanField()
    sha256 = serializers.CharField()


class ProvisionDetailOut(ProvisionOut):
    passages = serializers.SerializerMethodField()

    class Meta(ProvisionOut.Meta):
        fields = [*ProvisionOut.Meta.fields, "body", "history", "notes", "passages"]

    @extend_schema_field(PassageOut(many=True))
    def get_passages(self, obj: Provision) -> list[dict]:
        return [{"rule": p.rule, "caption": p.caption, "text": p.text, "word_count": p.word_count,
                 "truncated": p.truncated, "sha256": p.sha256} for p in obj.passages.all()]


@extend_schema_view(get=extend_schema(responses={200: SnapshotOut(many=True), **LIST_ERRORS}))
class SnapshotList(generics.ListAPIView):
    permission_classes = [CanViewReports]
    serializer_class = SnapshotOut
    queryset = SourceSnapshot.objects.order_by("id")


@extend_schema_view(get=extend_schema(responses={200: ProvisionOut(many=True), **LIST_ERRORS}))
class ProvisionList(generics.ListAPIView):
    permission_classes = [CanViewReports]
    serializer_class = ProvisionOut
    queryset = Provision.objects.order_by("snapshot_id", "position")
    # Checked and applied by the API's filter layer (an id that is not a whole number in range is a 400).
    query_filters = {"corpus": TextFilter(), "chapter": TextFilter(), "citation": TextFilter(), "snapshot": IdFilter()}


@extend_schema_view(get=extend_schema(responses={200: ProvisionDetailOut, **error_responses(*READ_ERRORS)}))
class ProvisionDetail(generics.RetrieveAPIView):
    permission_classes = [CanViewReports]
    serializer_class = ProvisionDetailOut
    queryset = Provision.objects.prefetch_related("passages")
