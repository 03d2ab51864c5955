"""Assigning a pool's items to reviewers: balanced, and judging once.

``pool_assign_detail`` gives each item to the pool's number of distinct reviewers. Judge once comes first: a
reviewer who already holds the same texts in another pool of the same kind is linked (``reuse``) instead of
assigned again, so their one judgment serves both pools and their queue never shows the texts twice.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from django.contrib.auth.models import AbstractBaseUser
from django.db import transaction
from django.db.models import Count

from reviewapp.core.hashing import sha256_hex
from reviewapp.review.models import Assignment, JudgmentReuse, ReviewItem, ReviewPool
from reviewapp.review.reuse import reuse_completed, reuse_links_prune, reuse_sources
from reviewapp.review.services import ReviewError, assignee_refusal, assignment_sort_key


def _tiebreak(pool: ReviewPool, reviewer_id: int, item: ReviewItem) -> str:
    return sha256_hex(f"assign:{pool.public_id}:{item.public_id}:{reviewer_id}")


@dataclass(frozen=True)
class AssignResult:
    """What one ``pool_assign_detail`` added: new assignments, and judge-once links (no new work)."""

    assigned: int
    reused: int  # items a reviewer already held in another pool, linked instead of assigned again
    reused_complete: int  # of those, how many the reviewer has completed already (they count at once)
    per_reviewer: dict[int, dict[str, int]]  # reviewer id -> {"assigned": n, "reused": n}


@transaction.atomic
def pool_assign_detail(
    *,
    pool: ReviewPool,
    reviewers: Iterable[AbstractBaseUser],
    per_item: int | None = None,
) -> AssignResult:
    """Give each item to ``per_item`` (default: the pool's N) distinct reviewers, balanced, judging once.

    Judge once first: a reviewer who already holds an item with the same texts in another pool of the same
    kind (``reuse.reuse_sources``) serves this item with that judgment through a link, at no new work, before
    anyone else is considered. The rest goes to the reviewers with the fewest assignments in this pool so far
    (ties broken by a hash, not by name). Safe to run again: only missing assignments and links are added.
    """
    per_item = pool.reviewers_per_item if per_item is None else per_item
    people = {user.pk: user for user in reviewers}
    for user in people.values():
        refusal = assignee_refusal(pool=pool, user=user)
        if refusal:
            raise ReviewError(refusal)
    if per_item < 1:
        raise ReviewError("per_item: must be at least 1")
    if per_item > len(people):
        raise ReviewError(f"per_item {per_item} needs at least {per_item} reviewers; {len(people)} given")
    # Lock the pool row so two concurrent assign runs cannot over-assign.
    ReviewPool.objects.select_for_update().filter(pk=pool.pk).first()
    load = dict.fromkeys(people, 0)
    counts = Assignment.objects.filter(pool=pool, reviewer_id__in=people).values("reviewer_id").annotate(n=Count("id"))
    for row in counts:
        load[row["reviewer_id"]] = row["n"]
    existing: dict[int, set[int]] = {}
    for item_id, reviewer_id in Assignment.objects.filter(pool=pool).values_list("item_id", "reviewer_id"):
        existing.setdefault(item_id, set()).add(reviewer_id)
    reuse_links_prune(pool=pool)
    for item_id, reviewer_id in JudgmentReuse.objects.filter(item__pool=pool).values_list("item_id", "reviewer_id"):
        existing.setdefault(item_id, set()).add(reviewer_id)
    sources = reuse_sources(pool=pool, reviewer_ids=people)
    completed = reuse_completed(sources=sources)
    new: list[Assignment] = []
    links: list[JudgmentReuse] = []
    per_reviewer = {pk: {"assigned": 0, "reused": 0} for pk in people}
    for item in pool.items.order_by("public_id"):
        have = existing.get(item.pk, set())
        need = per_item - len(have)
        if need <= 0:
            continue
        # Judge once: a completed judgment first, then one still to make elsewhere (it will serve here too).
        holders = sorted((pk for pk in people if pk not in have and (item.pk, pk) in sources),
                         key=lambda pk: ((item.pk, pk) not in completed, _tiebreak(pool, pk, item)))
        for pk in holders[:need]:
            links.append(JudgmentReuse(item=item, reviewer_id=pk, source_item_id=sources[(item.pk, pk)]))
            per_reviewer[pk]["reused"] += 1
        have = have | set(holders[:need])
        need -= len(holders[:need])
        candidates = sorted(
            (pk for pk in people if pk not in have), key=lambda pk: (load[pk], _tiebreak(pool, pk, item))
        )
        for pk in candidates[:need]:
            load[pk] += 1
            per_reviewer[pk]["assigned"] += 1
            new.append(
                Assignment(
                    item=item,
                    pool=pool,
                    reviewer_id=pk,
                    sort_key=assignment_sort_key(
                        pool_public_id=pool.public_id, reviewer_id=pk, item_public_id=item.public_id
                    ),
                )
            )
    Assignment.objects.bulk_create(new)
    JudgmentReuse.objects.bulk_create(links)
    return AssignResult(assigned=len(new), reused=len(links),
                        reused_complete=sum(1 for link in links if (link.item_id, link.reviewer_id) in completed),
                        per_reviewer=per_reviewer)
