"""Comparisons planned together: the systems an admin declared before any of their held-out figures existed."""

from __future__ import annotations

from django.conf import settings
from django.db import models

from benchmarks.suites.models import Suite
from reviewapp.core.models import AppendOnlyModel


class DeclaredComparison(AppendOnlyModel):
    """A set of system configurations to be compared on one held-out split, fixed before any was scored there.

    The held-out ledger (``benchmarks.reports.exposure``) counts the declared systems as one look at the split:
    they were chosen together before any held-out figure of them could be seen, so none of them warns against
    another. The declaration is refused for a system the ledger shows scored on the split already, in the same
    locked transaction that held-out computations append to the ledger in.
    """

    class Via(models.TextChoices):
        PAGE = "page", "declaration page"
        API = "api", "API"
        COMMAND = "command", "command line"

    suite = models.ForeignKey(Suite, on_delete=models.PROTECT, related_name="declared_comparisons")
    split = models.CharField(max_length=10, default="heldout")
    # One entry per system: key, label, retrieval_sha256, rerank_sha256, configuration (as the ledger hashes it),
    # retrieval_run_id, rerank_run_id.
    systems = models.JSONField()
    # sha256 of suite (name, version, sha256), split, the systems' configurations, who declared and when.
    sha256 = models.CharField(max_length=64, unique=True)
    declared_by = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.PROTECT,
                                    related_name="+")
    declared_via = models.CharField(max_length=10, choices=Via.choices)
    declared_at = models.DateTimeField()

    append_only_updated = "declared comparisons are append-only: rows are never updated"
    append_only_deleted = "declared comparisons are append-only: rows are never deleted"

    class Meta:
        ordering = ["suite_id", "split", "declared_at", "id"]
        indexes = [models.Index(fields=["suite", "split", "declared_at"], name="comparison_suite_split")]

    def __str__(self) -> str:
        return f"{self.suite} {self.split}: {len(self.systems)} systems declared {self.declared_at:%Y-%m-%d %H:%M}"
