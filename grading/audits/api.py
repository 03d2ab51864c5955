"""JSON API of the CUAD label audits under /api/v1/cuad/audits/ (explicit serializers; reviewers get 403).

GET lists and reads audits; POST launches one (admins), each judge with its own model id and base URL.
"""

from __future__ import annotations

from django.shortcuts import get_object_or_404
from drf_spectacular.utils import extend_schema
from rest_framework import serializers, status
from rest_framework.permissions import IsAuthenticated
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from grading.audits.exports import audit_json, audit_summary_json
from grading.audits.judging.judges import JudgeChoiceError, parse_choice
from grading.audits.models import Audit
from grading.audits.selectors import audit_list, audit_report
from grading.audits.services import AuditError, audit_create
from grading.responses import refused
from grading.runs.models import ExtractionRun
from reviewapp.core.auth.roles import CanLaunchRuns, CanViewReports
from reviewapp.core.http.api import READ_ERRORS, WRITE_ERRORS, UnitIntervalOut, error_responses
from reviewapp.jobs.api import JobStateOut
from scoring.cuad.grading import Thresholds


class AuditSummaryOut(serializers.Serializer):
    id = serializers.IntegerField()
    run = serializers.IntegerField(allow_null=True)
    model = serializers.CharField(allow_null=True)
    job = serializers.IntegerField(allow_null=True)
    sample = serializers.IntegerField()
    status = serializers.CharField()
    state = JobStateOut()
    stage = serializers.CharField()
    error = serializers.CharField()
    thresholds = serializers.DictField(child=serializers.FloatField())
    matcher = serializers.CharField()
    candidates = serializers.IntegerField()
    created_at = serializers.CharField()
    finished_at = serializers.CharField(allow_null=True)


class JudgeOut(serializers.Serializer):
    slot = serializers.CharField()
    provider = serializers.CharField()
    model_id = serializers.CharField()
    method = serializers.CharField()
    heuristic = serializers.BooleanField()
    # A declared field, which DRF's metaclass takes off the class: it shadows no attribute.
    label = serializers.CharField()  # type: ignore[assignment]
    params = serializers.DictField()
    ledger = serializers.IntegerField(allow_null=True)
    base_url = serializers.CharField(help_text="the model server of an LLM judge (no credentials); '' otherwise")
    simulated = serializers.BooleanField(help_text="answered by a simulated provider (the loopback test server)")


class AuditAgreementOut(serializers.Serializer):
    n = serializers.IntegerField()
    excluded = serializers.IntegerField()
    kappa = serializers.FloatField(allow_null=True)
    band = serializers.CharField(allow_null=True)
    raw_agreement = serializers.FloatField(allow_null=True)
    kappa_interval = UnitIntervalOut()
    raw_agreement_interval = UnitIntervalOut()
    agreements = serializers.IntegerField(help_text="candidates on which the two verdicts are equal")
    ac1 = serializers.FloatField(allow_null=True, help_text="Gwet's AC1, robust when one verdict dominates")
    ac1_interval = UnitIntervalOut(allow_null=True)
    pabak = serializers.FloatField(allow_null=True, help_text="prevalence- and bias-adjusted kappa")
    prevalence = serializers.DictField(child=serializers.FloatField(), help_text="each verdict's share")
    paradox_note = serializers.CharField(help_text="the kappa paradox in one line, or ''")
    table = serializers.DictField()


class ImpactRowOut(serializers.Serializer):
    key = serializers.CharField()
    # A declared field, which DRF's metaclass takes off the class: it shadows no attribute.
    label = serializers.CharField()  # type: ignore[assignment]
    credited = serializers.IntegerField()
    precision = serializers.FloatField(allow_null=True)
    recall = serializers.FloatField(allow_null=True)
    f1 = serializers.FloatField(allow_null=True)
    ci = serializers.DictField(child=serializers.ListField(child=serializers.FloatField(allow_null=True)))
    counts = serializers.DictField(child=serializers.IntegerField())


class ImpactOut(serializers.Serializer):
    thresholds = serializers.DictField(child=serializers.FloatField())
    bootstrap = serializers.DictField(child=serializers.IntegerField())
    rows = ImpactRowOut(many=True)
    per_category = serializers.ListField(child=serializers.DictField())


class VerdictOut(serializers.Serializer):
    verdict = serializers.CharField()
    reason = serializers.CharField()
    score = serializers.FloatField(allow_null=True)
    receipt = serializers.IntegerField(allow_null=True)


