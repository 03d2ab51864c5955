"""When a reviewer opened each of their items: where the time spent on an item starts (``timing``)."""

from __future__ import annotations

from collections.abc import Iterable
from datetime import datetime
from typing import Any

from django.db.models import IntegerField, Value

from reviewapp.review.day.models import ItemOpening
from reviewapp.review.judgments.models import JudgmentRevision, ReviewItem


def item_opening_record(*, item: ReviewItem, reviewer: Any) -> None:
    """Note that ``reviewer`` opened ``item`` (its page, or the item through the API), now."""
    ItemOpening.objects.create(item=item, reviewer=reviewer)


def reviewer_openings(*, reviewer_ids: Iterable[int]) -> dict[int, list[tuple[datetime, int]]]:
    """(opened at, item id) of each reviewer's openings, by reviewer (one query)."""
    out: dict[int, list[tuple[datetime, int]]] = {}
    rows = ItemOpening.objects.filter(reviewer_id__in=list(reviewer_ids)).values_list(
        "reviewer_id", "opened_at", "item_id")
    for reviewer_id, opened_at, item_id in rows:
        out.setdefault(reviewer_id, []).append((opened_at, item_id))
    return out


def reviewer_saves_and_openings(*, reviewer_id: int) -> tuple[list[tuple[datetime, int, int]],
                                                              list[tuple[datetime, int]]]:
    """(saves as (saved at, pool id, item id), openings as (opened at, item id)) of one reviewer, in one query
    (the queue page counts its queries)."""
    saves = JudgmentRevision.objects.filter(judgment__reviewer_id=reviewer_id).order_by().values_list(
        "created_at", "judgment__item__pool_id", "judgment__item_id", Value(1, output_field=IntegerField()))
    opens = ItemOpening.objects.filter(reviewer_id=reviewer_id).order_by().values_list(
        "opened_at", "item__pool_id", "item_id", Value(0, output_field=IntegerField()))
    saved: list[tuple[datetime, int, int]] = []
    opened: list[tuple[datetime, int]] = []
    for at, pool_id, item_id, is_save in saves.union(opens, all=True):
        if is_save:
            saved.append((at, pool_id, item_id))
        else:
            opened.append((at, item_id))
    return saved, opened
