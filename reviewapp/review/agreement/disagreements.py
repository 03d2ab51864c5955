"""Disagreements and their rulings: the adjudicator's walk through a pool's open disagreements, one item after
another, and the record of a ruling.

An item is open while reviewers' counted grades differ on some grade type that has no current ruling. The walk
follows one stable order (query id, then document id) so "next" after an item is well defined even once that
item is ruled on and leaves the list.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from django.contrib.auth.models import User
from django.db import transaction

from reviewapp.review.agreement.models import Adjudication
from reviewapp.review.agreement.selectors import item_dispute, pool_adjudication_item, pool_disagreements
from reviewapp.review.errors import ReviewError
from reviewapp.review.judgments.models import ReviewItem
from reviewapp.review.kinds import pool_kind
from reviewapp.review.pools.models import ReviewPool
from reviewapp.review.spans.offsets import SpanError, spans_clean


@dataclass(frozen=True)
class DisagreementStep:
    item_id: str | None  # the next open item, or None when none is left
    remaining: int  # open items, the current one included
    position: int  # 1-based place of ``item_id`` among them (0 when none is left)


def pool_open_disagreements(*, pool: ReviewPool) -> list[str]:
    """Public ids of the items with an unruled disagreement, in (query id, document id) order."""
    keys = {(d.query_id, d.doc_id, d.item_id) for d in pool_disagreements(pool=pool) if d.state != "adjudicated"}
    return [item_id for _, _, item_id in sorted(keys)]


def disagreement_next(*, pool: ReviewPool, after: str | None = None) -> DisagreementStep:
    """The first open item after ``after`` in the walk's order (wrapping round to the start)."""
    open_ids = pool_open_disagreements(pool=pool)
    if not open_ids:
        return DisagreementStep(item_id=None, remaining=0, position=0)
    if after:
        order = {item_id: n for n, item_id in enumerate(open_ids)}
        if after in order:
            index = (order[after] + 1) % len(open_ids)
        else:
            anchor = ReviewItem.objects.filter(pool=pool, public_id=after).values_list("query_id", "doc_id").first()
            keys = list(ReviewItem.objects.filter(pool=pool, public_id__in=open_ids)
                        .values_list("query_id", "doc_id", "public_id"))
            later = sorted(k for k in keys if anchor is not None and k[:2] > anchor)
            index = order[later[0][2]] if later else 0
    else:
        index = 0
    return DisagreementStep(item_id=open_ids[index], remaining=len(open_ids), position=index + 1)


@transaction.atomic
def adjudication_record(
    *, item: ReviewItem, grade_type: str, value: Any, adjudicator: User, note: str = "",
    spans: Sequence[Sequence[int]] | None = None,
) -> Adjudication:
    """Record an admin's ruling on one grade of one item (append-only; the latest ruling counts).

    A ruling resolves a disagreement and nothing else (``selectors.item_dispute``): on an item whose reviewers
    agree, or that fewer than two completed, it is refused and nothing is written, since an admin's label there
    would pass for an adjudicated one.

    ``spans``: the ruled span set of a kind that labels spans, as offsets into the item's ``source_text``;
    stored in the normal form (``spans.offsets.spans_clean``), refused when it is not offsets into that text.
    """
    kind = pool_kind(item.pool.kind)
    if grade_type not in kind.grade_type_keys:
        raise ReviewError(f"grade_type {grade_type!r} is not one of {kind.grade_type_keys}")
    try:
        parsed = kind.parse_grade(value)
    except ValueError as error:
        raise ReviewError(f"value: {error}") from None
    if parsed is None:
        raise ReviewError("value: required (a grade or unknown)")
    if not adjudicator.has_perm("reviewapp.manage_reviews"):
        raise ReviewError(f"{adjudicator.get_username()!r} may not adjudicate")
    undisputed = item_dispute(item=item, grade_type=grade_type)
    if undisputed:
        raise ReviewError(f"item {item.public_id} ({grade_type}): a ruling resolves a disagreement, and there is "
                          f"none: {undisputed}; nothing was recorded")
    try:
        cleaned = spans_clean(text=item.source_text, spans=list(spans or []))
    except SpanError as error:
        raise ReviewError(str(error)) from None
    return Adjudication.objects.create(
        item=item,
        grade_type=grade_type,
        value=parsed,
        spans=cleaned,
        note=(note or "").strip(),
        adjudicator=adjudicator,
        query_hash=item.query_hash,
        source_hash=item.source_hash,
        passage_hash=item.passage_hash,
    )


class RulingChanged(ReviewError):
    """The disagreement changed after the adjudicator opened it: nothing was saved (the page answers 409)."""


@transaction.atomic
def adjudication_record_seen(
    *, item: ReviewItem, values: dict[str, Any], adjudicator: User, note: str = "", seen: str = "",
) -> list[Adjudication]:
    """Record the rulings of one adjudication page (grade type -> value), all or none.

    ``seen`` is the digest of the disagreement the adjudicator was shown (``AdjudicationItem.seen``). When a
    reviewer regraded, the texts changed, or another ruling was recorded since, the rulings were made on a stale
    view: ``RulingChanged``, nothing saved, as a judgment on changed texts is refused. Two adjudicators posting at
    once are serialised on the item's row, so the second one is refused rather than silently overwriting.
    """
    ReviewItem.objects.select_for_update().filter(pk=item.pk).first()
    if seen:
        current = pool_adjudication_item(pool=item.pool, item_id=item.public_id)
        if current.seen != seen:
            raise RulingChanged(
                "The disagreement changed after you opened it (a reviewer regraded, its texts changed, or another "
                "ruling was recorded): nothing was saved. It is shown below as it is now; rule again.")
    return [adjudication_record(item=item, grade_type=grade_type, value=value, adjudicator=adjudicator, note=note)
            for grade_type, value in values.items()]


def pool_open_disagreement_count(*, public_id: str) -> int:
    """How many items of the pool wait for a ruling (for the adjudication notices)."""
    return len(pool_open_disagreements(pool=ReviewPool.objects.get(public_id=public_id)))
