"""Span answers read together: each counted judgment's spans, and the latest ruling of an item with its spans.

For jobs whose kind labels spans (contract clauses). The same population as every other label read: the
counted judgments of ``agreement.judgments.pool_completed_judgments`` (complete, not stale, not known-answer
items, and judgments of the same texts linked from another pool), with the spans of the revision each one counts.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any

from reviewapp.review.agreement.judgments import JudgmentRecord, pool_completed_judgments
from reviewapp.review.agreement.models import Adjudication
from reviewapp.review.judgments.hashes import hashes_match
from reviewapp.review.judgments.models import Judgment
from reviewapp.review.pools.models import ReviewPool
from reviewapp.review.pools.refs import PoolRef, pool_model


@dataclass(frozen=True)
class SpanJudgment:
    """A counted judgment of an item: who, their grades, and the spans of the revision that counts."""

    record: JudgmentRecord
    spans: list[list[int]]


@dataclass(frozen=True)
class SpanRuling:
    """The latest ruling on one grade type of an item, still bound to the item's texts."""

    item_id: str
    value: Any
    spans: list[list[int]]
    adjudicator: str
    note: str
    created_at: datetime


def pool_span_judgments(*, pool: ReviewPool | PoolRef) -> list[SpanJudgment]:
    """Every counted judgment of the pool with its spans, in (query id, document id, reviewer id) order."""
    pool = pool_model(pool)
    records = pool_completed_judgments(pool=pool)
    native = {
        (item_id, reviewer_id): spans
        for item_id, reviewer_id, spans in Judgment.objects.filter(item__pool=pool, current__isnull=False)
        .values_list("item__public_id", "reviewer_id", "current__spans")
    }
    linked_ids = [r.reused_from["judgment"] for r in records if r.reused_from]
    linked = dict(Judgment.objects.filter(pk__in=linked_ids).values_list("pk", "current__spans"))
    out = []
    for record in records:
        if record.reused_from:
            spans = linked.get(record.reused_from["judgment"]) or []
        else:
            spans = native.get((record.item_id, record.reviewer_id)) or []
        out.append(SpanJudgment(record=record, spans=[list(pair) for pair in spans]))
    return out


def pool_span_rulings(*, pool: ReviewPool | PoolRef, grade_type: str) -> dict[str, SpanRuling]:
    """Item public id -> its latest ruling on ``grade_type``, when that ruling is bound to the item's texts now."""
    pool = pool_model(pool)
    latest: dict[int, Adjudication] = {}
    for ruling in (Adjudication.objects.filter(item__pool=pool, grade_type=grade_type)
                   .select_related("item", "adjudicator").order_by("id")):
        latest[ruling.item_id] = ruling
    return {
        ruling.item.public_id: SpanRuling(
            item_id=ruling.item.public_id, value=ruling.value, spans=[list(pair) for pair in ruling.spans],
            adjudicator=ruling.adjudicator.get_username(), note=ruling.note, created_at=ruling.created_at,
        )
        for ruling in latest.values()
        if hashes_match(ruling, ruling.item)
    }
