"""The reviewer's API (/api/v1/review/queue/, items/<id>/...). Thin; explicit serializers with explicit fields.

Reviewer endpoints (``CanGrade``) answer only about the caller's own assignments and judgments; an item not
assigned to the caller is a 404. Reviewer serializers are built from the reviewer dataclasses, which carry no
rank, score, system, external reference or other reviewer's grade.
"""

from __future__ import annotations

from django.http import Http404
from drf_spectacular.utils import OpenApiParameter, OpenApiResponse, extend_schema, extend_schema_field
from rest_framework import serializers, status
from rest_framework.response import Response
from rest_framework.views import APIView

from reviewapp.core.auth.roles import CanGrade
from reviewapp.core.http.api import READ_ERRORS, WRITE_ERRORS, error_responses
from reviewapp.core.http.api_filters import MAX_DB_INTEGER, number_parameter
from reviewapp.core.http.requests import SignedInRequest
from reviewapp.review.day.openings import item_opening_record
from reviewapp.review.errors import NotAssigned, ReviewError
from reviewapp.review.judgments.models import ReviewItem
from reviewapp.review.workspace.queue import reviewer_queue_pages
from reviewapp.review.workspace.selectors import (
    ReviewerItem,
    reviewer_assignment,
    reviewer_history,
    reviewer_item,
    reviewer_item_view,
)
from reviewapp.review.workspace.services import (
    SHOWN_HASH_FIELDS,
    TextChanged,
    item_shown_hashes,
    judgment_reopen,
    judgment_submit,
)


@extend_schema_field({"oneOf": [{"type": "integer"}, {"type": "string", "enum": ["unknown"]}]})
class GradeValueField(serializers.Field):
    """A grade on the pool's scale (an integer) or the string "unknown"."""

    def to_representation(self, value):
        return value

    def to_internal_value(self, data):
        if isinstance(data, bool) or not isinstance(data, int | str):
            raise serializers.ValidationError("a grade (integer) or \"unknown\"")
        return data


class QueueEntryOut(serializers.Serializer):
    item = serializers.CharField(source="item_id")
    position = serializers.IntegerField()
    status = serializers.CharField()
    needs_regrade = serializers.BooleanField()


class QueueOut(serializers.Serializer):
    pool = serializers.CharField(source="pool_id")
    title = serializers.CharField()
    instructions = serializers.CharField()
    kind = serializers.CharField()
    completed = serializers.IntegerField()
    total = serializers.IntegerField()
    items = QueueEntryOut(source="entries", many=True)
    page = serializers.IntegerField(help_text="This page of the pool's items (1-based).")
    pages = serializers.IntegerField(help_text="Pages of the pool's items; ask for more with ?pool=&page=.")


def _pair() -> serializers.ListField:
    return serializers.ListField(child=serializers.IntegerField(), min_length=2, max_length=2)


class RevisionOut(serializers.Serializer):
    number = serializers.IntegerField()
    status = serializers.CharField()
    grades = serializers.DictField(child=GradeValueField())
    note = serializers.CharField()
    created_at = serializers.DateTimeField()
    spans = serializers.ListField(child=_pair(), help_text=(
        "Your spans of the source text ([start, end], half-open character offsets, sorted, trimmed of white "
        "space); [] on kinds not answered with spans."))


class SpanLocationsOut(serializers.Serializer):
    unit = serializers.CharField(help_text="What the original is divided into: page, paragraph or line.")
    starts = serializers.ListField(child=_pair(), help_text="[offset, unit number] where each unit starts.")


class ScaleOut(serializers.Serializer):
    value = serializers.IntegerField()
    key = serializers.CharField()
    meaning = serializers.CharField()


class GradeTypeOut(serializers.Serializer):
    key = serializers.CharField()
    # The metaclass moves declared fields off the class, so these do not replace Field.label/help_text; the
    # stubs see an attribute of Field redefined.
    label = serializers.CharField()  # type: ignore[assignment]
    help_text = serializers.CharField()  # type: ignore[assignment]


