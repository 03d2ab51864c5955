"""Models of the blinded-review engine.

``Access`` only carries the product's custom permissions (no table). The
review models (pools, items, assignments, judgments) live here too.
"""

from __future__ import annotations

from django.db import models

# ---------------------------------------------------------------------------
# Blinded review: pools, items, assignments, judgments (append-only revisions),
# adjudications, and imported (provisional) label sources.
#
# What a reviewer may ever receive is limited to the item's texts (query,
# source heading/text, passage caption/text), its opaque ``public_id``, the
# pool's reviewer-facing title and scale, and their OWN judgments. Everything a
# job needs to map labels back (``external_ref``, ``query_id``, ``doc_id``)
# stays on the admin/job side: reviewer templates and serializers list their
# fields explicitly and never include these.
# ---------------------------------------------------------------------------


def new_public_id() -> str:
    """An opaque random id (no order, no meaning): 22 URL-safe characters."""
    import secrets

    return secrets.token_urlsafe(16)


class ReviewPool(models.Model):
    """A declared set of items to grade, recorded as it was declared."""

    public_id = models.CharField(max_length=32, unique=True, default=new_public_id, editable=False)
    name = models.CharField(max_length=200, help_text="Admin-facing name; never shown to reviewers.")
    reviewer_title = models.CharField(
        max_length=200, blank=True, help_text="What reviewers see as the title of this set (keep it neutral)."
    )
    instructions = models.TextField(blank=True, help_text="Shown to reviewers above the grades.")
    kind = models.CharField(max_length=32)
    declared_rule = models.TextField(help_text="How the pool was chosen, in words, as declared.")
    declared_params = models.JSONField(default=dict, blank=True)
    reviewers_per_item = models.PositiveSmallIntegerField(default=2)
    # The job's own pointer back (e.g. run id). Never rendered to reviewers.
    external_ref = models.JSONField(default=dict, blank=True)
    created_by = models.ForeignKey("auth.User", null=True, blank=True, on_delete=models.SET_NULL, related_name="+")
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["-created_at", "-id"]

    def __str__(self) -> str:
        return self.name


class ReviewItem(models.Model):
    """One thing to grade: a query, the complete source, and the passage the model saw.

    The texts are what the reviewer reads; the hashes bind judgments to them.
    Items may be re-hashed by their job (a source changed); judgments are not
    touched and become stale instead.
    """

    pool = models.ForeignKey(ReviewPool, on_delete=models.CASCADE, related_name="items")
    public_id = models.CharField(max_length=32, unique=True, default=new_public_id, editable=False)
    # Job-side identifiers (qrels qid/docid, per-query progress). Admin side only.
    query_id = models.CharField(max_length=200)
    doc_id = models.CharField(max_length=500)
    query_text = models.TextField()
    query_hash = models.CharField(max_length=64)
    source_heading = models.TextField(blank=True)
    source_text = models.TextField(blank=True)
    source_hash = models.CharField(max_length=64)
    passage_caption = models.TextField(blank=True)
    passage_text = models.TextField(blank=True)
    passage_hash = models.CharField(max_length=64)
    # Opaque to the review core; the job uses it to map judgments back. Never rendered to reviewers.
    external_ref = models.JSONField(default=dict, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["pool", "query_id", "doc_id"], name="review_item_unique_in_pool"),
        ]
        indexes = [models.Index(fields=["pool", "query_id"])]

    def __str__(self) -> str:
        return self.public_id


class Assignment(models.Model):
    """An item given to a reviewer. ``sort_key`` is the reviewer's own shuffled order."""

    item = models.ForeignKey(ReviewItem, on_delete=models.CASCADE, related_name="assignments")
    reviewer = models.ForeignKey("auth.User", on_delete=models.CASCADE, related_name="review_assignments")
    pool = models.ForeignKey(ReviewPool, on_delete=models.CASCADE, related_name="assignments")
    sort_key = models.CharField(max_length=64)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["item", "reviewer"], name="review_assignment_unique"),
        ]
        indexes = [models.Index(fields=["reviewer", "pool", "sort_key"])]

    def __str__(self) -> str:
        return f"{self.item_id} -> {self.reviewer_id}"


