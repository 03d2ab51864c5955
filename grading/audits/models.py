"""CUAD label audit tables: an audit of one graded run, its candidates, its two judges and their verdicts.

CUAD's labels are treated as suspect here (Northcutt et al., Pervasive Label
Errors in Test Sets, NeurIPS 2021): an extraction that is grounded in the
contract (grounding at or above the audit's threshold) in a clause type CUAD
marks absent for that contract is a *candidate* label error. Two judges rule on
each candidate independently; a verdict is written once per (candidate, judge)
and never updated (append-only), which is also what makes a re-run send nothing
for a candidate already judged.
"""

from __future__ import annotations

from functools import cached_property

from django.db import models

from reviewapp.core.jobs import TrackedJob
from reviewapp.providers.selectors import ledger_setup


class Audit(TrackedJob):
    class Status(models.TextChoices):
        WAITING = "waiting", "waiting for the run's extraction job"
        QUEUED = "queued", "queued"
        RUNNING = "running", "running"
        DONE = "done", "done"
        FAILED = "failed", "failed"

    run = models.ForeignKey(
        "grading.ExtractionRun", null=True, blank=True, on_delete=models.CASCADE, related_name="audits"
    )
    # Set when the audit was launched on an extraction job that had not finished yet (the demo does this).
    job = models.ForeignKey("grading.ConsoleJob", null=True, blank=True, on_delete=models.SET_NULL, related_name="+")
    sample = models.ForeignKey("grading.Sample", on_delete=models.CASCADE, related_name="+")
    grounding = models.FloatField(help_text="grounding threshold: a candidate is at or above it")
    correct = models.FloatField(help_text="correct threshold of the before/after scorecards")
    partial = models.FloatField(help_text="partial floor of the before/after scorecards")
    matcher = models.CharField(max_length=16, default="hungarian")
    # sha256 of what makes two audits the same (run, sample, thresholds, matcher, the two judges): launching
    # the same audit again finds this one, so nothing already judged is ever asked again.
    signature = models.CharField(max_length=64, db_index=True)
    status = models.CharField(max_length=16, choices=Status.choices, default=Status.QUEUED, db_index=True)
    n_candidates = models.PositiveIntegerField(default=0)
    flagged = models.BooleanField(default=False, help_text="candidates have been flagged (once, from the run)")
    params = models.JSONField(default=dict, blank=True, help_text="e.g. reattempt failed requests on resume")

    class Meta:
        app_label = "grading"
        ordering = ["-created_at", "-id"]

    def __str__(self) -> str:
        return f"audit {self.pk} of run {self.run_id} ({self.status})"

    def providers_used(self) -> list[str]:
        return [judge.get("provider", "local") for judge in (self.params or {}).get("judges", {}).values()]


class AuditJudge(models.Model):
    """One of the two judges: a provider + model and the method it rules by; its requests go to its own ledger."""

    class Method(models.TextChoices):
        DESCRIPTION = "local-description", "local heuristic: similarity to the category description"
        EXEMPLARS = "local-exemplars", "local heuristic: similarity to CUAD spans of the category in other contracts"
        LLM = "llm", "LLM: JSON-schema verdict with a reason"

    audit = models.ForeignKey(Audit, on_delete=models.CASCADE, related_name="judges")
    slot = models.CharField(max_length=1)  # "a" or "b"
    provider = models.CharField(max_length=32)
    model_id = models.CharField(max_length=200)
    method = models.CharField(max_length=32, choices=Method.choices)
    params = models.JSONField(default=dict, blank=True, help_text="threshold and evidence, as used")
    ledger_id = models.PositiveIntegerField(null=True, blank=True, help_text="providers.Ledger of its receipts")

    class Meta:
        app_label = "grading"
        ordering = ["audit_id", "slot"]
        constraints = [models.UniqueConstraint(fields=["audit", "slot"], name="grading_auditjudge_unique_slot")]

    def __str__(self) -> str:
        return f"judge {self.slot.upper()} {self.provider}:{self.model_id} ({self.method})"

    @property
    def heuristic(self) -> bool:
        return self.method != self.Method.LLM

    @cached_property
    def provider_setup(self) -> dict:
        """The model server the judge's ledger pinned (base URL, no credentials) and whether it was simulated."""
        return ledger_setup(ledger_id=self.ledger_id)

    @property
    def simulated(self) -> bool:
        """Answered by a simulated provider (the loopback test server), not a model."""
        return self.method == self.Method.LLM and bool(self.provider_setup.get("simulated"))

    @property
    def label(self) -> str:
        if self.method == self.Method.LLM:
            return f"{self.model_id} ({self.provider}{', simulated provider' if self.simulated else ''})"
        return f"{self.get_method_display()} (heuristic)"


class AuditCandidate(models.Model):
    """A grounded extraction in a clause type CUAD marks absent for its contract (copied at flag time)."""

    audit = models.ForeignKey(Audit, on_delete=models.CASCADE, related_name="candidates")
    position = models.PositiveIntegerField()
    extraction = models.ForeignKey("grading.Extraction", on_delete=models.CASCADE, related_name="+")
    contract = models.ForeignKey("grading.Contract", on_delete=models.CASCADE, related_name="+")
    category = models.ForeignKey("grading.Category", on_delete=models.PROTECT, related_name="+")
    text = models.TextField()
    grounding = models.FloatField()

    class Meta:
        app_label = "grading"
        ordering = ["audit_id", "position"]
        constraints = [
            models.UniqueConstraint(fields=["audit", "extraction"], name="grading_auditcandidate_unique"),
            models.UniqueConstraint(fields=["audit", "position"], name="grading_auditcandidate_position"),
        ]

    def __str__(self) -> str:
        return f"{self.audit_id}:{self.position}"


class AuditVerdict(models.Model):
    """A judge's ruling on a candidate: yes/no with a short reason. Written once, never updated."""

    candidate = models.ForeignKey(AuditCandidate, on_delete=models.CASCADE, related_name="verdicts")
    judge = models.ForeignKey(AuditJudge, on_delete=models.CASCADE, related_name="verdicts")
    verdict = models.BooleanField()
    reason = models.TextField()
    score = models.FloatField(null=True, blank=True, help_text="the heuristic's evidence (a cosine); none for LLMs")
    request_key = models.CharField(max_length=64)
    receipt_id = models.PositiveIntegerField(null=True, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        app_label = "grading"
        ordering = ["candidate_id", "judge_id"]
        constraints = [models.UniqueConstraint(fields=["candidate", "judge"], name="grading_auditverdict_unique")]

    def __str__(self) -> str:
        return f"{self.judge_id} on {self.candidate_id}: {'yes' if self.verdict else 'no'}"

    def save(self, *args, **kwargs) -> None:
        # Append-only: a verdict is inserted once; a changed mind is a new audit, not an UPDATE.
        if self.pk is not None and not kwargs.get("force_insert"):
            raise RuntimeError("audit verdicts are append-only")
        super().save(*args, **kwargs)
