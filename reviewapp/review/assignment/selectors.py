"""Reads of assignment: who may be assigned blind review, and for the email notices (reviewapp.notifications)
who holds what, since when.
"""

from __future__ import annotations

from datetime import datetime

from django.contrib.auth import get_user_model
from django.contrib.auth.models import User
from django.db.models import Max, Q

from reviewapp.core.auth.roles import grading_refusal
from reviewapp.review.assignment.models import Assignment
from reviewapp.review.judgments.models import Judgment
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


def reviewer_candidates() -> list[User]:
    """People who may be assigned blind review: the reviewer role, active, not synthetic, never seeing model output."""
    user_model = get_user_model()
    perm = Q(groups__permissions__codename="grade_passages", groups__permissions__content_type__app_label="reviewapp")
    direct = Q(user_permissions__codename="grade_passages", user_permissions__content_type__app_label="reviewapp")
    people = (user_model.objects.filter(is_active=True, is_staff=False, is_superuser=False)
              .filter(perm | direct).distinct())
    return [user for user in people.order_by(user_model.USERNAME_FIELD) if grading_refusal(user) is None]


def assignments_held(user: User) -> int:
    """Assignments not yet completed: a finished reviewer may take another role, an active one may not."""
    done = Judgment.objects.filter(reviewer=user, current__status="complete").values("item_id")
    return Assignment.objects.filter(reviewer=user).exclude(item_id__in=done).count()
