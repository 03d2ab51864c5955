"""Who holds which item: assignments, judge-once links (a reviewer's judgment serving another pool's item), and
each reviewer's own order of their assignments as stored: "skip for later" markers, and the tally of each
reviewer's queue per pool (kept by ``queue_order`` in the same transaction as every write that moves an item from
one queue filter to another, so the queue page reads its counts from one row instead of counting the queue).
"""

from __future__ import annotations

from typing import Any

from django.db import models

from reviewapp.review.judgments.models import ReviewItem
from reviewapp.review.pools.models import ReviewPool


class Assignment(models.Model):
    """An item given to a reviewer. ``sort_key`` is the reviewer's own shuffled order.

    ``texts_key`` names the texts the reviewer was given (``texts_key`` of the item's three hashes when assigned).
    The database refuses a second assignment of the same texts to the same reviewer, in any pool: two admins
    assigning at the same moment cannot both miss each other's rows. Made only by ``services.assignments_place``.
    """

    item = models.ForeignKey(ReviewItem, on_delete=models.CASCADE, related_name="assignments")
    reviewer = models.ForeignKey("auth.User", on_delete=models.CASCADE, related_name="review_assignments")
    pool = models.ForeignKey(ReviewPool, on_delete=models.CASCADE, related_name="assignments")
    sort_key = models.CharField(max_length=64)
    # '' only on rows made before the key existed that repeated texts the reviewer already held.
    texts_key = models.CharField(max_length=64, blank=True, default="")
    created_at = models.DateTimeField(auto_now_add=True)
    # The reviewer's order, stored so that the queue reads a page by index (kept by ``queue_order``): the place in
    # (tier, sort_key), ``seq`` in the order shown (skipped last), ``state`` the queue filter the row is under.
    shuffle_place = models.PositiveIntegerField(default=0)
    seq = models.BigIntegerField(default=0)
    state = models.CharField(max_length=8, default="todo")

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["item", "reviewer"], name="review_assignment_unique"),
            models.UniqueConstraint(fields=["reviewer", "texts_key"], condition=~models.Q(texts_key=""),
                                    name="review_assignment_texts_once"),
        ]
        indexes = [models.Index(fields=["reviewer", "pool", "sort_key"]),
                   models.Index(fields=["reviewer", "pool", "seq"], name="review_assign_queue_order"),
                   models.Index(fields=["reviewer", "pool", "state", "seq"], name="review_assign_queue_state"),
                   models.Index(fields=["reviewer", "pool", "seq"], condition=~models.Q(state="complete"),
                                name="review_assign_queue_open")]

    def __str__(self) -> str:
        return f"{self.item_id} -> {self.reviewer_id}"

    def save(self, *args: Any, **kwargs: Any) -> None:
        if self._state.adding and not self.texts_key:
            self.texts_key = self.item.texts_key
        super().save(*args, **kwargs)


class JudgmentReuse(models.Model):
    """Judge once: one reviewer's judgment of ``source_item`` serves ``item`` of another pool, by reference.

    Made when a pool is assigned and the reviewer already holds an item with the same query, source and passage
    hashes in another pool of the same kind: the reviewer gets no second assignment. Nothing is copied: the
    reviewer's judgment of ``source_item`` (whatever its current revision) is read as their judgment of ``item``
    while its hashes still equal ``item``'s and both pools have the same kind; otherwise it counts nowhere here.
    It only ever serves the same reviewer (one row per item and reviewer, never another person's grades).
    """

    item = models.ForeignKey(ReviewItem, on_delete=models.CASCADE, related_name="reuses")
    reviewer = models.ForeignKey("auth.User", on_delete=models.PROTECT, related_name="+")
    source_item = models.ForeignKey(ReviewItem, on_delete=models.CASCADE, related_name="reused_by")
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["item", "reviewer"], name="review_reuse_unique"),
            models.CheckConstraint(condition=~models.Q(item=models.F("source_item")), name="review_reuse_not_self"),
        ]

    def __str__(self) -> str:
        return f"reuse of item {self.source_item_id} for item {self.item_id} by {self.reviewer_id}"


class QueueTally(models.Model):
    reviewer = models.ForeignKey("auth.User", on_delete=models.CASCADE, related_name="+")
    pool = models.ForeignKey("reviewapp.ReviewPool", on_delete=models.CASCADE, related_name="+")
    todo = models.PositiveIntegerField(default=0)
    draft = models.PositiveIntegerField(default=0)
    complete = models.PositiveIntegerField(default=0)
    skipped = models.PositiveIntegerField(default=0)  # open and skipped for later
    skip_marks = models.PositiveIntegerField(default=0)  # every item skipped for later, complete or not

    class Meta:
        constraints = [models.UniqueConstraint(fields=["reviewer", "pool"], name="review_queue_tally_unique")]

    def __str__(self) -> str:
        return f"queue tally of reviewer {self.reviewer_id} in pool {self.pool_id}"

    @property
    def total(self) -> int:
        return self.todo + self.draft + self.complete + self.skipped


class AssignmentSkip(models.Model):
    """A reviewer's "skip for later" on one of their assignments: the item moves to the end of their own order.

    Per reviewer and private to them; it says nothing about the item (no rank, no score) and changes no judgment.
    Removing the marker puts the item back at its place in the keyed shuffle.
    """

    assignment = models.OneToOneField(Assignment, on_delete=models.CASCADE, related_name="skip")
    skipped_at = models.DateTimeField(auto_now_add=True)

    def __str__(self) -> str:
        return f"skip of assignment {self.assignment_id}"
