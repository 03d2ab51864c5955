"""Reads of assignments for the email notices (reviewapp.notifications): who holds what, since when."""

from __future__ import annotations

from datetime import datetime

from django.db.models import Max

from reviewapp.review.assignment.models import Assignment
from reviewapp.review.pools.selectors import notice_pools


def assignment_marks() -> dict[tuple[int, int], int]:
    """(reviewer id, pool pk) -> the highest assignment id, over pools of real review."""
    real = [pool.pk for pool in notice_pools()]
    return {(row["reviewer_id"], row["pool_id"]): row["last"] for row in
            Assignment.objects.filter(pool_id__in=real).values("reviewer_id", "pool_id").annotate(last=Max("id"))}


def assignments_after(*, reviewer_id: int, pool_pk: int, after_id: int) -> int:
    return Assignment.objects.filter(reviewer_id=reviewer_id, pool_id=pool_pk, id__gt=after_id).count()


def assignments_waiting(*, assigned_before: datetime) -> set[tuple[int, str]]:
    """(reviewer id, pool public id) of real pools where the reviewer holds an assignment older than the cutoff."""
    real = [pool.pk for pool in notice_pools()]
    return set(Assignment.objects.filter(pool_id__in=real, created_at__lte=assigned_before)
               .values_list("reviewer_id", "pool__public_id").distinct())
