"""Labels from outside the blinded review: imported label sources, and Label Studio or Argilla annotations.

They are other label sources, never judgments: nobody here assigned the annotator, nor knows what they were shown
beside the texts, so they are not blind. Provisional label sources are never counted as passage labels; imported
annotations are stored apart from judgments, append-only, bound by hash to the item's texts as the server computed
them at import, and counted by no human-label metric.
"""

from __future__ import annotations

from django.db import models

from reviewapp.core.models import AppendOnlyModel
from reviewapp.review.judgments.models import ReviewItem
from reviewapp.review.pools.models import ReviewPool


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


class LabelImport(AppendOnlyModel):
    """One imported file of annotations for one pool: its provenance. Append-only."""

    LABEL_STUDIO = "label-studio"
    ARGILLA = "argilla"
    TOOL_CHOICES = [(LABEL_STUDIO, "Label Studio"), (ARGILLA, "Argilla")]

    pool = models.ForeignKey(ReviewPool, on_delete=models.PROTECT, related_name="label_imports")
    tool = models.CharField(max_length=16, choices=TOOL_CHOICES)
    filename = models.CharField(max_length=300, blank=True, help_text="The file's name as given.")
    # SHA-256 of the canonical JSON (sorted keys, no spaces) of the tasks or records imported: the same content
    # has the same digest whichever route (file, upload, API) brought it, so it is imported once per pool.
    content_sha256 = models.CharField(max_length=64)
    # Always False: a constraint keeps it so; stored so that every export of these rows says it.
    blind = models.BooleanField(default=False)
    # A name, not a foreign key: deleting the account must not rewrite (SET_NULL) an append-only row.
    imported_by = models.CharField(max_length=150, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    append_only_updated = "label imports are append-only: import a new file instead"
    append_only_deleted = "label imports are append-only: they are never deleted"

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["pool", "content_sha256"], name="review_label_import_once"),
            models.CheckConstraint(condition=models.Q(blind=False), name="review_label_import_not_blind"),
        ]
        ordering = ["pool_id", "id"]

    def __str__(self) -> str:
        return f"{self.tool} import {self.pk} into pool {self.pool_id}"


class ImportedAnnotation(AppendOnlyModel):
    """One grade of one item by one outside annotator, from a ``LabelImport``. Append-only; never a judgment.

    The hashes are the item's, computed by the server from the texts the file carried (equal to the item's at
    import, or the import was refused); when the item's texts change later the annotation is stale.
    """

    label_import = models.ForeignKey(LabelImport, on_delete=models.PROTECT, related_name="annotations")
    item = models.ForeignKey(ReviewItem, on_delete=models.PROTECT, related_name="imported_annotations")
    # Where in the file: "tasks[3].annotations[0]" or "records[3].responses.passage[1]".
    location = models.CharField(max_length=200)
    # The annotator as the file names them (Label Studio's completed_by, Argilla's user_id): unverified.
    annotator = models.CharField(max_length=300)
    grade_type = models.CharField(max_length=32)
    value = models.JSONField()
    query_hash = models.CharField(max_length=64)
    source_hash = models.CharField(max_length=64)
    passage_hash = models.CharField(max_length=64)
    created_at = models.DateTimeField(auto_now_add=True)

    append_only_updated = "imported annotations are append-only: import a new file instead"
    append_only_deleted = "imported annotations are append-only: they are never deleted"

    class Meta:
        ordering = ["label_import_id", "id"]

    def __str__(self) -> str:
        return f"imported annotation {self.pk}"
