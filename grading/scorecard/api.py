"""Scorecard, explorer and playground JSON API under /api/cuad/ (explicit serializers; reviewers get 403)."""

from __future__ import annotations

from rest_framework import serializers
from rest_framework.permissions import IsAuthenticated
from rest_framework.response import Response
from rest_framework.views import APIView

from grading.responses import refused
from grading.scorecard.explorer import explorer_json, explorer_view
from grading.scorecard.exports import scorecard_json
from grading.scorecard.params import ParameterError, parse_view
from grading.scorecard.playground import playground_grounding, playground_overlap
from grading.scorecard.selectors import scorecard_view
from reviewapp.core.access import CanViewReports


class FiguresSerializer(serializers.Serializer):
    precision = serializers.FloatField(allow_null=True)
    recall = serializers.FloatField(allow_null=True)
    f1 = serializers.FloatField(allow_null=True)
    ci = serializers.DictField(child=serializers.ListField(child=serializers.FloatField(allow_null=True)))
    counts = serializers.DictField(child=serializers.IntegerField())


class ScorecardSerializer(FiguresSerializer):
    run = serializers.DictField()
    matcher = serializers.CharField()
    thresholds = serializers.DictField(child=serializers.FloatField())
    population = serializers.CharField()
    bootstrap = serializers.DictField()
    other_matcher = serializers.DictField()
    extractions_outside_sample = serializers.IntegerField()
    per_category = serializers.DictField(child=FiguresSerializer())


class ScorecardApi(APIView):
    permission_classes = [IsAuthenticated, CanViewReports]

    def get(self, request):
        try:
            view = parse_view(request.query_params)
        except ParameterError as exc:
            return refused(exc.errors)
        card, comparison = scorecard_view(view=view)
        out = ScorecardSerializer(scorecard_json(card, view.sample)).data
        if comparison:
            out["comparison"] = [ScorecardSerializer(scorecard_json(c, view.sample)).data for c in comparison.cards]
        return Response(out)


class ExplorerItemSerializer(serializers.Serializer):
    id = serializers.IntegerField()
    category = serializers.CharField()
    text = serializers.CharField()
    outcome = serializers.CharField()
    located = serializers.DictField(allow_null=True)
    f1 = serializers.FloatField(required=False)
    grounding = serializers.FloatField(required=False)
    matched_span = serializers.IntegerField(required=False, allow_null=True)
    matched_extraction = serializers.IntegerField(required=False, allow_null=True)


class ExplorerSerializer(serializers.Serializer):
    run = serializers.DictField()
    thresholds = serializers.DictField(child=serializers.FloatField())
    matcher = serializers.CharField()
    type = serializers.CharField(allow_null=True)
    contract = serializers.DictField(allow_null=True)
    extractions = ExplorerItemSerializer(many=True)
    spans = ExplorerItemSerializer(many=True)
    contracts = serializers.ListField(child=serializers.DictField())


class ExplorerApi(APIView):
    permission_classes = [IsAuthenticated, CanViewReports]

    def get(self, request):
        try:
            view = parse_view(request.query_params)
        except ParameterError as exc:
            return refused(exc.errors)
        return Response(ExplorerSerializer(explorer_json(explorer_view(view=view))).data)


class PlaygroundSerializer(serializers.Serializer):
    f1 = serializers.FloatField()
    precision = serializers.FloatField()
    recall = serializers.FloatField()
    shared_tokens = serializers.IntegerField()
    grounding = serializers.FloatField()
    grounding_n = serializers.IntegerField()
    grounding_found = serializers.IntegerField()
    grounding_total = serializers.IntegerField()
    verbatim = serializers.BooleanField()


class PlaygroundApi(APIView):
    """The grader's two primitives: ``a``/``b`` -> token F1; ``claim``/``source`` -> grounding (GET or POST)."""

    permission_classes = [IsAuthenticated, CanViewReports]

    def _answer(self, params):
        overlap = playground_overlap(a=str(params.get("a", "")), b=str(params.get("b", "")))
        ground = playground_grounding(claim=str(params.get("claim", "")), source=str(params.get("source", "")))
        return Response(
            PlaygroundSerializer(
                {
                    "f1": overlap.f1,
                    "precision": overlap.precision,
                    "recall": overlap.recall,
                    "shared_tokens": overlap.shared,
                    "grounding": ground.grounding,
                    "grounding_n": ground.n,
                    "grounding_found": ground.found,
                    "grounding_total": ground.total,
                    "verbatim": ground.verbatim,
                }
            ).data
        )

    def get(self, request):
        return self._answer(request.query_params)

    def post(self, request):
        return self._answer(request.data)