class HumanOut(serializers.Serializer):
    state = serializers.CharField()
    value = serializers.CharField(allow_null=True)
    reason = serializers.CharField()
    completed = serializers.IntegerField()


class CandidateOut(serializers.Serializer):
    id = serializers.IntegerField()
    position = serializers.IntegerField()
    extraction = serializers.IntegerField()
    contract = serializers.CharField()
    category = serializers.CharField()
    text = serializers.CharField()
    grounding = serializers.FloatField()
    judges = serializers.DictField(child=VerdictOut(allow_null=True))
    both_yes = serializers.BooleanField()
    human = HumanOut(allow_null=True)


class AuditReportOut(serializers.Serializer):
    audit = AuditSummaryOut()
    judges = JudgeOut(many=True)
    progress = serializers.DictField()
    agreement = AuditAgreementOut(allow_null=True)
    impact = ImpactOut(allow_null=True)
    review_pool = serializers.CharField(allow_null=True)
    candidates = CandidateOut(many=True)


class AuditLaunchIn(serializers.Serializer):
    run = serializers.IntegerField(help_text="the extraction run to audit")
    judge_a = serializers.CharField(max_length=300, help_text="local-description | local-exemplars | "
                                    "openai_compatible:<model> | anthropic:<model>")
    judge_b = serializers.CharField(max_length=300)
    base_url_a = serializers.CharField(required=False, default="", allow_blank=True, max_length=500,
                                       help_text="judge A's model server, e.g. http://127.0.0.1:11434/v1; blank = "
                                                 "the server's default; never credentials")
    base_url_b = serializers.CharField(required=False, default="", allow_blank=True, max_length=500)
    grounding = serializers.FloatField(required=False, min_value=0, max_value=1)


class AuditLaunchedOut(serializers.Serializer):
    id = serializers.IntegerField()
    status = serializers.CharField()
    created = serializers.BooleanField(help_text="false when the same audit existed already (nothing new asked)")
    candidates = serializers.IntegerField()


class AuditsApi(APIView):
    """Every label audit, newest first; POST launches one."""

    permission_classes = [IsAuthenticated, CanViewReports]
    serializer_class = AuditSummaryOut

    def get_permissions(self):
        if self.request.method == "POST":
            return [IsAuthenticated(), CanLaunchRuns()]
        return super().get_permissions()

    @extend_schema(operation_id="cuad_audits_launch", request=AuditLaunchIn,
                   responses={202: AuditLaunchedOut, **error_responses(*WRITE_ERRORS)})
    def post(self, request: Request) -> Response:
        data = AuditLaunchIn(data=request.data)
        data.is_valid(raise_exception=True)
        v = data.validated_data
        errors: list[str] = []
        run = ExtractionRun.objects.filter(pk=v["run"]).first()
        if run is None:
            errors.append(f"run: no run #{v['run']}")
        choices = {}
        for slot in ("a", "b"):
            try:
                choices[slot] = parse_choice(v[f"judge_{slot}"], base_url=v[f"base_url_{slot}"])
            except JudgeChoiceError as exc:
                errors.append(f"judge {slot.upper()}: {exc}")
        if errors:
            return refused(errors)
        thresholds = Thresholds(grounding=v["grounding"]) if "grounding" in v else None
        try:
            audit, created = audit_create(run=run, thresholds=thresholds, judge_a=choices["a"],
                                          judge_b=choices["b"], user=request.user)
        except AuditError as exc:
            return refused([str(exc)])
        out = {"id": audit.pk, "status": audit.status, "created": created, "candidates": audit.n_candidates}
        return Response(AuditLaunchedOut(out).data, status=status.HTTP_202_ACCEPTED)

    @extend_schema(operation_id="cuad_audits_list",
                   responses={200: AuditSummaryOut(many=True), **error_responses(403)})
    def get(self, request: Request) -> Response:
        data = [audit_summary_json(a) for a in audit_list()]
        return Response(AuditSummaryOut(data, many=True).data)


class AuditApi(APIView):
    """One audit: judges, progress, agreement (kappa, band, 2x2, raw), impact before/after, candidates."""

    permission_classes = [IsAuthenticated, CanViewReports]
    serializer_class = AuditReportOut

    @extend_schema(responses={200: AuditReportOut, **error_responses(*READ_ERRORS)})
    def get(self, request: Request, pk: int) -> Response:
        audit = get_object_or_404(Audit.objects.select_related("run", "sample"), pk=pk)
        return Response(AuditReportOut(audit_json(audit_report(audit=audit))).data)