class ReviewerItemOut(serializers.Serializer):
    item = serializers.CharField(source="item_id")
    pool = serializers.CharField(source="pool_id")
    position = serializers.IntegerField()
    total = serializers.IntegerField()
    previous = serializers.CharField(source="previous_id", allow_null=True)
    next = serializers.CharField(source="next_id", allow_null=True)
    query_text = serializers.CharField()
    source_heading = serializers.CharField()
    source_text = serializers.CharField()
    passage_caption = serializers.CharField()
    passage_text = serializers.CharField()
    grade_types = serializers.SerializerMethodField()
    scale = serializers.SerializerMethodField()
    current = RevisionOut(allow_null=True)
    needs_regrade = serializers.BooleanField()
    # The hashes of the texts above; a judgment POST sends them back (a changed text is a 409, nothing saved).
    query_hash = serializers.SerializerMethodField()
    source_hash = serializers.SerializerMethodField()
    passage_hash = serializers.SerializerMethodField()
    answers_spans = serializers.SerializerMethodField()
    span_locations = SpanLocationsOut(allow_null=True)

    def get_answers_spans(self, obj) -> bool:
        return obj.kind.answers_spans

    def get_query_hash(self, obj) -> str:
        return self.context["shown"]["query_hash"]

    def get_source_hash(self, obj) -> str:
        return self.context["shown"]["source_hash"]

    def get_passage_hash(self, obj) -> str:
        return self.context["shown"]["passage_hash"]

    @extend_schema_field(GradeTypeOut(many=True))
    def get_grade_types(self, obj) -> list[dict]:
        # many=True makes .data a ReturnList; the stubs type every serializer's .data as a ReturnDict.
        return GradeTypeOut(obj.kind.grade_types, many=True).data  # type: ignore[return-value]

    @extend_schema_field(ScaleOut(many=True))
    def get_scale(self, obj) -> list[dict]:
        scale = [{"value": v, "key": k, "meaning": m} for v, k, m in obj.kind.scale]
        return ScaleOut(scale, many=True).data  # type: ignore[return-value]  # a ReturnList, as above


def _assigned_or_404(request: SignedInRequest, item_id: str) -> ReviewerItem:
    try:
        return reviewer_item(reviewer=request.user, item_id=item_id)
    except NotAssigned:
        raise Http404 from None


def _reviewer_item_out(request: SignedInRequest, item_id: str) -> dict:
    """The reviewer's item as the API shows it, with the hashes of the texts shown (404 if not theirs)."""
    try:
        assignment = reviewer_assignment(reviewer=request.user, item_id=item_id)
    except NotAssigned:
        raise Http404 from None
    view = reviewer_item_view(assignment=assignment)
    return ReviewerItemOut(view, context={"shown": item_shown_hashes(assignment.item)}).data


QUEUE_API_PAGE_SIZE = 1000


class QueueApi(APIView):
    permission_classes = [CanGrade]

    @extend_schema(
        parameters=[
            OpenApiParameter("pool", str, description="The pool whose page ``page`` is (every pool when absent)."),
            number_parameter("page", minimum=1, maximum=MAX_DB_INTEGER,
                             description=f"Page of {QUEUE_API_PAGE_SIZE} items (default 1)."),
        ],
        responses={200: QueueOut(many=True), **error_responses(403)},
    )
    def get(self, request: SignedInRequest) -> Response:
        try:
            page = int(request.query_params.get("page", "1"))
        except ValueError:
            page = 1
        # A page as long as every queue clients read whole before pages existed; longer ones come a page at a time.
        queues = reviewer_queue_pages(reviewer=request.user, page=page,
                                      page_pool=request.query_params.get("pool", ""),
                                      page_size=QUEUE_API_PAGE_SIZE)
        return Response(QueueOut(queues, many=True).data)


class ItemApi(APIView):
    permission_classes = [CanGrade]

    @extend_schema(responses={200: ReviewerItemOut, **error_responses(*READ_ERRORS)})
    def get(self, request: SignedInRequest, item_id: str) -> Response:
        out = _reviewer_item_out(request, item_id)
        # Fetching the item opens it: the time spent on it starts here (per item, as on the item page).
        item_opening_record(item=reviewer_assignment(reviewer=request.user, item_id=item_id).item,
                            reviewer=request.user)
        return Response(out)


