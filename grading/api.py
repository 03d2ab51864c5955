"""The CUAD console's JSON API under /api/cuad/ (explicit serializers; reviewers get 403)."""

from __future__ import annotations

from django.shortcuts import get_object_or_404
from rest_framework import serializers, status
from rest_framework.permissions import IsAuthenticated
from rest_framework.response import Response
from rest_framework.views import APIView

from grading import selectors
from grading.dataset.models import Sample
from grading.runs import jobs as console
from grading.runs.models import ConsoleJob, ExtractionRun
from grading.runs.run_format import RunFormatError
from grading.scorecard import selectors as cs
from reviewapp.core.access import CanLaunchRuns, CanViewReports

# ---------------------------------------------------------------------------
# Serializers (explicit fields)


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


class RunSerializer(serializers.Serializer):
    id = serializers.IntegerField(source="run.pk")
    model = serializers.CharField(source="run.model")
    source_name = serializers.CharField(source="run.source_name")
    source_format = serializers.CharField(source="run.source_format")
    n_extractions = serializers.IntegerField(source="run.n_extractions")
    content_sha256 = serializers.CharField(source="run.content_sha256")
    created_at = serializers.DateTimeField(source="run.created_at")
    in_sample = serializers.IntegerField()
    heuristic = serializers.BooleanField()
    headline = serializers.DictField(child=serializers.FloatField(allow_null=True), allow_null=True)


class JobSerializer(serializers.Serializer):
    id = serializers.IntegerField()
    kind = serializers.CharField()
    status = serializers.CharField()
    provider = serializers.CharField()
    model_id = serializers.CharField()
    params = serializers.DictField()
    total = serializers.IntegerField()
    done = serializers.IntegerField()
    stage = serializers.CharField()
    error = serializers.CharField()
    run = serializers.IntegerField(source="run_id", allow_null=True)
    sample = serializers.IntegerField(source="sample_id", allow_null=True)
    ledger = serializers.IntegerField(source="ledger_id", allow_null=True)
    created_at = serializers.DateTimeField()
    finished_at = serializers.DateTimeField(allow_null=True)


class TypeCountSerializer(serializers.Serializer):
    name = serializers.CharField()
    sampled = serializers.IntegerField()
    available = serializers.IntegerField()
    target = serializers.IntegerField()
    met = serializers.BooleanField()


class DatasetSerializer(serializers.Serializer):
    source_name = serializers.CharField(source="dataset.source_name")
    sha256 = serializers.CharField(source="dataset.sha256")
    version = serializers.CharField(source="dataset.version")
    n_contracts = serializers.IntegerField(source="dataset.n_contracts")
    sample_id = serializers.IntegerField(source="sample.pk")
    manifest_sha256 = serializers.CharField(source="sample.manifest_sha256")
    parameters = serializers.DictField(source="manifest.parameters")
    contracts = serializers.ListField(child=serializers.DictField(), source="manifest.contracts")
    types = TypeCountSerializer(many=True)
    phases = serializers.DictField(child=serializers.IntegerField())
    length_stats = serializers.DictField(child=serializers.IntegerField())
    n_spans = serializers.IntegerField()


class PasteInput(serializers.Serializer):
    run = serializers.JSONField(help_text="the run: a JSON object, or its text (JSON or JSON Lines)")
    source_name = serializers.CharField(required=False, default="api", max_length=255)


class LaunchInput(serializers.Serializer):
    provider = serializers.ChoiceField(choices=console.PROVIDERS, default="local")
    model_id = serializers.CharField(required=False, default="", allow_blank=True)
    sample = serializers.IntegerField(required=False)
    limit = serializers.IntegerField(required=False, min_value=1)
    # Upper bounds: what the ledger's columns hold (beyond them the database refused with a 500).
    max_requests = serializers.IntegerField(required=False, min_value=1, max_value=2**31 - 1)
    max_input_tokens = serializers.IntegerField(required=False, min_value=1, max_value=2**63 - 1)


def _refused(errors: list[str]) -> Response:
    return Response({"errors": errors}, status=status.HTTP_400_BAD_REQUEST)


# ---------------------------------------------------------------------------
# Views


