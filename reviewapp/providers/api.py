"""Provider API: a ledger's spend against its budget (explicit fields)."""

from __future__ import annotations

from django.shortcuts import get_object_or_404
from drf_spectacular.utils import extend_schema, extend_schema_serializer
from rest_framework import serializers
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from reviewapp.core.auth.roles import CanViewReports
from reviewapp.core.http.api import READ_ERRORS, error_responses
from reviewapp.providers.models import Ledger
from reviewapp.providers.selectors import ledger_spend


class LedgerApi(APIView):
    permission_classes = [CanViewReports]

    @extend_schema_serializer(component_name="LedgerOut")
    class Output(serializers.Serializer):
        id = serializers.IntegerField()
        purpose = serializers.CharField()
        provider = serializers.CharField()
        model_id = serializers.CharField()
        requests = serializers.IntegerField(help_text="requests sent (whose body left this server)")
        not_sent = serializers.IntegerField(help_text="requests refused before leaving (no key, unreachable)")
        max_requests = serializers.IntegerField()
        input_tokens = serializers.IntegerField()
        reported_input_tokens = serializers.IntegerField()
        estimated_input_tokens = serializers.IntegerField(help_text="estimate for sent requests with no usage")
        max_input_tokens = serializers.IntegerField()
        by_status = serializers.DictField(child=serializers.IntegerField())
        stop_reason = serializers.CharField(allow_blank=True)

    @extend_schema(responses={200: Output, **error_responses(*READ_ERRORS)})
    def get(self, request: Request, pk: int) -> Response:
        ledger = get_object_or_404(Ledger, pk=pk)
        spend = ledger_spend(ledger=ledger)
        data = {"id": ledger.pk, "purpose": ledger.purpose, "provider": ledger.provider, "model_id": ledger.model_id,
                **{k: getattr(spend, k) for k in ("requests", "not_sent", "max_requests", "input_tokens",
                                                  "reported_input_tokens", "estimated_input_tokens",
                                                  "max_input_tokens", "by_status", "stop_reason")}}
        return Response(self.Output(data).data)