class JudgmentApi(APIView):
    permission_classes = [CanGrade]

    class JudgmentIn(serializers.Serializer):
        grades = serializers.DictField(child=GradeValueField(allow_null=True), allow_empty=True)
        complete = serializers.BooleanField(default=False)
        note = serializers.CharField(allow_blank=True, default="", max_length=5000)
        # The hashes GET /api/v1/review/items/<id>/ gave with the texts the grades were given on.
        query_hash = serializers.CharField(max_length=64)
        source_hash = serializers.CharField(max_length=64)
        passage_hash = serializers.CharField(max_length=64)
        # Checked by the service (its messages name the span): [[start, end], ...] into the source text.
        spans = serializers.JSONField(required=False, default=None, help_text=(
            "Kinds answered with spans only: [[start, end], ...] half-open character offsets into source_text; "
            "trimmed of white space, sorted and merged by the server."))

    class JudgmentSaved(serializers.Serializer):
        item = serializers.CharField()
        created = serializers.BooleanField()
        revision = RevisionOut()

    class TextChangedOut(serializers.Serializer):
        detail = serializers.CharField()
        changed = serializers.ListField(child=serializers.CharField())
        item = ReviewerItemOut()

    @extend_schema(request=JudgmentIn, responses={
        200: JudgmentSaved, 201: JudgmentSaved,
        **error_responses(*WRITE_ERRORS, 404, 409, conflict=OpenApiResponse(
            TextChangedOut, description="a text changed since it was shown: nothing saved; grade the new texts"))})
    def post(self, request: SignedInRequest, item_id: str) -> Response:
        view = _assigned_or_404(request, item_id)
        data = self.JudgmentIn(data=request.data)
        data.is_valid(raise_exception=True)
        item = ReviewItem.objects.select_related("pool").get(public_id=view.item_id)
        try:
            result = judgment_submit(
                item=item, reviewer=request.user, grades=data.validated_data["grades"],
                complete=data.validated_data["complete"], note=data.validated_data["note"],
                shown={field: data.validated_data[field] for field in SHOWN_HASH_FIELDS},
                spans=data.validated_data["spans"],
            )
        except TextChanged as changed:
            # Nothing saved; the body carries the new texts and their hashes to grade again.
            body: dict[str, object] = {
                "detail": str(changed), "changed": changed.changed, "item": _reviewer_item_out(request, item_id)}
            return Response(body, status=status.HTTP_409_CONFLICT)
        except ReviewError as error:
            return Response({"detail": str(error)}, status=status.HTTP_400_BAD_REQUEST)
        revision = reviewer_history(reviewer=request.user, item_id=item_id)[result.revision.number - 1]
        body = {"item": view.item_id, "created": result.created, "revision": revision}
        return Response(self.JudgmentSaved(body).data, status=201 if result.created else 200)


class JudgmentReopenApi(APIView):
    """Reopen a completed judgment as a draft (the only way to change it); the completed revision stays."""

    permission_classes = [CanGrade]

    class ReopenOut(serializers.Serializer):
        item = serializers.CharField()
        created = serializers.BooleanField()
        revision = RevisionOut()

    @extend_schema(request=None,
                   responses={200: ReopenOut, 201: ReopenOut, **error_responses(400, *READ_ERRORS)})
    def post(self, request: SignedInRequest, item_id: str) -> Response:
        view = _assigned_or_404(request, item_id)
        item = ReviewItem.objects.select_related("pool").get(public_id=view.item_id)
        try:
            result = judgment_reopen(item=item, reviewer=request.user)
        except ReviewError as error:
            return Response({"detail": str(error)}, status=status.HTTP_400_BAD_REQUEST)
        revision = reviewer_history(reviewer=request.user, item_id=item_id)[result.revision.number - 1]
        body = {"item": view.item_id, "created": result.created, "revision": revision}
        return Response(self.ReopenOut(body).data, status=201 if result.created else 200)


class HistoryApi(APIView):
    permission_classes = [CanGrade]

    @extend_schema(responses={200: RevisionOut(many=True), **error_responses(*READ_ERRORS)})
    def get(self, request: SignedInRequest, item_id: str) -> Response:
        try:
            revisions = reviewer_history(reviewer=request.user, item_id=item_id)
        except NotAssigned:
            raise Http404 from None
        return Response(RevisionOut(revisions, many=True).data)
