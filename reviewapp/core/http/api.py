"""Project-level API endpoints (who am I), and the error bodies every app's API documents."""

from __future__ import annotations

from typing import Any

from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiExample, OpenApiResponse, extend_schema, extend_schema_serializer
from rest_framework import serializers
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from reviewapp.core.auth.roles import roles_of


class UnitIntervalOut(serializers.Serializer):
    """A statistic's percentile bootstrap interval and what was resampled (``UnitBootstrap.as_dict``).

    One component for every page's API that quotes Brier, ECE, kappa or alpha with its interval.
    """

    estimate = serializers.FloatField(allow_null=True)
    low = serializers.FloatField(allow_null=True)
    high = serializers.FloatField(allow_null=True)
    level = serializers.FloatField()
    method = serializers.CharField()
    unit = serializers.CharField()
    units = serializers.IntegerField()
    observation = serializers.CharField()
    observations = serializers.IntegerField()
    replicates = serializers.IntegerField()
    seed = serializers.IntegerField()
    undefined_replicates = serializers.IntegerField()
    caveat = serializers.CharField(allow_null=True)


class BootstrapOut(serializers.Serializer):
    """How a page's intervals were drawn: one component for every API that reports its bootstrap."""

    replicates = serializers.IntegerField()
    seed = serializers.IntegerField()
    level = serializers.FloatField()
    unit = serializers.CharField()
    method = serializers.CharField()


# ---------------------------------------------------------------------------
# Error bodies every endpoint documents (one component each, shared by every app's API)
# ---------------------------------------------------------------------------


class DetailOut(serializers.Serializer):
    """DRF's refusal: not signed in or not allowed (403), not found (404), a refused write (400)."""

    detail = serializers.CharField()


class ErrorOut(serializers.Serializer):
    """A report's parameters refused (bootstrap replicates, seed, secondary run...): one sentence."""

    error = serializers.CharField()


@extend_schema_serializer(examples=[
    OpenApiExample("field errors", value={"max_requests": ["Ensure this value is greater than or equal to 1."]},
                   response_only=True, status_codes=["400"]),
    OpenApiExample("refusal", value={"errors": ["retrieval_run: no retrieval run #9"]}, response_only=True,
                   status_codes=["400"]),
])
class BadRequestOut(serializers.Serializer):
    """A refused request: every problem by name, nothing written.

    Field errors are DRF's: each other key is a field (or query parameter) name with its messages (a nested
    field's value is an object or a list of them). ``errors`` lists problems found after the fields parsed.
    """

    # A declared field, which DRF's metaclass takes off the class: it shadows no attribute.
    errors = serializers.ListField(child=serializers.CharField(), required=False)  # type: ignore[assignment]
    detail = serializers.CharField(required=False)
    non_field_errors = serializers.ListField(child=serializers.CharField(), required=False)


TOO_LARGE = OpenApiResponse(OpenApiTypes.STR, description="request body over REQUEST_BODY_MAX_BYTES (text/plain)")


def error_responses(*codes: int, bad_request: Any = BadRequestOut, conflict: Any = None) -> dict:
    """The documented error responses of an endpoint, by status code (merge into ``extend_schema(responses=)``).

    403: not signed in, or the role may not (reviewers on reports, stakeholders on launches). 404: no such
    object (or, for a reviewer, not assigned to them). 413: a body over the limit, refused before parsing.
    """
    known: dict[Any, Any] = {
        400: bad_request,
        403: OpenApiResponse(DetailOut, description="not signed in, or this role may not"),
        404: OpenApiResponse(DetailOut, description="no such object"),
        409: conflict,
        (413, "text/plain"): TOO_LARGE,
    }
    out: dict[Any, Any] = {}
    for code in codes:
        key = (413, "text/plain") if code == 413 else code
        if known.get(key) is None:
            raise ValueError(f"error_responses: no body declared for {code}")
        out[key] = known[key]
    return out


READ_ERRORS = (403, 404)
WRITE_ERRORS = (400, 403, 413)


class MeApi(APIView):
    @extend_schema_serializer(component_name="MeOut")
    class Output(serializers.Serializer):
        username = serializers.CharField()
        roles = serializers.ListField(child=serializers.CharField())

    @extend_schema(responses={200: Output, **error_responses(403)})
    def get(self, request: Request) -> Response:
        data = {"username": request.user.get_username(), "roles": roles_of(request.user)}
        return Response(self.Output(data).data)
