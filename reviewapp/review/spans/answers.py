"""Reading span answers: each counted judgment's spans, and the latest ruling of an item with its ruled spans.

For jobs whose kind labels spans (contract clauses). The same population as every other label read: the
counted judgments of ``judgments.selectors.pool_completed_judgments`` (complete, not stale, not known-answer items, and
judgments of the same texts linked from another pool), with the spans of the revision each one counts.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any

from django.db.models import Min, QuerySet

from reviewapp.review.agreement.models import Adjudication
from reviewapp.review.judgments.hashes import hashes_match
from reviewapp.review.judgments.models import Judgment, ReviewItem
from reviewapp.review.judgments.selectors import JudgmentRecord, pool_completed_judgments
from reviewapp.review.pools.known_answers import known_answer_item_pks
from reviewapp.review.pools.models import ReviewPool


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


def pool_span_judgments(*, pool: ReviewPool) -> list[SpanJudgment]:
    """Every counted judgment of the pool with its spans, in (query id, document id, reviewer id) order."""
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


def pool_span_rulings(*, pool: ReviewPool, grade_type: str) -> dict[str, SpanRuling]:
    """Item public id -> its latest ruling on ``grade_type``, when that ruling is bound to the item's texts now."""
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


def pool_label_items(*, pool: ReviewPool) -> QuerySet[ReviewItem]:
    """The pool's items that carry labels (known-answer items check reviewers and are left out), in (query id,
    document id) order, without their source texts (``pool_source_texts`` reads each once)."""
    return (pool.items.exclude(pk__in=known_answer_item_pks(pool=pool)).defer("source_text")
            .order_by("query_id", "doc_id"))


def pool_source_texts(*, pool: ReviewPool) -> dict[str, str]:
    """Source hash -> source text, each distinct source read once (a contract's text is the source of every one
    of its categories' items: reading it per item would read it once per category)."""
    firsts = pool.items.values("source_hash").annotate(first=Min("id")).values_list("first", flat=True)
    return dict(ReviewItem.objects.filter(pk__in=list(firsts)).values_list("source_hash", "source_text"))


def pool_item(*, pool: ReviewPool, item_id: str) -> ReviewItem:
    """One item of the pool by its public id (``ReviewItem.DoesNotExist`` when it is not there)."""
    return ReviewItem.objects.select_related("pool").get(pool=pool, public_id=item_id)
