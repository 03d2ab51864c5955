"""What a reviewer's day reads from the database: one query, whatever the queue's length."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, cast

from django.conf import settings

from reviewapp.review.day.openings import reviewer_saves_and_openings
from reviewapp.review.day.timing import Estimate, duration_words, estimate_left, seconds_spent


@dataclass(frozen=True)
class PoolDay:
    """One pool of the reviewer's day: what is left, what is done, the time spent and the time to finish."""

    pool_id: str
    title: str
    total: int
    completed: int
    spent_seconds: float
    estimate: Estimate

    @property
    def left(self) -> int:
        return self.total - self.completed

    @property
    def percent(self) -> int:
        return round(100 * self.completed / self.total) if self.total else 0

    @property
    def spent_words(self) -> str:
        return duration_words(self.spent_seconds) if self.spent_seconds else "none yet"

    @property
    def left_words(self) -> str:
        return duration_words(self.estimate.seconds_left) if self.left else "done"


def reviewer_spent_seconds(*, reviewer_id: int) -> dict[int, float]:
    """Seconds the reviewer spent per pool (pool primary key), from every revision they saved and every item they
    opened (one query), measured per item (``timing``)."""
    saves, opens = reviewer_saves_and_openings(reviewer_id=reviewer_id)
    # seconds_spent keys by whatever the saves carry: here the pool ids (ints) of reviewer_saves_and_openings.
    return {cast(int, pool): seconds for pool, seconds in
            seconds_spent(saves, idle_cap_seconds=settings.REVIEW_IDLE_CAP_SECONDS, opens=opens).items()}


def reviewer_day(*, reviewer: Any, queues: list[Any]) -> list[PoolDay]:
    """The day of a reviewer whose queue pages (``queue.reviewer_queue_pages``) are ``queues``."""
    completed = {q.pool_pk: q.completed for q in queues}
    # Pools no longer in the queue (unassigned) neither count for the pace nor appear.
    every = reviewer_spent_seconds(reviewer_id=reviewer.pk)
    spent = {pool: every.get(pool, 0.0) for pool in completed}
    return [PoolDay(pool_id=q.pool_id, title=q.title, total=q.total, completed=q.completed,
                    spent_seconds=spent.get(q.pool_pk, 0.0),
                    estimate=estimate_left(pool=q.pool_pk, left=q.total - q.completed, spent=spent,
                                           completed=completed))
            for q in queues]
