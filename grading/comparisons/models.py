"""CUAD comparisons planned together: the runs an admin declared to be compared on one dataset and sample."""

from __future__ import annotations

from django.conf import settings
from django.db import models

from grading.dataset.models import CuadDataset, Sample
from reviewapp.core.models import AppendOnlyModel


class CuadComparison(AppendOnlyModel):
    """A set of extraction runs graded against one dataset (CUAD, or a firm's frozen gold set), to be compared on
    one sample of it: the summary of the comparison speaks of every one of them and nothing else.

    CUAD has no held-out split, so there is no exposure to plan; the declaration fixes which systems one study
    compares, so a page cannot quietly leave one out.
    """

    class Via(models.TextChoices):
        PAGE = "page", "declaration page"
        API = "api", "API"
        COMMAND = "command", "command line"

    dataset = models.ForeignKey(CuadDataset, on_delete=models.PROTECT, related_name="+")
    sample = models.ForeignKey(Sample, on_delete=models.PROTECT, related_name="+")
    # One entry per run, in declared order: run_id, model, content_sha256.
    runs = models.JSONField()
    # sha256 of dataset, sample manifest, the runs' contents, who declared and when.
    sha256 = models.CharField(max_length=64, unique=True)
    declared_by = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.PROTECT,
                                    related_name="+")
    declared_via = models.CharField(max_length=10, choices=Via.choices)
    declared_at = models.DateTimeField()

    append_only_updated = "CUAD comparisons are append-only: rows are never updated"
    append_only_deleted = "CUAD comparisons are append-only: rows are never deleted"

    class Meta:
        ordering = ["-declared_at", "-id"]

    def __str__(self) -> str:
        return f"CUAD comparison #{self.pk}: {len(self.runs)} runs on sample #{self.sample_id}"
