"""Items and their judgments: what a reviewer grades, and each reviewer's judgment of it as append-only revisions.

What a reviewer may ever receive of an item is its texts (query, source heading/text, passage caption/text), its
opaque ``public_id`` and their OWN judgments. Everything a job needs to map labels back (``external_ref``,
``query_id``, ``doc_id``) stays on the admin/job side: reviewer templates and serializers list their fields
explicitly and never include these.

Hashes are what a judgment binds to (``hashes``). They are computed on save from the stored texts, never taken
from a caller: a hash sent by a caller is only compared with these (``hashes.item_hashes_check``).
"""

from __future__ import annotations

from typing import Any

from django.db import models

from reviewapp.core.auth.signin import signin_issuer_current, signin_method_current
from reviewapp.core.models import AppendOnlyModel
from reviewapp.review.errors import PoolFrozen
from reviewapp.review.ids import new_public_id
from reviewapp.review.judgments.hashes import ITEM_HASH_FIELDS, ITEM_TEXT_FIELDS, item_hashes, texts_key


class ReviewItemQuerySet(models.QuerySet):
    def bulk_create(self, objs: Any, *args: Any, **kwargs: Any) -> Any:
        # bulk_create skips save(): the hashes are computed here too, so that no path stores a caller's hash.
        objs = list(objs)
        for obj in objs:
            obj.hashes_refresh()
        return super().bulk_create(objs, *args, **kwargs)


class ReviewItem(models.Model):
    """One thing to grade: a query, the complete source, and the passage the model saw.

    The texts are what the reviewer reads; the hashes bind judgments to them and are always computed from the
    texts on save (a caller cannot set them). Items may be re-bound by their job (a source changed); judgments
    are not touched and become stale instead.
    """

    # Named by its label, not imported: pools/ declares items, so it stands above this folder.
    pool = models.ForeignKey("reviewapp.ReviewPool", on_delete=models.CASCADE, related_name="items")
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
    # The pool's work order in tiers: every reviewer's queue runs tier by tier (0 first; one tier when all are
    # 0), in the reviewer's own keyed shuffle within a tier. Set by the declaring job, the same for every item of
    # one query (a tier inside a query would tell reviewers how its passages were chosen); never rendered.
    priority = models.PositiveIntegerField(default=0)
    created_at = models.DateTimeField(auto_now_add=True)

    objects = ReviewItemQuerySet.as_manager()

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["pool", "query_id", "doc_id"], name="review_item_unique_in_pool"),
        ]
        indexes = [models.Index(fields=["pool", "query_id"])]

    def __str__(self) -> str:
        return self.public_id

    def save(self, *args: Any, **kwargs: Any) -> None:
        self.hashes_refresh()
        update_fields = kwargs.get("update_fields")
        if update_fields is not None and set(update_fields) & set(ITEM_TEXT_FIELDS):
            kwargs["update_fields"] = {*update_fields, *ITEM_HASH_FIELDS}
        if self._state.adding and self.pool_id is not None and self.pool.is_judged():
            raise PoolFrozen(f"pool {self.pool.public_id}: items cannot be added once a judgment exists; make a new "
                             f"version of the pool instead (/review/pools/{self.pool.public_id}/)")
        super().save(*args, **kwargs)

    def delete(self, *args: Any, **kwargs: Any) -> Any:
        if self.judgments.exists():
            raise PoolFrozen(f"item {self.public_id} has judgments; judged items are never deleted")
        return super().delete(*args, **kwargs)

    def hashes_refresh(self) -> None:
        """Set the three hashes from the texts as they are now."""
        for field, value in item_hashes(query_text=self.query_text, source_heading=self.source_heading,
                                        source_text=self.source_text, passage_caption=self.passage_caption,
                                        passage_text=self.passage_text).items():
            setattr(self, field, value)

    @property
    def texts_key(self) -> str:
        return texts_key(query_hash=self.query_hash, source_hash=self.source_hash, passage_hash=self.passage_hash)


class Judgment(models.Model):
    """One reviewer's judgment of one item: a head row; its content lives in revisions.

    ``current`` points at the latest revision (a pointer, not content: the revision rows themselves are never updated).
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


class JudgmentRevision(AppendOnlyModel):
    """One saved state of a judgment. Append-only: rows are inserted, never updated."""

    DRAFT = "draft"
    COMPLETE = "complete"
    STATUS_CHOICES = [(DRAFT, "draft"), (COMPLETE, "complete")]

    judgment = models.ForeignKey(Judgment, on_delete=models.CASCADE, related_name="revisions")
    number = models.PositiveIntegerField()
    status = models.CharField(max_length=16, choices=STATUS_CHOICES)
    # {grade_type: 0..3 | "unknown"}; a grade type absent from the dict is not answered yet.
    grades = models.JSONField(default=dict)
    # Span answers of a kind that labels spans (contract clauses): [[start, end], ...], half-open character
    # offsets into the item's ``source_text``, sorted, trimmed of whitespace; [] for every other kind.
    spans = models.JSONField(default=list, blank=True)
    note = models.TextField(blank=True)
    query_hash = models.CharField(max_length=64)
    source_hash = models.CharField(max_length=64)
    passage_hash = models.CharField(max_length=64)
    # How the author signed in for the session that saved it (reviewapp.core.models.SigninMethod); "" when
    # not saved through a sign-in (commands, demo data, revisions from before this was recorded).
    signin_method = models.CharField(max_length=16, blank=True, default="")
    # The identity provider's issuer URL when signed in through it (``oidc``); "" otherwise.
    signin_issuer = models.CharField(max_length=255, blank=True, default="")
    created_at = models.DateTimeField(auto_now_add=True)

    append_only_updated = "judgment revisions are append-only: save a new revision instead"
    append_only_deleted = "judgment revisions are append-only: they are never deleted"

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["judgment", "number"], name="review_revision_unique_number"),
        ]
        ordering = ["judgment_id", "number"]

    def __str__(self) -> str:
        return f"revision {self.number} of judgment {self.judgment_id}"

    def save(self, *args: Any, **kwargs: Any) -> None:
        # A label is evidence: a later state is a new revision, never an edit of one a reviewer made (the base
        # refuses a stored row).
        if self._state.adding and not self.signin_method:
            self.signin_method = signin_method_current()
            self.signin_issuer = self.signin_issuer or signin_issuer_current()
        super().save(*args, **kwargs)
