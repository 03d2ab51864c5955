"""Project-level API endpoints: who am I (roles), and the API index."""

from __future__ import annotations

from drf_spectacular.utils import extend_schema
from rest_framework import serializers
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from reviewapp.core.access import roles_of


class MeApi(APIView):
    class OutputSerializer(serializers.Serializer):
        username = serializers.CharField()
        roles = serializers.ListField(child=serializers.CharField())

    @extend_schema(responses=OutputSerializer)
    def get(self, request: Request) -> Response:
        data = {"username": request.user.get_username(), "roles": roles_of(request.user)}
        return Response(self.OutputSerializer(data).data)


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
