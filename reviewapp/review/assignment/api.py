"""API of assignment (/api/v1/review/pools/<id>/assign/): give a pool's items to reviewers by username."""

from __future__ import annotations

from django.contrib.auth import get_user_model
from drf_spectacular.utils import extend_schema, inline_serializer
from rest_framework import serializers, status
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from reviewapp.core.auth.roles import CanManageReviews
from reviewapp.core.http.api import WRITE_ERRORS, error_responses
from reviewapp.review.assignment.services import pool_assign
from reviewapp.review.errors import ReviewError
from reviewapp.review.pools.api import pool_or_404


class AssignApi(APIView):
    permission_classes = [CanManageReviews]

    class AssignIn(serializers.Serializer):
        reviewers = serializers.ListField(child=serializers.CharField(), allow_empty=False)
        per_item = serializers.IntegerField(min_value=1, required=False)

    @extend_schema(request=AssignIn, responses={
        200: inline_serializer("AssignedOut", {"added": serializers.IntegerField(help_text="assignments made")}),
        **error_responses(*WRITE_ERRORS, 404)})
    def post(self, request: Request, pool_id: str) -> Response:
        pool = pool_or_404(pool_id)
        data = self.AssignIn(data=request.data)
        data.is_valid(raise_exception=True)
        User = get_user_model()
        names = data.validated_data["reviewers"]
        users = list(User.objects.filter(**{f"{User.USERNAME_FIELD}__in": names}))
        missing = sorted(set(names) - {u.get_username() for u in users})
        if missing:
            return Response({"detail": f"unknown reviewer(s): {missing}"}, status=status.HTTP_400_BAD_REQUEST)
        try:
            added = pool_assign(pool=pool, reviewers=users, per_item=data.validated_data.get("per_item"))
        except ReviewError as error:
            return Response({"detail": str(error)}, status=status.HTTP_400_BAD_REQUEST)
        return Response({"added": added})
