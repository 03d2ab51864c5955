"""An item's state in a reviewer's queue, defined once in SQL, and the stored order's constants.

Apart from ``queue`` (the pages that read the order) and ``queue_order`` (the writes that keep it), which both
need it: neither imports the other at module level.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, TypedDict

from django.db.models import Case, F, FilteredRelation, Q, QuerySet, Value, When
from django.db.models.functions import Coalesce

from reviewapp.review.assignment.models import Assignment
from reviewapp.review.judgments.models import JudgmentRevision

if TYPE_CHECKING:
    # A development dependency (it comes with django-stubs); annotations only.
    from django_stubs_ext import WithAnnotations

QUEUE_STATES = ("todo", "draft", "complete", "skipped")

SKIPPED_SEQ = 1 << 40  # ``Assignment.seq`` of an item skipped for later: after every unskipped place


class QueueColumns(TypedDict):
    """The columns ``with_queue_state`` annotates (so that the type checker resolves their names in lookups)."""

    q_status: str
    q_regrade: int
    q_state: str


def with_queue_state(rows: QuerySet[Assignment]) -> QuerySet[WithAnnotations[Assignment, QueueColumns]]:
    """``rows`` with the reviewer's own judgment joined once and the queue's columns in SQL: ``q_status``
    ("new", "draft", "complete"), ``q_regrade`` (1 when the texts changed since they saved) and ``q_state``
    (``QueueEntry.state``). The one definition of an item's queue state; ``queue_order`` stores what it says."""
    rows = rows.alias(own=FilteredRelation("item__judgments",
                                           condition=Q(item__judgments__reviewer_id=F("reviewer_id"))))
    fresh = Q(own__current__query_hash=F("item__query_hash"), own__current__source_hash=F("item__source_hash"),
              own__current__passage_hash=F("item__passage_hash"))
    rows = rows.alias(cur_status=F("own__current__status"))
    return rows.annotate(
        q_status=Coalesce("cur_status", Value("new")),
        q_regrade=Case(When(Q(cur_status__isnull=False) & ~fresh, then=Value(1)), default=Value(0)),
        q_state=Case(
            When(Q(cur_status=JudgmentRevision.COMPLETE) & fresh, then=Value("complete")),
            When(skip__isnull=False, then=Value("skipped")),
            When(Q(cur_status=JudgmentRevision.DRAFT) & fresh, then=Value("draft")),
            default=Value("todo"),
        ),
    )
