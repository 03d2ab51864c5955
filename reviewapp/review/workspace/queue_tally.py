"""The per-(reviewer, pool) tally of a reviewer's queue: how many of their items sit under each queue filter.

Kept by ``queue_order`` in the same transaction as every write that moves an item from one filter to another, so
the queue page reads its counts and progress from one row instead of counting the queue. A model of the review
app (imported by ``models``); it names its relations by label so that it imports nothing of the app.
"""

from __future__ import annotations

from django.db import models


class QueueTally(models.Model):
    reviewer = models.ForeignKey("auth.User", on_delete=models.CASCADE, related_name="+")
    pool = models.ForeignKey("reviewapp.ReviewPool", on_delete=models.CASCADE, related_name="+")
    todo = models.PositiveIntegerField(default=0)
    draft = models.PositiveIntegerField(default=0)
    complete = models.PositiveIntegerField(default=0)
    skipped = models.PositiveIntegerField(default=0)  # open and skipped for later
    skip_marks = models.PositiveIntegerField(default=0)  # every item skipped for later, complete or not

    class Meta:
        app_label = "reviewapp"
        constraints = [models.UniqueConstraint(fields=["reviewer", "pool"], name="review_queue_tally_unique")]

    def __str__(self) -> str:
        return f"queue tally of reviewer {self.reviewer_id} in pool {self.pool_id}"

    @property
    def total(self) -> int:
        return self.todo + self.draft + self.complete + self.skipped
