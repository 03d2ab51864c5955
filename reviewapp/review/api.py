"""API of the blinded review (/api/v1/review/). Thin; explicit serializers with explicit fields.

Reviewer endpoints (``CanGrade``) answer only about the caller's own
assignments and judgments; an item not assigned to the caller is a 404.
Reviewer serializers are built from the reviewer dataclasses, which carry no
rank, score, system, external reference or other reviewer's grade.
Admin endpoints (``CanManageReviews``): pools, assignment, progress,
agreement, exports.
"""

from __future__ import annotations

import dataclasses
import json
import math
from typing import Any

from django.contrib.auth import get_user_model
from django.core.exceptions import ObjectDoesNotExist
from django.http import Http404, HttpResponse
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import (
    OpenApiParameter,
    OpenApiResponse,
    extend_schema,
    extend_schema_field,
    inline_serializer,
)
from rest_framework import serializers, status
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from reviewapp.core.auth.roles import CanGrade, CanManageReviews
from reviewapp.core.http.api import READ_ERRORS, WRITE_ERRORS, error_responses
from reviewapp.review import selectors, services
from reviewapp.review.agreement import exports
from reviewapp.review.agreement import selectors as agreement
from reviewapp.review.day.openings import item_opening_record
from reviewapp.review.models import ReviewItem, ReviewPool

# ---------------------------------------------------------------------------
# Reviewer
# ---------------------------------------------------------------------------


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
    label = serializers.CharField()
    help_text = serializers.CharField()


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
        return GradeTypeOut(obj.kind.grade_types, many=True).data

    @extend_schema_field(ScaleOut(many=True))
    def get_scale(self, obj) -> list[dict]:
        return ScaleOut([{"value": v, "key": k, "meaning": m} for v, k, m in obj.kind.scale], many=True).data


def _assigned_or_404(request: Request, item_id: str) -> selectors.ReviewerItem:
    try:
        return selectors.reviewer_item(reviewer=request.user, item_id=item_id)
    except services.NotAssigned:
        raise Http404 from None


def _reviewer_item_out(request: Request, item_id: str) -> dict:
    """The reviewer's item as the API shows it, with the hashes of the texts shown (404 if not theirs)."""
    try:
        assignment = selectors.reviewer_assignment(reviewer=request.user, item_id=item_id)
    except services.NotAssigned:
        raise Http404 from None
    view = selectors.reviewer_item_view(assignment=assignment)
    return ReviewerItemOut(view, context={"shown": services.item_shown_hashes(assignment.item)}).data


QUEUE_API_PAGE_SIZE = 1000


class QueueApi(APIView):
    permission_classes = [CanGrade]

    @extend_schema(
        parameters=[
            OpenApiParameter("pool", str, description="The pool whose page ``page`` is (every pool when absent)."),
            OpenApiParameter("page", int, description=f"Page of {QUEUE_API_PAGE_SIZE} items (default 1)."),
        ],
        responses={200: QueueOut(many=True), **error_responses(403)},
    )
    def get(self, request: Request) -> Response:
        try:
            page = int(request.query_params.get("page", "1"))
        except ValueError:
            page = 1
        # A page as long as every queue clients read whole before pages existed; longer ones come a page at a time.
        queues = selectors.reviewer_queue_pages(reviewer=request.user, page=page,
                                                page_pool=request.query_params.get("pool", ""),
                                                page_size=QUEUE_API_PAGE_SIZE)
        return Response(QueueOut(queues, many=True).data)


