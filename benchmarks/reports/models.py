"""The held-out exposure ledger: every computation of held-out figures, append-only."""

from __future__ import annotations

from django.conf import settings
from django.db import models

from benchmarks.suites.models import Suite
from reviewapp.core.models import AppendOnlyModel


class HeldoutExposure(AppendOnlyModel):
    """One computation of a suite's held-out figures for a page, an export, the API or a command.

    The seed's rule is that a held-out split is scored once per configuration: a retrieval or model
    change made after looking at held-out figures needs a fresh held-out suite. This ledger is how the
    report knows whether that rule still holds for the configuration it shows.
    """

    class Purpose(models.TextChoices):
        PAGE = "page", "report page"
        EXPORT = "export", "report export"
        API = "api", "API"
        COMMAND = "command", "command line"

    suite = models.ForeignKey(Suite, on_delete=models.PROTECT, related_name="heldout_exposures")
    split = models.CharField(max_length=10, default="heldout")
    # sha256 of the canonical retrieval configuration (configuration name and detail, k, passage rule, engine)
    retrieval_sha256 = models.CharField(max_length=64)
    # sha256 of the canonical rerank configuration (provider, model, question version and hash); '' without one
    rerank_sha256 = models.CharField(max_length=64, blank=True)
    configuration = models.JSONField(help_text="the configuration both hashes were computed from")
    purpose = models.CharField(max_length=10, choices=Purpose.choices)
    retrieval_run_id = models.PositiveIntegerField(null=True, blank=True)
    rerank_run_id = models.PositiveIntegerField(null=True, blank=True)
    scored_by = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.PROTECT,
                                  related_name="+")
    scored_at = models.DateTimeField(auto_now_add=True)

    append_only_updated = "the held-out exposure ledger is append-only: rows are never updated"
    append_only_deleted = "the held-out exposure ledger is append-only: rows are never deleted"

    class Meta:
        ordering = ["suite_id", "split", "id"]
        indexes = [models.Index(fields=["suite", "split", "id"], name="exposure_suite_split")]

    def __str__(self) -> str:
        return f"{self.suite} {self.split} scored for {self.purpose} at {self.scored_at:%Y-%m-%d %H:%M}"
