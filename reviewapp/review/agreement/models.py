"""Rulings: an admin's adjudication of one grade type of one item (append-only; the latest ruling counts)."""

from __future__ import annotations

from django.db import models

from reviewapp.core.models import AppendOnlyModel
from reviewapp.review.judgments.models import ReviewItem


class Adjudication(AppendOnlyModel):
    """An admin's ruling on one grade type of one item. Append-only; the latest ruling counts."""

    item = models.ForeignKey(ReviewItem, on_delete=models.CASCADE, related_name="adjudications")
    grade_type = models.CharField(max_length=32)
    # 0..3 (or the kind's values) or "unknown"
    value = models.JSONField()
    # The ruled span set on a kind that labels spans (same shape as ``JudgmentRevision.spans``); [] otherwise.
    spans = models.JSONField(default=list, blank=True)
    note = models.TextField(blank=True)
    adjudicator = models.ForeignKey("auth.User", on_delete=models.PROTECT, related_name="+")
    query_hash = models.CharField(max_length=64)
    source_hash = models.CharField(max_length=64)
    passage_hash = models.CharField(max_length=64)
    created_at = models.DateTimeField(auto_now_add=True)

    append_only_updated = "rulings are append-only: record a new ruling instead"
    append_only_deleted = "rulings are append-only: they are never deleted"

    class Meta:
        ordering = ["item_id", "grade_type", "id"]

    def __str__(self) -> str:
        return f"adjudication {self.pk}"
