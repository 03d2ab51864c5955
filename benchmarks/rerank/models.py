"""Rerank runs: the pinned model grades exactly the keyword candidates of a retrieval run.

Each run owns one provider ``Ledger`` (budget + receipts). Per-candidate grades are
written once per (candidate, attempt); the current grade of a candidate is its
highest attempt. ``confidence`` is how concentrated the distribution is, never a
probability of being correct.
"""

from __future__ import annotations

from django.db import models

from benchmarks.retrieval.models import RetrievalCandidate, RetrievalRun
from benchmarks.suites.models import Suite, SuiteQuery
from reviewapp.core.jobs import TrackedJob


class RerankStatus(models.TextChoices):
    QUEUED = "queued", "queued"
    RUNNING = "running", "running"
    DONE = "done", "done"
    STOPPED = "stopped", "stopped by budget"
    CANCELLED = "cancelled", "cancelled"
    FAILED = "failed", "failed"


FINISHED = (RerankStatus.DONE, RerankStatus.STOPPED, RerankStatus.CANCELLED, RerankStatus.FAILED)


class RerankRun(TrackedJob):
    FINISHED = FINISHED

    suite = models.ForeignKey(Suite, on_delete=models.PROTECT, related_name="rerank_runs")
    retrieval_run = models.ForeignKey(RetrievalRun, on_delete=models.PROTECT, related_name="rerank_runs")
    ledger = models.OneToOneField("providers.Ledger", on_delete=models.PROTECT, related_name="rerank_run")
    provider = models.CharField(max_length=32)
    model_id = models.CharField(max_length=200, help_text="pinned model id")
    method = models.CharField(max_length=32, help_text="logprobs / structured / local heuristic")
    question_version = models.CharField(max_length=80)
    question_sha256 = models.CharField(max_length=64)
    candidates_per_request = models.PositiveSmallIntegerField(default=4)
    requests_planned = models.PositiveIntegerField(default=0)
    candidates_planned = models.PositiveIntegerField(default=0)
    status = models.CharField(max_length=12, choices=RerankStatus.choices, default=RerankStatus.QUEUED, db_index=True)
    stop_reason = models.TextField(blank=True)
    cancel_requested = models.BooleanField(default=False)
    reattempt_requested = models.BooleanField(default=False, help_text="re-send failed/unknown requests once")

    class Meta:
        ordering = ["-id"]

    def __str__(self) -> str:
        return f"rerank #{self.pk} {self.provider}:{self.model_id} on retrieval #{self.retrieval_run_id}"

    def providers_used(self) -> list[str]:
        return [self.provider]

    @property
    def simulated(self) -> bool:
        """Answered by a simulated provider (the loopback test server): labelled so on every page and export.

        The ledger's flag is written with the first simulated receipt, in the same transaction."""
        return bool(self.ledger.simulated)

    @property
    def method_label(self) -> str:
        return "local heuristic (not an LLM)" if self.provider == "local" else self.method


class RerankGrade(models.Model):
    class Status(models.TextChoices):
        GRADED = "graded", "graded"
        FAILED = "failed", "failed"
        UNKNOWN = "unknown", "sent, answer unknown"

    run = models.ForeignKey(RerankRun, on_delete=models.CASCADE, related_name="grades")
    query = models.ForeignKey(SuiteQuery, on_delete=models.PROTECT, related_name="+")
    candidate = models.ForeignKey(RetrievalCandidate, on_delete=models.PROTECT, related_name="+")
    attempt = models.PositiveSmallIntegerField(default=1)
    request_index = models.PositiveIntegerField(help_text="position of the request in the run's deterministic order")
    position_in_request = models.PositiveSmallIntegerField(help_text="1-based item number within the request")
    request_key = models.CharField(max_length=64)
    receipt_id = models.BigIntegerField(null=True, blank=True)
    status = models.CharField(max_length=10, choices=Status.choices)
    method = models.CharField(max_length=32, blank=True)
    p0 = models.FloatField(null=True, blank=True)
    p1 = models.FloatField(null=True, blank=True)
    p2 = models.FloatField(null=True, blank=True)
    p3 = models.FloatField(null=True, blank=True)
    p_useful = models.FloatField(null=True, blank=True, help_text="normalised P(2) + P(3)")
    confidence = models.FloatField(null=True, blank=True, help_text="1 - normalised entropy; NOT P(correct)")
    captured_mass = models.FloatField(null=True, blank=True, help_text="probability mass the labels captured")
    grade = models.PositiveSmallIntegerField(null=True, blank=True, help_text="the answered grade")
    error = models.TextField(blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["run_id", "request_index", "position_in_request", "attempt"]
        constraints = [
            models.UniqueConstraint(fields=["run", "candidate", "attempt"], name="rerank_grade_unique_attempt"),
        ]

    def __str__(self) -> str:
        return f"{self.run_id}/{self.candidate_id} attempt {self.attempt}: {self.status}"

    @property
    def probs(self) -> tuple[float | None, ...]:
        return (self.p0, self.p1, self.p2, self.p3)
