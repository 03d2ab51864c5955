"""Scorecard, explorer and playground JSON API under /api/v1/cuad/ (explicit serializers; reviewers get 403)."""

from __future__ import annotations

from typing import Any

from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework import serializers
from rest_framework.permissions import IsAuthenticated
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from grading.responses import refused
from grading.scorecard.explorer import explorer_json, explorer_view
from grading.scorecard.exports import beside_cuad_json, comparison_json, leaderboard_json, scorecard_json
from grading.scorecard.leaderboard import LeaderboardError, leaderboard_runs, leaderboard_view
from grading.scorecard.params import SORT_KEYS, ParameterError, parse_view
from grading.scorecard.playground import playground_check, playground_grounding, playground_overlap
from grading.scorecard.selectors import ComparisonError, conclusion, scorecard_view
from reviewapp.core.auth.roles import CanViewReports
from reviewapp.core.http.api import error_responses
from reviewapp.core.http.api_filters import id_parameter, number_parameter
from scoring.cuad.matching import MATCHERS

# The query of every scorecard-shaped view (grading.scorecard.params.parse_view); a bad one is a 400 naming it.
VIEW_PARAMETERS = [
    id_parameter("sample", description="sample id (default: the newest sample)"),
    id_parameter("run", many=True, description="run id (repeat to compare; default: the newest full run)"),
    number_parameter("correct", minimum=0, maximum=1, kind="number",
                     description="token-F1 threshold of a Correct match, 0-1, not below partial (default 0.70)"),
    number_parameter("partial", minimum=0, maximum=1, kind="number",
                     description="token-F1 floor of a Partial match, 0-1, not above correct (default 0.40)"),
    number_parameter("grounding", minimum=0, maximum=1, kind="number",
                     description="trigram grounding threshold, 0-1 (default 0.80)"),
    OpenApiParameter("matcher", str, enum=MATCHERS, description="span matcher (default hungarian)"),
    OpenApiParameter("sort", str, enum=SORT_KEYS, description="per-category sort column (default category)"),
    OpenApiParameter("dir", str, enum=("asc", "desc"), description="sort direction"),
    OpenApiParameter("type", str, description="one clause type (category name)"),
    id_parameter("contract", description="one contract id (explorer)"),
]
VIEW_ERRORS = error_responses(400, 403)


CUAD_EVALUATE_HELP = (
    "CUAD evaluate.py's AUPR and precision at 80%/90% recall with contract-bootstrap intervals, per category; "
    '{"available": false, "reason": ...} when the run has no confidences'
)


class FiguresOut(serializers.Serializer):
    precision = serializers.FloatField(allow_null=True)
    recall = serializers.FloatField(allow_null=True)
    f1 = serializers.FloatField(allow_null=True)
    ci = serializers.DictField(child=serializers.ListField(child=serializers.FloatField(allow_null=True)))
    counts = serializers.DictField(child=serializers.IntegerField())


class IntervalOut(serializers.Serializer):
    estimate = serializers.FloatField(allow_null=True)
    ci = serializers.ListField(child=serializers.FloatField(allow_null=True))
    note = serializers.CharField(allow_blank=True, required=False,
                                 help_text="why there is no interval (too few contracts), or few units")


class ScopeOut(serializers.Serializer):
    declared = serializers.BooleanField()
    contracts = serializers.IntegerField()
    sample_contracts = serializers.IntegerField()
    sample_seed = serializers.IntegerField()
    declared_outside_sample = serializers.IntegerField()
    full = serializers.BooleanField()
    caption = serializers.CharField()


class ScorecardOut(FiguresOut):
    run = serializers.DictField()
    matcher = serializers.CharField()
    thresholds = serializers.DictField(child=serializers.FloatField())
    population = serializers.CharField()
    scope = ScopeOut()
    grounded = IntervalOut()
    bootstrap = serializers.DictField()
    other_matcher = serializers.DictField()
    extractions_outside_sample = serializers.IntegerField()
    per_category = serializers.DictField(child=FiguresOut())
    cuad_evaluate = serializers.DictField(help_text=CUAD_EVALUATE_HELP)
    dataset = serializers.DictField(help_text="the dataset graded against: id, name, origin (cuad or gold)")


class DifferenceOut(serializers.Serializer):
    first = serializers.IntegerField()
    other = serializers.IntegerField()
    f1_difference = IntervalOut()


class ScorecardComparisonOut(serializers.Serializer):
    common_contracts = serializers.IntegerField()
    notice = serializers.CharField(allow_blank=True)
    runs = ScorecardOut(many=True)
    differences = DifferenceOut(many=True)


