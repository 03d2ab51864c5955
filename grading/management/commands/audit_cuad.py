"""Audit CUAD's "absent" labels with two independent judges (the audit page's "Launch", from a shell)."""

from __future__ import annotations

import json
import time

from django.core.management.base import BaseCommand, CommandError

from grading.audits.exports import audit_json
from grading.audits.judging.judges import DESCRIPTION, EXEMPLARS_METHOD, parse_choice
from grading.audits.models import Audit
from grading.audits.selectors import AuditReport, audit_report
from grading.audits.services import AuditError, audit_create, audit_execute
from grading.dataset.models import Sample
from grading.runs.models import ExtractionRun
from reviewapp.jobs.controls import job_finish_command
from scoring.cuad.grading import Thresholds


class Command(BaseCommand):
    help = (
        "Flag grounded extractions in clause types CUAD marks absent, have two judges rule on each (receipts, "
        "budget, no automatic retries, resume), and print kappa and the credited recall. Judges: local-description, "
        "local-exemplars (offline heuristics), openai_compatible:<model>, anthropic:<model>."
    )

    def add_arguments(self, parser):
        parser.add_argument("--run", type=int, help="extraction run id")
        parser.add_argument("--sample", type=int, default=None, help="sample id (default: the latest sample)")
        parser.add_argument("--judge-a", default=DESCRIPTION)
        parser.add_argument("--judge-b", default=EXEMPLARS_METHOD)
        parser.add_argument("--base-url-a", default="", help="endpoint base for an HTTP judge A (no credentials)")
        parser.add_argument("--base-url-b", default="", help="endpoint base for an HTTP judge B (no credentials)")
        parser.add_argument("--grounding", type=float, default=Thresholds().grounding)
        parser.add_argument("--correct", type=float, default=Thresholds().correct)
        parser.add_argument("--partial", type=float, default=Thresholds().partial)
        parser.add_argument("--matcher", default="hungarian")
        parser.add_argument("--max-requests", type=int, default=None, help="budget per judge: attempted requests")
        parser.add_argument("--max-input-tokens", type=int, default=None, help="budget per judge: input tokens")
        parser.add_argument("--inline", action="store_true", help="run in this process instead of on a worker")
        parser.add_argument("--wait", action="store_true", help="wait for the worker and print the outcome")
        parser.add_argument("--json", action="store_true", help="print the audit report as JSON")

    def handle(self, *args, **o):
        if not o["run"]:
            raise CommandError("give --run ID (resume an audit with finish_job audit ID)")
        run = ExtractionRun.objects.filter(pk=o["run"]).first()
        if run is None:
            raise CommandError(f"no run {o['run']}")
        sample = None
        if o["sample"]:
            sample = Sample.objects.filter(pk=o["sample"]).first()
            if sample is None:
                raise CommandError(f"no sample {o['sample']}")
        try:
            judge_a = parse_choice(o["judge_a"], base_url=o["base_url_a"])
            judge_b = parse_choice(o["judge_b"], base_url=o["base_url_b"])
            thresholds = Thresholds(correct=o["correct"], partial=o["partial"], grounding=o["grounding"])
            audit, created = audit_create(
                run=run,
                sample=sample,
                thresholds=thresholds,
                matcher=o["matcher"],
                judge_a=judge_a,
                judge_b=judge_b,
                max_requests=o["max_requests"],
                max_input_tokens=o["max_input_tokens"],
                queue=not o["inline"],
            )
        except (ValueError, AuditError) as exc:
            raise CommandError(str(exc)) from exc
        verb = "created" if created else "exists already (nothing already judged is asked again)"
        self.stdout.write(f"audit {audit.pk} {verb}: run {run.pk}, {audit.n_candidates} candidates")
        if not created and audit.status == Audit.Status.FAILED:
            self.stdout.write(f"audit {audit.pk} had failed: {audit.error}\n"
                              f"finish it with: python manage.py finish_job audit {audit.pk}")
        started = time.perf_counter()
        if o["inline"]:
            audit_execute(audit_id=audit.pk)
        elif o["wait"]:
            while not Audit.objects.get(pk=audit.pk).is_finished:
                time.sleep(1)
        elif audit.status in (Audit.Status.QUEUED, Audit.Status.RUNNING, Audit.Status.WAITING):
            self.stdout.write(f"queued on the worker; progress at /cuad/audits/{audit.pk}/")
            return
        audit.refresh_from_db()
        report = audit_report(audit=audit)
        if o["json"]:
            self.stdout.write(json.dumps(audit_json(report), ensure_ascii=False, indent=1))
        else:
            self._print(report, time.perf_counter() - started)
        if audit.status == Audit.Status.FAILED:
            finish = job_finish_command(audit)
            raise CommandError(audit.error if "To finish:" in audit.error or not finish
                               else f"{audit.error} To finish: {finish}")

    def _print(self, report: AuditReport, seconds: float) -> None:
        audit = report.audit
        self.stdout.write(f"audit {audit.pk} {audit.status} ({seconds:.1f} s): {audit.stage}")
        for j in report.judges:
            self.stdout.write(
                f"  judge {j.slot.upper()}: {j.label}, ledger {j.ledger_id}, {report.ruled[j.slot]} ruled"
            )
        a = report.agreement
        if a is not None:
            kappa = "undefined" if a.kappa is None else f"{a.kappa:.3f} ({a.band})"
            raw = "–" if a.raw_agreement is None else f"{a.raw_agreement:.3f}"
            self.stdout.write(
                f"  kappa {kappa}, raw agreement {raw} over {a.n} candidates; 2x2 (A rows, B cols, no/yes):"
            )
            self.stdout.write(f"    {a.table[0]}\n    {a.table[1]}")
            ci = a.kappa_interval
            bounds = f"[{ci.interval.low:.3f}, {ci.interval.high:.3f}] " if ci.has_interval else ""
            self.stdout.write(f"    kappa {bounds}{ci.description}")
            ac1 = "undefined" if a.ac1 is None else f"{a.ac1:.3f}"
            shares = ", ".join(f"{verdict} {share:.0%}" for verdict, share in a.prevalence)
            self.stdout.write(f"    Gwet's AC1 {ac1}; prevalence {shares}")
            if a.paradox_note:
                self.stdout.write(f"    {a.paradox_note}")
        if report.impact is not None:
            for row in report.impact.rows:
                r = row.figures.recall
                self.stdout.write(
                    f"  recall {row.label}: {r.estimate:.4f} [{r.low:.4f}, {r.high:.4f}] (+{row.credited} credited)"
                )
        self.stdout.write(f"  page: /cuad/audits/{audit.pk}/")
