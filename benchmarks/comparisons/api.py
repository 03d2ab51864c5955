"""Declared comparisons in the API: the list (stakeholders and admins), and declaring one (admins)."""

from __future__ import annotations

from typing import Any

from django.urls import reverse
from drf_spectacular.utils import OpenApiExample, extend_schema, extend_schema_serializer
from rest_framework import serializers, status
from rest_framework.permissions import BasePermission, IsAuthenticated
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from benchmarks.comparisons.selectors import Declaration, comparison_list
from benchmarks.comparisons.services import ComparisonError, SystemChoice, comparison_declare
from benchmarks.reports.figures import PRIMARY_SPLIT
from benchmarks.rerank.models import RerankRun
from benchmarks.retrieval.models import RetrievalRun
from reviewapp.core.auth.roles import CanLaunchRuns, CanViewReports
from reviewapp.core.http.api import WRITE_ERRORS, error_responses
from reviewapp.core.http.api_filters import id_parameter


class ComparisonSystemOut(serializers.Serializer):
    # A declared field, which DRF's metaclass takes off the class: it shadows no attribute.
    label = serializers.CharField()  # type: ignore[assignment]
    retrieval_sha256 = serializers.CharField()
    rerank_sha256 = serializers.CharField(allow_blank=True, help_text="'' for keyword order alone")
    configuration = serializers.JSONField(help_text="retrieval and rerank configuration, as the held-out ledger "
                                                    "hashes it")


class ComparisonOut(serializers.Serializer):
    """A comparison planned together: one look at the held-out split for the ledger."""

    id = serializers.IntegerField()
    sha256 = serializers.CharField(help_text="of suite, split, the set of configurations, who declared it and when")
    suite = serializers.CharField()
    split = serializers.CharField()
    systems = ComparisonSystemOut(many=True)
    declared_by = serializers.CharField()
    declared_via = serializers.CharField()
    declared_at = serializers.DateTimeField()
    sentence = serializers.CharField(help_text="'planned together: N systems, declared by X on DATE; one exposure'")
    summary_url = serializers.CharField(help_text="the one-page summary of every declared system, with the verdict "
                                                  "over all of them")


class ComparisonListOut(serializers.Serializer):
    comparisons = ComparisonOut(many=True)


class ComparisonSystemIn(serializers.Serializer):
    retrieval_run = serializers.IntegerField()
    rerank_run = serializers.IntegerField(required=False, allow_null=True, default=None,
                                          help_text="omit or null: the retrieval run's keyword order alone")
    hybrid = serializers.BooleanField(required=False, default=False,
                                      help_text="true: the hybrid (RRF with keyword order) of rerank_run")


@extend_schema_serializer(examples=[OpenApiExample(
    "keyword order and two rerank runs", request_only=True,
    value={"systems": [{"retrieval_run": 1}, {"retrieval_run": 4}, {"retrieval_run": 1, "rerank_run": 2},
                       {"retrieval_run": 1, "rerank_run": 2, "hybrid": True}], "split": "heldout"})])
class ComparisonDeclareIn(serializers.Serializer):
    # max_length goes to the ListSerializer that many=True makes (the stubs' Serializer.__init__ omits it).
    systems = ComparisonSystemIn(many=True, allow_empty=False, max_length=100)  # type: ignore[call-arg]
    split = serializers.CharField(required=False, default=PRIMARY_SPLIT, max_length=10)


def _out(declaration: Declaration) -> dict[str, Any]:
    summary = (reverse("benchmarks:summary", args=[declaration.base_run_id]) + f"?comparison={declaration.pk}"
               if declaration.base_run_id is not None else "")
    return ComparisonOut(declaration.as_json() | {"declared_at": declaration.declared_at,
                                                  "summary_url": summary}).data


def _refused(errors: list[str]) -> Response:
    return Response({"errors": errors}, status=status.HTTP_400_BAD_REQUEST)


class ComparisonsApi(APIView):
    """GET: every declared comparison (of one suite with ``?suite=``). POST (admins): declare one, before any of
    its systems is scored on the held-out split; refused, naming the system, for one already scored. Any systems
    of one suite: keyword orders of several retrieval runs, rerank runs of any of them, hybrids."""

    def get_permissions(self) -> list[BasePermission]:
        if self.request.method == "POST":
            return [IsAuthenticated(), CanLaunchRuns()]
        return [CanViewReports()]

    @extend_schema(operation_id="benchmarks_comparisons_list",
                   parameters=[id_parameter("suite", description="only this suite's comparisons")],
                   responses={200: ComparisonListOut, **error_responses(400, 403)})
    def get(self, request: Request) -> Response:
        raw = request.query_params.get("suite", "")
        if raw and not raw.isdigit():
            return _refused([f"suite: expected a suite id, got {raw!r}"])
        return Response({"comparisons": [_out(d) for d in comparison_list(suite_id=int(raw) if raw else None)]})

    @extend_schema(operation_id="benchmarks_comparisons_declare", request=ComparisonDeclareIn,
                   responses={201: ComparisonOut, **error_responses(*WRITE_ERRORS)})
    def post(self, request: Request) -> Response:
        data = ComparisonDeclareIn(data=request.data)
        data.is_valid(raise_exception=True)
        wanted = data.validated_data["systems"]
        runs = RetrievalRun.objects.in_bulk({s["retrieval_run"] for s in wanted})
        reranks = RerankRun.objects.in_bulk({s["rerank_run"] for s in wanted if s["rerank_run"] is not None})
        errors = [f"systems[{n}].retrieval_run: no retrieval run #{s['retrieval_run']}"
                  for n, s in enumerate(wanted) if s["retrieval_run"] not in runs]
        errors += [f"systems[{n}].rerank_run: no rerank run #{s['rerank_run']}"
                   for n, s in enumerate(wanted) if s["rerank_run"] is not None and s["rerank_run"] not in reranks]
        if errors:
            return _refused(errors)
        errors = [f"systems[{n}].hybrid: a hybrid fuses keyword order with a rerank run: give rerank_run"
                  for n, s in enumerate(wanted) if s["hybrid"] and s["rerank_run"] is None]
        if errors:
            return _refused(errors)
        systems: list[SystemChoice] = [
            (runs[s["retrieval_run"]], reranks[s["rerank_run"]] if s["rerank_run"] is not None else None, s["hybrid"])
            for s in wanted]
        try:
            declared = comparison_declare(systems=systems, user=request.user, via="api",
                                          split=data.validated_data["split"])
        except ComparisonError as exc:
            return _refused([str(exc)])
        declaration = next(d for d in comparison_list(suite_id=declared.suite_id) if d.pk == declared.pk)
        return Response(_out(declaration), status=status.HTTP_201_CREATED)
