"""API of pools (/api/v1/review/pools/): the list, and declaring a pool with its items. Explicit serializers."""

from __future__ import annotations

from django.core.exceptions import ObjectDoesNotExist
from django.http import Http404
from drf_spectacular.utils import extend_schema
from rest_framework import serializers, status
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from reviewapp.core.auth.roles import CanManageReviews
from reviewapp.core.http.api import WRITE_ERRORS, error_responses
from reviewapp.core.http.requests import SignedInRequest
from reviewapp.review.errors import ReviewError
from reviewapp.review.pools.models import ReviewPool
from reviewapp.review.pools.selectors import pool_list, pool_model_get
from reviewapp.review.pools.services import pool_create_model


def pool_or_404(pool_id: str) -> ReviewPool:
    try:
        return pool_model_get(public_id=pool_id)
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
        return Response(PoolOut(pool_list(), many=True).data)

    @extend_schema(request=PoolCreateIn, responses={201: PoolOut, **error_responses(*WRITE_ERRORS)})
    def post(self, request: SignedInRequest) -> Response:
        data = self.PoolCreateIn(data=request.data)
        data.is_valid(raise_exception=True)
        try:
            pool = pool_create_model(created_by=request.user, **data.validated_data)
        except ReviewError as error:
            return Response({"detail": str(error)}, status=status.HTTP_400_BAD_REQUEST)
        summary = next(p for p in pool_list() if p.pk == pool.pk)
        return Response(PoolOut(summary).data, status=status.HTTP_201_CREATED)
