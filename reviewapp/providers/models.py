"""The receipt ledger: one Ledger per budgeted piece of work, one Receipt per attempted request.

Receipts are append-only. A receipt is written BEFORE its request leaves (status
``sent``) and completed exactly once afterwards (``answered``, ``failed``,
``unknown`` or ``not_sent``) by a conditional UPDATE on ``status='sent'``; after
that no field changes. A ``sent`` receipt found at resume time had no recorded
answer: it turns ``unknown`` and its request is not sent again unless a person
asks for a re-attempt.

``not_sent`` means the body never left this process (no key in the environment,
connection refused, unknown host): the provider processed nothing, so it is not
spend, and a later execution may send that request again.
"""

from __future__ import annotations

from typing import Any, NoReturn

from django.conf import settings
from django.db import models

from reviewapp.core.models import AppendOnlyError, AppendOnlyModel


class ReceiptQuerySet(models.QuerySet):
    """Receipts are completed by one conditional UPDATE (``services.receipt_complete``), never deleted."""

    def delete(self) -> NoReturn:
        raise AppendOnlyError("receipts are append-only: they are never deleted")


class Ledger(models.Model):
    """Provider + pinned model + budget for one job's requests. Knows nothing of the job."""

    class Provider(models.TextChoices):
        LOCAL = "local", "local heuristic (MiniLM ONNX)"
        OPENAI_COMPATIBLE = "openai_compatible", "OpenAI-compatible (OpenRouter, vLLM, llama.cpp, Ollama)"
        ANTHROPIC = "anthropic", "Anthropic Messages API"

    purpose = models.CharField(max_length=200, help_text="free text set by the job, e.g. 'benchmarks rerank run 3'")
    provider = models.CharField(max_length=32, choices=Provider.choices)
    model_id = models.CharField(max_length=200, help_text="pinned model id, sent verbatim")
    base_url = models.CharField(max_length=500, blank=True, help_text="endpoint base (no credentials)")
    max_requests = models.PositiveIntegerField(help_text="requests sent, every attempt counts")
    max_input_tokens = models.PositiveBigIntegerField(help_text="reported input tokens (estimates until reported)")
    estimate_rule = models.CharField(
        max_length=100, default="utf8_bytes+256",
        help_text="conservative input-token estimate before an answer: one token per request byte plus 256",
    )
    concurrency = models.PositiveSmallIntegerField(default=4)
    stop_reason = models.TextField(blank=True, help_text="why the last execution stopped sending, if it did")
    simulated = models.BooleanField(
        default=False,
        help_text="a receipt of this ledger was answered by a simulated provider (the loopback test server): "
                  "the run is labelled 'simulated provider' everywhere",
    )
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["-id"]

    def __str__(self) -> str:
        return f"ledger {self.pk} {self.provider}:{self.model_id} ({self.purpose})"


class Receipt(models.Model):
    class Status(models.TextChoices):
        SENT = "sent", "sent, no answer yet"
        ANSWERED = "answered", "answered and validated"
        FAILED = "failed", "failed"
        UNKNOWN = "unknown", "sent, answer unknown"
        NOT_SENT = "not_sent", "not sent (nothing left this machine)"

    ledger = models.ForeignKey(Ledger, on_delete=models.PROTECT, related_name="receipts")
    seq = models.PositiveIntegerField(help_text="order of sending within the ledger, from 1")
    request_key = models.CharField(max_length=64, db_index=True, help_text="sha256 of canonical request JSON")
    attempt = models.PositiveSmallIntegerField(default=1)
    method = models.CharField(max_length=32, help_text="logprobs / structured / local heuristic")
    request_url = models.CharField(max_length=500)
    request_body = models.JSONField(help_text="the JSON body as sent; never carries credentials")
    request_bytes = models.PositiveIntegerField()
    estimated_input_tokens = models.PositiveIntegerField()
    sent_at = models.DateTimeField()
    answered_at = models.DateTimeField(null=True, blank=True)
    status = models.CharField(max_length=16, choices=Status.choices, default=Status.SENT, db_index=True)
    http_status = models.PositiveSmallIntegerField(null=True, blank=True)
    response_body = models.TextField(blank=True, help_text="raw response text, as received")
    parse = models.JSONField(null=True, blank=True, help_text="the validated parse")
    error = models.TextField(blank=True, help_text="transport error or validation error")
    usage = models.JSONField(null=True, blank=True, help_text="usage object as reported by the provider")
    reported_input_tokens = models.PositiveIntegerField(null=True, blank=True)
    latency_ms = models.FloatField(null=True, blank=True)
    # Nullable so that adding it does not rebuild the table on SQLite (which would drop its append-only
    # triggers); None before the answer is recorded, then whether the server marked its answer as simulated.
    simulated = models.BooleanField(null=True, blank=True,
                                    help_text="the answer carried the simulated-provider marker (loopback test server)")

    objects = ReceiptQuerySet.as_manager()

    class Meta:
        ordering = ["ledger_id", "seq"]
        constraints = [
            models.UniqueConstraint(fields=["ledger", "seq"], name="receipt_unique_seq"),
            models.UniqueConstraint(fields=["ledger", "request_key", "attempt"], name="receipt_unique_attempt"),
        ]

    def __str__(self) -> str:
        return f"receipt {self.ledger_id}#{self.seq} {self.request_key[:12]} attempt {self.attempt} {self.status}"

    def save(self, *args, **kwargs) -> None:
        # Append-only: rows are inserted once; the single completion goes through a
        # conditional UPDATE in services, never through save().
        if self.pk is not None and not kwargs.get("force_insert"):
            raise RuntimeError("receipts are append-only; complete them with services.receipt_complete")
        super().save(*args, **kwargs)

    def delete(self, *args: Any, **kwargs: Any) -> NoReturn:
        raise AppendOnlyError("receipts are append-only: they are never deleted")

    @property
    def spent_input_tokens(self) -> int:
        """Reported input tokens when known, else the conservative estimate (a budget never under-counts).

        A request that never left this process spent nothing."""
        if self.status == self.Status.NOT_SENT:
            return 0
        return self.reported_input_tokens if self.reported_input_tokens is not None else self.estimated_input_tokens


class BudgetRaise(AppendOnlyModel):
    """An explicit raise of a ledger's limits by a person: who, when, why, the limits before and after.

    Append-only, like receipts: a later raise is a new row. The ledger's own limits hold the current values;
    these rows are how they got there (the re-attempt of requests whose answer is unknown after a crash needs
    room the default budget, exactly one request per item, does not leave).
    """

    ledger = models.ForeignKey(Ledger, on_delete=models.PROTECT, related_name="budget_raises")
    raised_by = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL,
                                  related_name="+")
    actor = models.CharField(max_length=200, help_text="who raised it, as shown (a user name or 'command line: ...')")
    reason = models.TextField()
    old_max_requests = models.PositiveIntegerField()
    new_max_requests = models.PositiveIntegerField()
    old_max_input_tokens = models.PositiveBigIntegerField()
    new_max_input_tokens = models.PositiveBigIntegerField()
    created_at = models.DateTimeField(auto_now_add=True)

    append_only_updated = "budget raises are append-only: they are never updated"
    append_only_deleted = "budget raises are append-only: they are never deleted"

    class Meta:
        ordering = ["ledger_id", "id"]

    def __str__(self) -> str:
        return (f"ledger {self.ledger_id} raised by {self.actor}: requests {self.old_max_requests} -> "
                f"{self.new_max_requests}, input tokens {self.old_max_input_tokens} -> {self.new_max_input_tokens}")