class ScorecardApiOut(ScorecardOut):
    """The scorecard of the first run; ``comparison`` only when more than one run was asked for."""

    conclusion = serializers.CharField(help_text="one plain, quotable sentence from the figures and intervals")
    comparison = ScorecardComparisonOut(required=False)
    beside_cuad = serializers.DictField(required=False, help_text=(
        "a gold-set run only: the same model's CUAD figures for the shared clause types, each with its population"))


class ScorecardApi(APIView):
    permission_classes = [IsAuthenticated, CanViewReports]

    @extend_schema(parameters=VIEW_PARAMETERS, responses={200: ScorecardApiOut, **VIEW_ERRORS})
    def get(self, request: Request) -> Response:
        try:
            view = parse_view(request.query_params)
            card, comparison = scorecard_view(view=view)
        except ParameterError as exc:
            return refused(exc.errors)
        except ComparisonError as exc:
            return refused([str(exc)])
        out: dict[str, Any] = {"conclusion": conclusion(card=card, comparison=comparison)}
        out.update(ScorecardOut(scorecard_json(card, view.sample)).data)
        beside = beside_cuad_json(card=card, view=view)
        if beside is not None:
            out["beside_cuad"] = beside
        if comparison:
            out["comparison"] = ScorecardComparisonOut(comparison_json(comparison, view.sample)).data
        return Response(out)


class LeaderboardCellOut(serializers.Serializer):
    f1 = serializers.FloatField(allow_null=True)
    ci = serializers.ListField(child=serializers.FloatField(allow_null=True))
    spans = serializers.IntegerField()
    extractions = serializers.IntegerField()


class OfflineSystemOut(serializers.Serializer):
    key = serializers.CharField()
    name = serializers.CharField()
    model = serializers.CharField()
    method = serializers.CharField()
    # A declared field, which DRF's metaclass takes off the class: it shadows no attribute.
    data = serializers.CharField(help_text="what it learned from or looked at")  # type: ignore[assignment]
    validation = serializers.CharField(help_text="how labels were kept from the contracts it is graded on")
    confidence = serializers.CharField()
    badge = serializers.CharField()


class LeaderboardRunOut(FiguresOut):
    rank = serializers.IntegerField()
    id = serializers.IntegerField()
    model = serializers.CharField()
    system = OfflineSystemOut(allow_null=True, help_text="an offline system of this install, else null")
    scope = ScopeOut()
    hallucination_rate = IntervalOut()
    interval_note = serializers.CharField(allow_blank=True, help_text="too few contracts for an interval, or few")
    per_category = serializers.DictField(child=LeaderboardCellOut())
    cuad_evaluate = serializers.DictField(help_text=CUAD_EVALUATE_HELP)


class LeaderboardPairOut(serializers.Serializer):
    a = serializers.IntegerField(help_text="run ranked higher")
    b = serializers.IntegerField()
    a_model = serializers.CharField()
    b_model = serializers.CharField()
    f1_diff = serializers.FloatField(allow_null=True, help_text="micro F1 of a minus b on the common contracts")
    ci = serializers.ListField(child=serializers.FloatField(allow_null=True), help_text="paired 95% percentile")
    note = serializers.CharField(allow_blank=True, help_text="too few contracts for an interval, or few units")
    p_value = serializers.FloatField(allow_null=True, help_text="null: too few contracts for a p-value")
    p_adjusted = serializers.FloatField(allow_null=True, help_text="Holm over every pair")


class LeaderboardVerdictOut(serializers.Serializer):
    kind = serializers.CharField()
    sentence = serializers.CharField(help_text="the one sentence to quote across the runs")
    best = serializers.ListField(child=serializers.CharField())


class LeaderboardOut(serializers.Serializer):
    verdict = LeaderboardVerdictOut()
    sample = serializers.DictField(child=serializers.IntegerField())
    population = serializers.CharField()
    common_contracts = serializers.IntegerField()
    notice = serializers.CharField(allow_blank=True)
    matcher = serializers.CharField()
    contracts = serializers.IntegerField()
    units = serializers.DictField(help_text="what the number of contracts supports: none, few or enough")
    thresholds = serializers.DictField(child=serializers.FloatField())
    bootstrap = serializers.DictField()
    method = serializers.CharField()
    runs = LeaderboardRunOut(many=True)
    pairs = LeaderboardPairOut(many=True)


class LeaderboardApi(APIView):
    """Every chosen run (default: the sample's complete runs) ranked at the given thresholds and matcher."""

    permission_classes = [IsAuthenticated, CanViewReports]

    @extend_schema(parameters=VIEW_PARAMETERS, responses={200: LeaderboardOut, **VIEW_ERRORS})
    def get(self, request: Request) -> Response:
        asked = any(str(v).strip() for v in request.query_params.getlist("run"))
        try:
            view, by_default = leaderboard_runs(view=parse_view(request.query_params, need_run=False), asked=asked)
            lb = leaderboard_view(view=view, chosen_by_default=by_default)
        except ParameterError as exc:
            return refused(exc.errors)
        except LeaderboardError as exc:
            return refused([str(exc)])
        return Response(LeaderboardOut(leaderboard_json(lb)).data)


