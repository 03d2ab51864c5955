"""A pool's administration after it is declared: unassign, reassign, and label-deciding settings.

Unjudged assignments move; judged ones stay (they are a label's record). Settings that decide labels
(reviewers per item, kind) change only until the first judgment; after that a change is a new version of
the pool, with the same items, the same guidelines and no judgments.
"""

from __future__ import annotations

from dataclasses import dataclass

from django.contrib.auth.base_user import AbstractBaseUser
from django.db import transaction

from reviewapp.review.models import Assignment, Judgment, PoolFrozen, ReviewPool
from reviewapp.review.pools import guidelines
from reviewapp.review.services import (
    ITEM_FIELDS,
    MAX_REVIEWERS_PER_ITEM,
    ReviewError,
    assignee_refusal,
    pool_create,
    pool_kind,
)
from reviewapp.review.workspace.queue_order import queue_rebuild


def _open_assignments(*, pool: ReviewPool, reviewer: AbstractBaseUser):
    """Assignments of ``reviewer`` in ``pool`` with no judgment yet (a judged one is a label's record: it stays)."""
    judged = Judgment.objects.filter(reviewer=reviewer, item__pool=pool).values("item_id")
    return Assignment.objects.filter(pool=pool, reviewer=reviewer).exclude(item_id__in=judged)


@dataclass(frozen=True)
class Unassigned:
    removed: int
    kept_judged: int


@transaction.atomic
def assignment_unassign(*, pool: ReviewPool, reviewer: AbstractBaseUser) -> Unassigned:
    """Take ``reviewer`` off ``pool``: their unjudged assignments go; judged ones stay (their history)."""
    ReviewPool.objects.select_for_update().filter(pk=pool.pk).first()
    open_ids = list(_open_assignments(pool=pool, reviewer=reviewer).values_list("pk", flat=True))
    Assignment.objects.filter(pk__in=open_ids).delete()
    queue_rebuild(reviewer_id=reviewer.pk, pool_id=pool.pk)
    kept = Assignment.objects.filter(pool=pool, reviewer=reviewer).count()
    return Unassigned(removed=len(open_ids), kept_judged=kept)


@dataclass(frozen=True)
class Reassigned:
    moved: int
    already_held: int
    kept_judged: int
    linked: int = 0  # served by ``to_reviewer``'s judgment of the same texts in another pool (judge once)
    kept_repeat: int = 0  # left with ``from_reviewer``: ``to_reviewer`` holds the same texts under other rules


@transaction.atomic
def assignment_reassign(*, pool: ReviewPool, from_reviewer: AbstractBaseUser,
                        to_reviewer: AbstractBaseUser) -> Reassigned:
    """Give ``from_reviewer``'s unjudged items of ``pool`` to ``to_reviewer`` (who must be assignable).

    Placed by ``assign.assignments_place``: an item ``to_reviewer`` already holds is not given twice (it is only
    taken off ``from_reviewer``), one whose texts they judge elsewhere under the same rules is linked, and one
    whose texts they hold under other rules stays with ``from_reviewer``.
    """
    from reviewapp.review.assignment.assign import assignments_place

    if from_reviewer.pk == to_reviewer.pk:
        raise ReviewError("to_reviewer: choose a different reviewer")
    refusal = assignee_refusal(pool=pool, user=to_reviewer)
    if refusal:
        raise ReviewError(f"to_reviewer: {refusal}")
    ReviewPool.objects.select_for_update().filter(pk=pool.pk).first()
    moving = list(_open_assignments(pool=pool, reviewer=from_reviewer).select_related("item"))
    try:
        placement = assignments_place(pool=pool, reviewer=to_reviewer, items=[a.item for a in moving])
    except ReviewError as error:
        raise ReviewError(f"to_reviewer: {error}") from None
    kept = {item.pk for item in placement.refused}
    Assignment.objects.filter(pk__in=[a.pk for a in moving if a.item_id not in kept]).delete()
    queue_rebuild(reviewer_id=from_reviewer.pk, pool_id=pool.pk)
    judged_kept = Assignment.objects.filter(pool=pool, reviewer=from_reviewer).count() - len(kept)
    return Reassigned(moved=len(placement.assigned), already_held=len(placement.held), kept_judged=judged_kept,
                      linked=len(placement.linked), kept_repeat=len(kept))


@transaction.atomic
def pool_settings_change(*, pool: ReviewPool, reviewers_per_item: int | None = None,
                         kind: str | None = None) -> ReviewPool:
    """Change a pool's label-deciding settings; refused once any judgment exists (make a new version then)."""
    locked = ReviewPool.objects.select_for_update().get(pk=pool.pk)
    if reviewers_per_item is not None:
        if not isinstance(reviewers_per_item, int) or not 1 <= reviewers_per_item <= MAX_REVIEWERS_PER_ITEM:
            raise ReviewError(f"reviewers_per_item: must be a whole number from 1 to {MAX_REVIEWERS_PER_ITEM}")
        locked.reviewers_per_item = reviewers_per_item
    if kind is not None:
        pool_kind(kind)
        locked.kind = kind
    try:
        locked.save()
    except PoolFrozen as error:
        raise ReviewError(error.messages[0]) from None
    return locked


@transaction.atomic
def pool_new_version(*, pool: ReviewPool, reviewers_per_item: int | None = None,
                     created_by: AbstractBaseUser | None = None) -> ReviewPool:
    """A new pool with the same items and a changed label-deciding setting; the judged pool stays as it was.

    The new version has no judgments or assignments (assign it like any pool). Its declared parameters name
    the version it replaces and its number.
    """
    per_item = pool.reviewers_per_item if reviewers_per_item is None else reviewers_per_item
    params = dict(pool.declared_params or {})
    version = int(params.get("pool_version", 1)) + 1
    params.update({"pool_version": version, "previous_version": pool.public_id})
    items = [
        {field: getattr(item, field) for field in ITEM_FIELDS}
        for item in pool.items.all()
    ]
    new = pool_create(
        name=f"{pool.name} (v{version})"[:200], kind=pool.kind, items=items,
        declared_rule=pool.declared_rule, declared_params=params, reviewers_per_item=per_item,
        reviewer_title=pool.reviewer_title, instructions=pool.instructions, external_ref=pool.external_ref,
        created_by=created_by,
    )
    # Reviewers of the new version follow the same guidelines until an admin publishes new ones.
    current = guidelines.pool_guidelines(pool=pool)
    if current is not None:
        guidelines.guidelines_publish(pool=new, text=current.text, by=created_by)
    return new