class ItemApi(APIView):
    permission_classes = [CanGrade]

    @extend_schema(responses={200: ReviewerItemOut, **error_responses(*READ_ERRORS)})
    def get(self, request: Request, item_id: str) -> Response:
        out = _reviewer_item_out(request, item_id)
        # Fetching the item opens it: the time spent on it starts here (per item, as on the item page).
        item_opening_record(item=selectors.reviewer_assignment(reviewer=request.user, item_id=item_id).item,
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
    def post(self, request: Request, item_id: str) -> Response:
        view = _assigned_or_404(request, item_id)
        data = self.JudgmentIn(data=request.data)
        data.is_valid(raise_exception=True)
        item = ReviewItem.objects.select_related("pool").get(public_id=view.item_id)
        try:
            result = services.judgment_submit(
                item=item, reviewer=request.user, grades=data.validated_data["grades"],
                complete=data.validated_data["complete"], note=data.validated_data["note"],
                shown={field: data.validated_data[field] for field in services.SHOWN_HASH_FIELDS},
                spans=data.validated_data["spans"],
            )
        except services.TextChanged as changed:
            # Nothing saved; the body carries the new texts and their hashes to grade again.
            body = {"detail": str(changed), "changed": changed.changed, "item": _reviewer_item_out(request, item_id)}
            return Response(body, status=status.HTTP_409_CONFLICT)
        except services.ReviewError as error:
            return Response({"detail": str(error)}, status=status.HTTP_400_BAD_REQUEST)
        revision = selectors.reviewer_history(reviewer=request.user, item_id=item_id)[result.revision.number - 1]
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
    def post(self, request: Request, item_id: str) -> Response:
        view = _assigned_or_404(request, item_id)
        item = ReviewItem.objects.select_related("pool").get(public_id=view.item_id)
        try:
            result = services.judgment_reopen(item=item, reviewer=request.user)
        except services.ReviewError as error:
            return Response({"detail": str(error)}, status=status.HTTP_400_BAD_REQUEST)
        revision = selectors.reviewer_history(reviewer=request.user, item_id=item_id)[result.revision.number - 1]
        body = {"item": view.item_id, "created": result.created, "revision": revision}
        return Response(self.ReopenOut(body).data, status=201 if result.created else 200)


class HistoryApi(APIView):
    permission_classes = [CanGrade]

    @extend_schema(responses={200: RevisionOut(many=True), **error_responses(*READ_ERRORS)})
    def get(self, request: Request, item_id: str) -> Response:
        try:
            revisions = selectors.reviewer_history(reviewer=request.user, item_id=item_id)
        except services.NotAssigned:
            raise Http404 from None
        return Response(RevisionOut(revisions, many=True).data)


# ---------------------------------------------------------------------------
# Admin
# ---------------------------------------------------------------------------


def _pool_or_404(pool_id: str) -> ReviewPool:
    try:
        return selectors.pool_get(public_id=pool_id)
    except ObjectDoesNotExist:
        raise Http404 from None


class PoolOut(serializers.Serializer):
    id = serializers.CharField(source="public_id")
    name = serializers.CharField()
    kind = serializers.CharField()
    declared_rule = serializers.CharField()
    reviewers_per_item = serializers.IntegerField()
    items = serializers.IntegerField()
    assignments = serializers.IntegerField()
    completed = serializers.IntegerField()
    created_at = serializers.DateTimeField()


class ItemIn(serializers.Serializer):
    query_id = serializers.CharField(max_length=200)
    doc_id = serializers.CharField(max_length=500)
    query_text = serializers.CharField()
    source_heading = serializers.CharField(allow_blank=True, default="")
    source_text = serializers.CharField(allow_blank=True, default="")
    passage_caption = serializers.CharField(allow_blank=True, default="")
    passage_text = serializers.CharField(allow_blank=True, default="")
    query_hash = serializers.CharField(required=False, max_length=64)
    source_hash = serializers.CharField(required=False, max_length=64)
    passage_hash = serializers.CharField(required=False, max_length=64)
    external_ref = serializers.DictField(required=False, default=dict)


class PoolsApi(APIView):
    permission_classes = [CanManageReviews]

    class PoolCreateIn(serializers.Serializer):
        name = serializers.CharField(max_length=200)
        kind = serializers.CharField()
        declared_rule = serializers.CharField()
        declared_params = serializers.DictField(required=False, default=dict)
        reviewers_per_item = serializers.IntegerField(min_value=1, default=2)
        reviewer_title = serializers.CharField(allow_blank=True, default="", max_length=200)
        instructions = serializers.CharField(allow_blank=True, default="")
        items = ItemIn(many=True, allow_empty=False)

    @extend_schema(responses={200: PoolOut(many=True), **error_responses(403)})
    def get(self, request: Request) -> Response:
        return Response(PoolOut(selectors.pool_list(), many=True).data)

    @extend_schema(request=PoolCreateIn, responses={201: PoolOut, **error_responses(*WRITE_ERRORS)})
    def post(self, request: Request) -> Response:
        data = self.PoolCreateIn(data=request.data)
        data.is_valid(raise_exception=True)
        try:
            pool = services.pool_create(created_by=request.user, **data.validated_data)
        except services.ReviewError as error:
            return Response({"detail": str(error)}, status=status.HTTP_400_BAD_REQUEST)
        summary = next(p for p in selectors.pool_list() if p.pk == pool.pk)
        return Response(PoolOut(summary).data, status=status.HTTP_201_CREATED)


class AssignApi(APIView):
    permission_classes = [CanManageReviews]

    class AssignIn(serializers.Serializer):
        reviewers = serializers.ListField(child=serializers.CharField(), allow_empty=False)
        per_item = serializers.IntegerField(min_value=1, required=False)

    @extend_schema(request=AssignIn, responses={
        200: inline_serializer("AssignedOut", {"added": serializers.IntegerField(help_text="assignments made")}),
        **error_responses(*WRITE_ERRORS, 404)})
    def post(self, request: Request, pool_id: str) -> Response:
        pool = _pool_or_404(pool_id)
        data = self.AssignIn(data=request.data)
        data.is_valid(raise_exception=True)
        User = get_user_model()
        names = data.validated_data["reviewers"]
        users = list(User.objects.filter(**{f"{User.USERNAME_FIELD}__in": names}))
        missing = sorted(set(names) - {u.get_username() for u in users})
        if missing:
            return Response({"detail": f"unknown reviewer(s): {missing}"}, status=status.HTTP_400_BAD_REQUEST)
        try:
            added = services.pool_assign(pool=pool, reviewers=users, per_item=data.validated_data.get("per_item"))
        except services.ReviewError as error:
            return Response({"detail": str(error)}, status=status.HTTP_400_BAD_REQUEST)
        return Response({"added": added})


class ReviewerProgressOut(serializers.Serializer):
    username = serializers.CharField()
    assigned = serializers.IntegerField()
    complete = serializers.IntegerField()
    draft = serializers.IntegerField()
    not_started = serializers.IntegerField()
    stale = serializers.IntegerField()


class QueryProgressOut(serializers.Serializer):
    query_id = serializers.CharField()
    items = serializers.IntegerField()
    assignments = serializers.IntegerField()
    complete = serializers.IntegerField()
    labelled = serializers.IntegerField()


class ProgressOut(serializers.Serializer):
    items = serializers.IntegerField()
    assignments = serializers.IntegerField()
    complete = serializers.IntegerField()
    stale = serializers.IntegerField()
    per_reviewer = ReviewerProgressOut(many=True)
    per_query = QueryProgressOut(many=True)


class ProgressApi(APIView):
    permission_classes = [CanManageReviews]

    @extend_schema(responses={200: ProgressOut, **error_responses(*READ_ERRORS)})
    def get(self, request: Request, pool_id: str) -> Response:
        return Response(ProgressOut(agreement.pool_progress(pool=_pool_or_404(pool_id))).data)


class PoolUnitIntervalOut(serializers.Serializer):
    """A statistic's percentile bootstrap interval with the units resampled (scoring.stats.bootstrap.UnitBootstrap)."""

    estimate = serializers.FloatField(allow_null=True, source="interval.estimate")
    low = serializers.FloatField(allow_null=True, source="interval.low")
    high = serializers.FloatField(allow_null=True, source="interval.high")
    level = serializers.FloatField(source="interval.level")
    unit = serializers.CharField()
    units = serializers.IntegerField()
    observation = serializers.CharField()
    observations = serializers.IntegerField()
    replicates = serializers.IntegerField()
    seed = serializers.IntegerField()
    undefined_replicates = serializers.IntegerField(source="undefined")
    caveat = serializers.CharField(allow_null=True)

    def to_representation(self, instance):
        data = super().to_representation(instance)
        # NaN is not JSON: an undefined estimate or a missing bound is null.
        return {k: (None if isinstance(v, float) and math.isnan(v) else v) for k, v in data.items()}


class PairOut(serializers.Serializer):
    reviewer_a = serializers.CharField()
    reviewer_b = serializers.CharField()
    n = serializers.IntegerField()
    excluded = serializers.IntegerField()
    raw_agreement = serializers.FloatField(allow_null=True)
    kappa_quadratic = serializers.FloatField(allow_null=True)
    band = serializers.CharField(allow_null=True)
    kappa_interval = PoolUnitIntervalOut()
    raw_agreement_interval = PoolUnitIntervalOut()
    agreements = serializers.IntegerField(help_text="items on which the two grades are equal")
    ac2_quadratic = serializers.FloatField(
        allow_null=True, help_text="Gwet's AC2 with quadratic weights (equals AC1 for a yes/no grade)"
    )
    ac2_interval = PoolUnitIntervalOut()
    ac1 = serializers.FloatField(allow_null=True, help_text="Gwet's AC1, nominal")
    pabak = serializers.FloatField(allow_null=True, help_text="prevalence- and bias-adjusted kappa")
    prevalence = serializers.SerializerMethodField()
    paradox_note = serializers.CharField(help_text="the kappa paradox in one line, or ''")

    @extend_schema_field(serializers.DictField(child=serializers.FloatField()))
    def get_prevalence(self, row: Any) -> dict[str, float]:
        return {str(grade): share for grade, share in row.prevalence}


class AgreementOut(serializers.Serializer):
    grade_type = serializers.CharField()
    pairs = PairOut(many=True)
    alpha = serializers.FloatField(allow_null=True)
    alpha_items = serializers.IntegerField()
    alpha_values = serializers.IntegerField()
    reviewers = serializers.IntegerField()
    alpha_interval = PoolUnitIntervalOut()


class PoolAgreementOut(serializers.Serializer):
    label_rule = serializers.CharField()
    grade_types = AgreementOut(many=True)


class AgreementApi(APIView):
    permission_classes = [CanManageReviews]

    @extend_schema(responses={200: PoolAgreementOut, **error_responses(*READ_ERRORS)})
    def get(self, request: Request, pool_id: str) -> Response:
        pool = _pool_or_404(pool_id)
        return Response(
            {"label_rule": selectors.LABEL_RULE,
             "grade_types": AgreementOut(agreement.pool_agreement(pool=pool), many=True).data}
        )


class QrelsApi(APIView):
    permission_classes = [CanManageReviews]

    @extend_schema(
        parameters=[OpenApiParameter("grade_type", str, description="which grade (default: the kind's first)")],
        responses={(200, "text/plain"): OpenApiResponse(OpenApiTypes.STR, description="TREC qrels"),
                   (400, "text/plain"): OpenApiResponse(OpenApiTypes.STR, description="unknown grade type"),
                   **error_responses(*READ_ERRORS)})
    def get(self, request: Request, pool_id: str) -> HttpResponse:
        pool = _pool_or_404(pool_id)
        try:
            body = exports.pool_qrels(pool=pool, grade_type=request.query_params.get("grade_type") or None)
        except ValueError as error:
            return HttpResponse(str(error), status=400, content_type="text/plain; charset=utf-8")
        return HttpResponse(body, content_type="text/plain; charset=utf-8")


class JudgmentsExportApi(APIView):
    permission_classes = [CanManageReviews]

    @extend_schema(
        parameters=[OpenApiParameter("pseudonymise", bool, description="reviewer names replaced by stable ids"),
                    OpenApiParameter("drafts", bool, description="include draft judgments")],
        responses={200: OpenApiResponse({"type": "array", "items": {"type": "object", "additionalProperties": {}}},
                                        description="one object per judgment (the JSON Lines export as a list)"),
                   **error_responses(*READ_ERRORS)})
    def get(self, request: Request, pool_id: str) -> Response:
        pool = _pool_or_404(pool_id)
        lines = exports.pool_jsonl(
            pool=pool,
            pseudonymise=request.query_params.get("pseudonymise") in ("1", "true"),
            include_drafts=request.query_params.get("drafts") in ("1", "true"),
        )
        return Response([json.loads(line) for line in lines])


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
    def post(self, request: Request) -> Response:
        data = self.LabelSourceIn(data=request.data)
        data.is_valid(raise_exception=True)
        try:
            source = services.label_source_import(created_by=request.user, **data.validated_data)
        except services.ReviewError as error:
            return Response({"detail": str(error)}, status=status.HTTP_400_BAD_REQUEST)
        summary = next(s for s in selectors.label_source_list() if s.pk == source.pk)
        return Response(self.LabelSourceOut(dataclasses.asdict(summary)).data, status=status.HTTP_201_CREATED)