class ExplorerItemOut(serializers.Serializer):
    id = serializers.IntegerField()
    category = serializers.CharField()
    text = serializers.CharField()
    outcome = serializers.CharField()
    located = serializers.DictField(allow_null=True)


# An extraction and a gold span carry different partners: one serializer each, so neither shows the other's key
# (a shared one answered "matched_span": null on every span, which the page's JSON export never had).
class ExplorerExtractionOut(ExplorerItemOut):
    f1 = serializers.FloatField(allow_null=True)
    grounding = serializers.FloatField(allow_null=True)
    matched_span = serializers.IntegerField(allow_null=True, help_text="the gold span it was matched to")


class ExplorerSpanOut(ExplorerItemOut):
    matched_extraction = serializers.IntegerField(allow_null=True, help_text="the extraction matched to it")


class ExplorerOut(serializers.Serializer):
    run = serializers.DictField()
    thresholds = serializers.DictField(child=serializers.FloatField())
    matcher = serializers.CharField()
    type = serializers.CharField(allow_null=True)
    contract = serializers.DictField(allow_null=True)
    extractions = ExplorerExtractionOut(many=True)
    spans = ExplorerSpanOut(many=True)
    contracts = serializers.ListField(child=serializers.DictField())


class ExplorerApi(APIView):
    permission_classes = [IsAuthenticated, CanViewReports]

    @extend_schema(parameters=VIEW_PARAMETERS, responses={200: ExplorerOut, **VIEW_ERRORS})
    def get(self, request: Request) -> Response:
        try:
            view = parse_view(request.query_params)
        except ParameterError as exc:
            return refused(exc.errors)
        return Response(ExplorerOut(explorer_json(explorer_view(view=view))).data)


class PlaygroundOut(serializers.Serializer):
    f1 = serializers.FloatField(allow_null=True, help_text="null when neither text has a token")
    precision = serializers.FloatField(allow_null=True, help_text="null when a has no token (0/0)")
    recall = serializers.FloatField(allow_null=True, help_text="null when b has no token (0/0)")
    shared_tokens = serializers.IntegerField()
    a_tokens = serializers.IntegerField()
    b_tokens = serializers.IntegerField()
    grounding = serializers.FloatField(allow_null=True, help_text="null when the claim has no token")
    grounding_n = serializers.IntegerField()
    grounding_found = serializers.IntegerField()
    grounding_total = serializers.IntegerField()
    verbatim = serializers.BooleanField()


class PlaygroundIn(serializers.Serializer):
    a = serializers.CharField(required=False, allow_blank=True, help_text="a text (token F1 of a against b)")
    b = serializers.CharField(required=False, allow_blank=True)
    claim = serializers.CharField(required=False, allow_blank=True, help_text="a claim (its grounding in source)")
    # A declared field, which DRF's metaclass takes off the class: it shadows no attribute.
    source = serializers.CharField(required=False, allow_blank=True)  # type: ignore[assignment]


PLAYGROUND_PARAMETERS = [OpenApiParameter(name, str, description=field.help_text or "")
                         for name, field in PlaygroundIn().fields.items()]


class PlaygroundApi(APIView):
    """The grader's two primitives: ``a``/``b`` -> token F1; ``claim``/``source`` -> grounding (GET or POST)."""

    permission_classes = [IsAuthenticated, CanViewReports]

    def _answer(self, params):
        values = {name: str(params.get(name, "")) for name in ("a", "b", "claim", "source")}
        errors = playground_check(values)
        if errors:
            return refused(errors)
        overlap = playground_overlap(a=values["a"], b=values["b"])
        ground = playground_grounding(claim=values["claim"], source=values["source"])
        return Response(
            PlaygroundOut(
                {
                    "f1": overlap.f1,
                    "precision": overlap.precision,
                    "recall": overlap.recall,
                    "shared_tokens": overlap.shared,
                    "a_tokens": overlap.a_tokens,
                    "b_tokens": overlap.b_tokens,
                    "grounding": ground.grounding,
                    "grounding_n": ground.n,
                    "grounding_found": ground.found,
                    "grounding_total": ground.total,
                    "verbatim": ground.verbatim,
                }
            ).data
        )

    @extend_schema(parameters=PLAYGROUND_PARAMETERS, responses={200: PlaygroundOut, **VIEW_ERRORS})
    def get(self, request: Request) -> Response:
        return self._answer(request.query_params)

    @extend_schema(request=PlaygroundIn,
                   responses={200: PlaygroundOut, **error_responses(400, 403, 413)})
    def post(self, request: Request) -> Response:
        return self._answer(request.data)
