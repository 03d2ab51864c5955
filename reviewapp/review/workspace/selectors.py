"""What a reviewer sees of their own items, as plain dataclasses: the blind item view and their own revisions.

Only their own assignments and judgments, only the texts needed to grade; nothing about rank, scores, systems or
other reviewers. The queue itself is read by ``queue``.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from django.contrib.auth.models import User

from reviewapp.review.assignment.models import Assignment
from reviewapp.review.assignment.queue_state import SKIPPED_SEQ
from reviewapp.review.errors import NotAssigned
from reviewapp.review.judgments.hashes import hashes_match
from reviewapp.review.judgments.models import Judgment, JudgmentRevision
from reviewapp.review.kinds import PoolKind, SourceContext, SpanLocations, kind_get
from reviewapp.review.pools.refs import PoolRef, pool_ref
from reviewapp.review.pools.selectors import reviewer_title
from reviewapp.review.workspace.passage_location import SourceSegments, passage_locate
from reviewapp.review.workspace.queue import reviewer_item_place


@dataclass(frozen=True)
class OwnRevision:
    number: int
    status: str
    grades: dict[str, Any]
    note: str
    created_at: datetime
    # The reviewer's own spans (a kind that answers with spans): [[start, end], ...] into the source text.
    spans: list[list[int]] = field(default_factory=list)


@dataclass(frozen=True)
class ReviewerItem:
    """Everything a reviewer sees of an item; nothing else."""

    item_id: str
    pool_id: str
    pool_title: str
    instructions: str
    kind: PoolKind
    query_text: str
    source_heading: str
    source_text: str
    passage_caption: str
    passage_text: str
    position: int
    total: int
    previous_id: str | None
    next_id: str | None
    current: OwnRevision | None
    needs_regrade: bool
    revision_count: int
    # The first open item after this one in the reviewer's order (wrapping round), for auto-advance and for
    # ``j`` on the last item; None when every other item is complete.
    next_open_id: str | None = None
    skipped: bool = False
    # The source cut around the passage, when the passage is one contiguous part of it (highlighted in place).
    segments: SourceSegments | None = None
    context: SourceContext | None = None
    # A kind that answers with spans: where offsets of the source text fall in the original (page, paragraph).
    span_locations: SpanLocations | None = None


def reviewer_item_after_save(*, view: ReviewerItem, revision: JudgmentRevision) -> ReviewerItem:
    """The same view with the revision just saved as its current state (saves re-reading the queue)."""
    return dataclasses.replace(
        view, current=_own_revision(revision), needs_regrade=False,
        revision_count=max(view.revision_count, revision.number),
    )


def _own_revision(revision: JudgmentRevision) -> OwnRevision:
    return OwnRevision(
        number=revision.number, status=revision.status, grades=dict(revision.grades), note=revision.note,
        created_at=revision.created_at, spans=[list(pair) for pair in revision.spans or []],
    )


def reviewer_assignment(*, reviewer: User, item_id: str) -> Assignment:
    """The reviewer's assignment for an item id, or NotAssigned (callers answer 404)."""
    assignment = (
        Assignment.objects.filter(reviewer=reviewer, item__public_id=item_id).select_related("item", "pool").first()
    )
    if assignment is None:
        raise NotAssigned(item_id)
    return assignment


@dataclass(frozen=True)
class AssignedItem:
    """A reviewer's assigned item as a job reads it (job side: never rendered to the reviewer)."""

    pool: PoolRef
    item_id: str
    query_id: str
    doc_id: str


def reviewer_assigned_item(*, reviewer: User, item_id: str) -> AssignedItem:
    """The reviewer's assigned item and its pool, or NotAssigned (callers answer 404)."""
    assignment = reviewer_assignment(reviewer=reviewer, item_id=item_id)
    return AssignedItem(pool=pool_ref(assignment.pool), item_id=assignment.item.public_id,
                        query_id=assignment.item.query_id, doc_id=assignment.item.doc_id)


def reviewer_item(*, reviewer: User, item_id: str) -> ReviewerItem:
    return reviewer_item_view(assignment=reviewer_assignment(reviewer=reviewer, item_id=item_id))


def reviewer_item_view(*, assignment: Assignment) -> ReviewerItem:
    """The blind view of an assignment's item (the caller has checked that it is the user's own)."""
    reviewer = assignment.reviewer_id
    item, pool = assignment.item, assignment.pool
    # Counted and windowed in SQL: the item page costs the same at 100 items as at 10k.
    place = reviewer_item_place(assignment=assignment)
    judgment = Judgment.objects.filter(item=item, reviewer=reviewer).select_related("current").first()
    current = judgment.current if judgment else None
    kind = kind_get(pool.kind)
    return ReviewerItem(
        item_id=item.public_id,
        pool_id=pool.public_id,
        pool_title=reviewer_title(pool),
        instructions=pool.instructions,
        kind=kind,
        query_text=item.query_text,
        source_heading=item.source_heading,
        source_text=item.source_text,
        passage_caption=item.passage_caption,
        passage_text=item.passage_text,
        position=place.position,
        total=place.total,
        previous_id=place.previous_id,
        next_id=place.next_id,
        current=_own_revision(current) if current else None,
        needs_regrade=bool(current) and not hashes_match(current, item),
        revision_count=judgment.revision_count if judgment else 0,
        next_open_id=place.next_open_id,
        skipped=assignment.seq > SKIPPED_SEQ,
        segments=passage_locate(source_text=item.source_text, passage_text=item.passage_text),
        context=kind.source_context(item.external_ref or {}) if kind.source_context else None,
        span_locations=(kind.span_locations(item.external_ref or {})
                        if kind.answers_spans and kind.span_locations else None),
    )


def reviewer_history(*, reviewer: User, item_id: str) -> list[OwnRevision]:
    """The reviewer's own revisions of one item, oldest first."""
    assignment = reviewer_assignment(reviewer=reviewer, item_id=item_id)
    revisions = JudgmentRevision.objects.filter(
        judgment__item=assignment.item, judgment__reviewer=reviewer
    ).order_by("number")
    return [_own_revision(revision) for revision in revisions]