class Judgment(models.Model):
    """One reviewer's judgment of one item: a head row; its content lives in revisions.

    ``current`` points at the latest revision (a pointer, not content: the
    revision rows themselves are never updated).
    """

    item = models.ForeignKey(ReviewItem, on_delete=models.CASCADE, related_name="judgments")
    reviewer = models.ForeignKey("auth.User", on_delete=models.PROTECT, related_name="review_judgments")
    current = models.ForeignKey(
        "JudgmentRevision", null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    revision_count = models.PositiveIntegerField(default=0)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["item", "reviewer"], name="review_judgment_unique"),
        ]

    def __str__(self) -> str:
        return f"judgment {self.pk}"


class JudgmentRevision(models.Model):
    """One saved state of a judgment. Append-only: rows are inserted, never updated."""

    DRAFT = "draft"
    COMPLETE = "complete"
    STATUS_CHOICES = [(DRAFT, "draft"), (COMPLETE, "complete")]

    judgment = models.ForeignKey(Judgment, on_delete=models.CASCADE, related_name="revisions")
    number = models.PositiveIntegerField()
    status = models.CharField(max_length=16, choices=STATUS_CHOICES)
    # {grade_type: 0..3 | "unknown"}; a grade type absent from the dict is not answered yet.
    grades = models.JSONField(default=dict)
    note = models.TextField(blank=True)
    query_hash = models.CharField(max_length=64)
    source_hash = models.CharField(max_length=64)
    passage_hash = models.CharField(max_length=64)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["judgment", "number"], name="review_revision_unique_number"),
        ]
        ordering = ["judgment_id", "number"]

    def __str__(self) -> str:
        return f"revision {self.number} of judgment {self.judgment_id}"


class Adjudication(models.Model):
    """An admin's ruling on one grade type of one item. Append-only; the latest ruling counts."""

    item = models.ForeignKey(ReviewItem, on_delete=models.CASCADE, related_name="adjudications")
    grade_type = models.CharField(max_length=32)
    # 0..3 (or the kind's values) or "unknown"
    value = models.JSONField()
    note = models.TextField(blank=True)
    adjudicator = models.ForeignKey("auth.User", on_delete=models.PROTECT, related_name="+")
    query_hash = models.CharField(max_length=64)
    source_hash = models.CharField(max_length=64)
    passage_hash = models.CharField(max_length=64)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["item_id", "grade_type", "id"]

    def __str__(self) -> str:
        return f"adjudication {self.pk}"


class LabelSource(models.Model):
    """Labels that did not come from the blinded review (e.g. source-derived section labels).

    Provisional sources are reported as such and are never counted as passage labels.
    """

    name = models.CharField(max_length=200, unique=True)
    description = models.TextField(blank=True)
    provisional = models.BooleanField(default=True)
    created_by = models.ForeignKey("auth.User", null=True, blank=True, on_delete=models.SET_NULL, related_name="+")
    created_at = models.DateTimeField(auto_now_add=True)

    def __str__(self) -> str:
        return self.name


class ImportedLabel(models.Model):
    source = models.ForeignKey(LabelSource, on_delete=models.CASCADE, related_name="labels")
    query_id = models.CharField(max_length=200)
    doc_id = models.CharField(max_length=500)
    grade_type = models.CharField(max_length=32)
    value = models.JSONField()
    query_hash = models.CharField(max_length=64, blank=True)
    source_hash = models.CharField(max_length=64, blank=True)
    external_ref = models.JSONField(default=dict, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["source", "query_id", "doc_id", "grade_type"], name="review_imported_label_unique"
            ),
        ]

    def __str__(self) -> str:
        return f"{self.source_id}:{self.query_id}:{self.doc_id}"
