"""The reviewer's queue as stored: the tally of each reviewer's queue per pool, and "skip for later" markers.

``QueueTally`` is kept by ``queue_order`` in the same transaction as every write that moves an item from one queue
filter to another, so the queue page reads its counts and progress from one row instead of counting the queue.
"""

from __future__ import annotations

from django.db import models

from reviewapp.review.assignment.models import Assignment


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
