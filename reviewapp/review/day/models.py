"""When a reviewer opened each of their items: where the time spent on an item starts (``timing``)."""

from __future__ import annotations

from django.db import models

from reviewapp.review.judgments.models import ReviewItem


class ItemOpening(models.Model):
    """A reviewer opened one of their items (its page, or the item through the API): where the time spent on it
    starts, the way Label Studio's lead time starts when a task is opened (``reviewapp.review.day.timing``).

    A timing log, not a label: it goes with its item and its reviewer (an unlabelled pool can still be removed).
    """

    item = models.ForeignKey(ReviewItem, on_delete=models.CASCADE, related_name="+")
    reviewer = models.ForeignKey("auth.User", on_delete=models.CASCADE, related_name="+")
    opened_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        indexes = [models.Index(fields=["reviewer", "opened_at"], name="review_opening_reviewer_at")]

    def __str__(self) -> str:
        return f"opening of {self.item_id} by {self.reviewer_id}"