class DatasetApi(APIView):
    permission_classes = [IsAuthenticated, CanViewReports]

    def get(self, request):
        sample = (
            Sample.objects.filter(pk=request.query_params.get("sample")).first()
            if request.query_params.get("sample", "").isdigit()
            else cs.sample_default()
        )
        if sample is None:
            return _refused(["sample: no CUAD sample exists"])
        return Response(DatasetSerializer(cs.dataset_overview(sample=sample)).data)


class RunsApi(APIView):
    permission_classes = [IsAuthenticated, CanViewReports]

    def get_permissions(self):
        if self.request.method == "POST":
            return [IsAuthenticated(), CanLaunchRuns()]
        return super().get_permissions()

    def get(self, request):
        return Response({"runs": RunSerializer(cs.runs_list(sample=cs.sample_default()), many=True).data})

    def post(self, request):
        """Paste a run (validated, nothing stored when invalid); 201 when graded now, 202 when queued."""
        data = PasteInput(data=request.data)
        data.is_valid(raise_exception=True)
        dataset = selectors.dataset_current()
        if dataset is None:
            return _refused(["no CUAD dataset is loaded"])
        raw = data.validated_data["run"]
        if not isinstance(raw, str):
            import json

            raw = json.dumps(raw, ensure_ascii=False)
        try:
            result = console.run_paste(
                dataset=dataset, raw=raw, source_name=data.validated_data["source_name"], user=request.user
            )
        except RunFormatError as exc:
            return _refused(exc.errors)
        if result.job is not None:
            return Response(JobSerializer(result.job).data, status=status.HTTP_202_ACCEPTED)
        sample = cs.sample_default(dataset=dataset)
        summary = next((s for s in cs.runs_list(sample=sample) if s.run.pk == result.run.pk), None)
        return Response(RunSerializer(summary).data, status=status.HTTP_201_CREATED)


class RunApi(APIView):
    permission_classes = [IsAuthenticated, CanViewReports]

    def get(self, request, pk: int):
        run = get_object_or_404(ExtractionRun, pk=pk)
        summary = next(s for s in cs.runs_list(sample=cs.sample_default(dataset=run.dataset)) if s.run.pk == pk)
        return Response(RunSerializer(summary).data)


class JobsApi(APIView):
    permission_classes = [IsAuthenticated, CanLaunchRuns]

    def post(self, request):
        data = LaunchInput(data=request.data)
        data.is_valid(raise_exception=True)
        v = data.validated_data
        sample = Sample.objects.filter(pk=v["sample"]).first() if "sample" in v else cs.sample_default()
        if sample is None:
            return _refused(["sample: no sample to run on"])
        try:
            job = console.extraction_job_create(
                sample=sample,
                provider=v["provider"],
                model_id=v["model_id"],
                limit=v.get("limit"),
                max_requests=v.get("max_requests"),
                max_input_tokens=v.get("max_input_tokens"),
                user=request.user,
            )
        except console.JobError as exc:
            return _refused([str(exc)])
        return Response(JobSerializer(job).data, status=status.HTTP_202_ACCEPTED)


class JobApi(APIView):
    permission_classes = [IsAuthenticated, CanViewReports]

    def get(self, request, pk: int):
        return Response(JobSerializer(get_object_or_404(ConsoleJob, pk=pk)).data)


class ScorecardApi(APIView):
    permission_classes = [IsAuthenticated, CanViewReports]

    def get(self, request):
        try:
            view = cs.parse_view(request.query_params)
        except cs.ParameterError as exc:
            return _refused(exc.errors)
        card, comparison = cs.scorecard_view(view=view)
        out = ScorecardSerializer(cs.scorecard_json(card, view.sample)).data
        if comparison:
            out["comparison"] = [ScorecardSerializer(cs.scorecard_json(c, view.sample)).data for c in comparison.cards]
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
            view = cs.parse_view(request.query_params)
        except cs.ParameterError as exc:
            return _refused(exc.errors)
        return Response(ExplorerSerializer(cs.explorer_json(cs.explorer_view(view=view))).data)


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
        overlap = cs.playground_overlap(a=str(params.get("a", "")), b=str(params.get("b", "")))
        ground = cs.playground_grounding(claim=str(params.get("claim", "")), source=str(params.get("source", "")))
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
