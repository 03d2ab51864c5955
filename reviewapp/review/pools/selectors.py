"""Reads of pools, for admins and jobs: the list, one pool, a job finding its own pools, its items, who holds
them, and the pools the email notices speak of.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from django.contrib.auth import get_user_model
from django.contrib.auth.models import User
from django.db.models import Count, Min

from reviewapp.review.judgments.models import Judgment, JudgmentRevision, ReviewItem
from reviewapp.review.pools.known_answers import known_answer_item_pks
from reviewapp.review.pools.models import ReviewPool
from reviewapp.review.pools.refs import PoolRef, pool_model, pool_ref


@dataclass(frozen=True)
class PoolSummary:
    pk: int
    public_id: str
    name: str
    kind: str
    declared_rule: str
    reviewers_per_item: int
    items: int
    assignments: int
    completed: int
    created_at: datetime


def pool_list() -> list[PoolSummary]:
    pools = ReviewPool.objects.annotate(
        n_items=Count("items", distinct=True), n_assignments=Count("assignments", distinct=True)
    )
    completed = dict(
        Judgment.objects.filter(current__status=JudgmentRevision.COMPLETE)
        .values_list("item__pool_id")
        .annotate(n=Count("id"))
        .values_list("item__pool_id", "n")
    )
    return [
        PoolSummary(
            pk=pool.pk, public_id=pool.public_id, name=pool.name, kind=pool.kind, declared_rule=pool.declared_rule,
            reviewers_per_item=pool.reviewers_per_item, items=pool.n_items, assignments=pool.n_assignments,
            completed=completed.get(pool.pk, 0), created_at=pool.created_at,
        )
        for pool in pools
    ]


def pool_model_get(*, public_id: str) -> ReviewPool:
    """The pool's model, for the review engine's own pages and services (``ReviewPool.DoesNotExist``)."""
    return ReviewPool.objects.get(public_id=public_id)


def pool_get(*, public_id: str) -> PoolRef:
    """One pool, for the jobs (``ReviewPool.DoesNotExist`` when there is none)."""
    return pool_ref(pool_model_get(public_id=public_id))


def pool_find(*, external_ref: dict[str, Any], kind: str | None = None) -> list[PoolRef]:
    """Pools whose ``external_ref`` contains every key/value given (a job finding its own pools), newest first."""
    pools = ReviewPool.objects.all() if kind is None else ReviewPool.objects.filter(kind=kind)
    return [
        pool_ref(pool) for pool in pools
        if all(pool.external_ref.get(key) == value for key, value in external_ref.items())
    ]


def reviewer_pools(*, reviewer: User) -> list[PoolRef]:
    """Every pool with an assignment of ``reviewer``."""
    return [pool_ref(pool) for pool in
            ReviewPool.objects.filter(assignments__reviewer=reviewer).distinct().order_by("id")]


@dataclass(frozen=True)
class PoolItemKey:
    item_id: str  # the item's public id
    query_id: str
    doc_id: str


def pool_item_keys(*, pool: ReviewPool | PoolRef) -> list[PoolItemKey]:
    """Every item of the pool by its job's ids, in (query id, document id) order (its count is the pool's size)."""
    rows = (ReviewItem.objects.filter(pool_id=pool.pk).order_by("query_id", "doc_id")
            .values_list("public_id", "query_id", "doc_id"))
    return [PoolItemKey(item_id=item_id, query_id=query_id, doc_id=doc_id) for item_id, query_id, doc_id in rows]


def pool_assignees(*, pool: ReviewPool) -> list[User]:
    """Everyone holding an assignment of ``pool`` (for unassigning and reassigning)."""
    user_model = get_user_model()
    return list(user_model.objects.filter(review_assignments__pool=pool).distinct().order_by(user_model.USERNAME_FIELD))


def reviewer_title(pool: ReviewPool) -> str:
    return pool.reviewer_title or f"Review set {pool.public_id[:6]}"


@dataclass(frozen=True)
class NoticePool:
    pk: int
    public_id: str
    name: str  # admin-facing
    reviewer_title: str  # what reviewers see


def _notice_pool(pool: ReviewPool) -> NoticePool:
    return NoticePool(pk=pool.pk, public_id=pool.public_id, name=pool.name, reviewer_title=reviewer_title(pool))


def notice_pools(*, multi_reviewer: bool = False) -> list[NoticePool]:
    """The pools of real review (not the synthetic demo pools), oldest first; ``multi_reviewer``: graded twice+."""
    pools = ReviewPool.objects.order_by("created_at", "id")
    if multi_reviewer:
        pools = pools.filter(reviewers_per_item__gte=2)
    # Synthetic is a JSON key of the declaration, decided in Python: compared in SQL it is NULL where missing.
    return [_notice_pool(pool) for pool in pools if not pool.synthetic]


@dataclass(frozen=True)
class LabelItem:
    """An item that carries labels, without its texts."""

    item_id: str  # the item's public id
    query_id: str
    doc_id: str
    source_heading: str
    source_hash: str
    external_ref: dict[str, Any] = field(hash=False)


def pool_label_items(*, pool: ReviewPool | PoolRef) -> list[LabelItem]:
    """The pool's items that carry labels (known-answer items check reviewers and are left out), in (query id,
    document id) order, without their source texts (``pool_source_texts`` reads each once)."""
    model = pool_model(pool)
    rows = (model.items.exclude(pk__in=known_answer_item_pks(pool=model)).order_by("query_id", "doc_id")
            .values_list("public_id", "query_id", "doc_id", "source_heading", "source_hash", "external_ref"))
    return [LabelItem(item_id=item_id, query_id=query_id, doc_id=doc_id, source_heading=heading,
                      source_hash=source_hash, external_ref=dict(ref or {}))
            for item_id, query_id, doc_id, heading, source_hash, ref in rows]


def pool_source_texts(*, pool: ReviewPool | PoolRef) -> dict[str, str]:
    """Source hash -> source text, each distinct source read once (a contract's text is the source of every one
    of its categories' items: reading it per item would read it once per category)."""
    firsts = (ReviewItem.objects.filter(pool_id=pool.pk).values("source_hash").annotate(first=Min("id"))
              .values_list("first", flat=True))
    return dict(ReviewItem.objects.filter(pk__in=list(firsts)).values_list("source_hash", "source_text"))


def pool_item(*, pool: ReviewPool | PoolRef, item_id: str) -> ReviewItem:
    """One item of the pool by its public id (``ReviewItem.DoesNotExist`` when it is not there)."""
    return ReviewItem.objects.select_related("pool").get(pool_id=pool.pk, public_id=item_id)
