"""The reviewer's queue: their own items in their own order, with status, filters and search (reads only).

The order (``REVIEWER_ORDER``) is the pool's whole-query tiers, then the reviewer's keyed shuffle
(``Assignment.sort_key``), with skipped items last; filters and search narrow what is listed and never reorder
it. Nothing here reads rank, score or where an item came from.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass

from django.contrib.auth.models import AbstractBaseUser
from django.db.models import F

from reviewapp.review.models import Assignment, Judgment, ReviewPool
from reviewapp.review.staleness import hashes_match


@dataclass(frozen=True)
class QueueEntry:
    item_id: str  # the item's opaque public id
    position: int  # 1-based, in this reviewer's own shuffled order (skipped items last)
    status: str  # "new" | "draft" | "complete"
    needs_regrade: bool  # the texts changed since this reviewer saved
    query_text: str = ""
    skipped: bool = False  # the reviewer's own "skip for later" marker

    @property
    def is_open(self) -> bool:
        return self.status != "complete" or self.needs_regrade

    @property
    def state(self) -> str:
        """The queue filter this entry falls under: "todo", "draft", "complete" or "skipped"."""
        if not self.is_open:
            return "complete"
        if self.skipped:
            return "skipped"
        return "draft" if self.status == "draft" and not self.needs_regrade else "todo"


QUEUE_STATES = ("todo", "draft", "complete", "skipped")


@dataclass(frozen=True)
class ReviewerPoolQueue:
    pool_id: str  # the pool's opaque public id
    title: str
    instructions: str
    kind: str
    entries: list[QueueEntry]
    shown: list[QueueEntry] | None = None  # the entries a filter or search left (None: all)

    @property
    def total(self) -> int:
        return len(self.entries)

    @property
    def completed(self) -> int:
        return sum(1 for entry in self.entries if not entry.is_open)

    @property
    def percent(self) -> int:
        return round(100 * self.completed / self.total) if self.total else 0

    @property
    def counts(self) -> dict[str, int]:
        return {state: sum(1 for entry in self.entries if entry.state == state) for state in QUEUE_STATES}

    @property
    def next_open(self) -> QueueEntry | None:
        for entry in self.entries:
            if entry.is_open:
                return entry
        return None


def reviewer_title(pool: ReviewPool) -> str:
    return pool.reviewer_title or f"Review set {pool.public_id[:6]}"


# The reviewer's own order: the keyed shuffle, with the items they skipped for later moved to the end (in the
# order they skipped them). Nothing in it depends on the item's rank, score or origin.
# Within that, the pool's work order goes tier by tier (``ReviewItem.priority``, the same for every reviewer and
# for every item of one query: ``services.pool_create`` refuses a tier inside a query), shuffled within a tier.
# This one ordering serves the queue page, the queue API and the item page's previous / next / next open.
REVIEWER_ORDER = (F("skip__skipped_at").asc(nulls_first=True), "item__priority", "sort_key")


def reviewer_queues(*, reviewer: AbstractBaseUser, state: str = "", search: str = "") -> list[ReviewerPoolQueue]:
    """The reviewer's queues, one per pool, each in the reviewer's own order.

    ``state`` (one of ``QUEUE_STATES``) and ``search`` (words of the query text, any case) narrow the entries
    listed in ``shown``; positions, counts and progress stay those of the whole queue.
    """
    rows = (
        Assignment.objects.filter(reviewer=reviewer)
        .select_related("pool", "item", "skip")
        # A queue lists queries, ids and states; the texts (whole sections) are read only on the item page.
        .defer("item__source_heading", "item__source_text", "item__passage_caption",
               "item__passage_text", "item__external_ref")
        .order_by("pool__created_at", "pool_id", *REVIEWER_ORDER)
    )
    judgments = {
        j.item_id: j
        for j in Judgment.objects.filter(reviewer=reviewer).select_related("current")
    }
    words = search.lower().split()
    queues: list[ReviewerPoolQueue] = []
    for pool, assignments in itertools.groupby(rows, key=lambda a: a.pool):
        entries = []
        for position, assignment in enumerate(assignments, start=1):
            judgment = judgments.get(assignment.item_id)
            current = judgment.current if judgment else None
            status = current.status if current else "new"
            needs_regrade = bool(current) and not hashes_match(current, assignment.item)
            entries.append(
                QueueEntry(item_id=assignment.item.public_id, position=position, status=status,
                           needs_regrade=needs_regrade, query_text=assignment.item.query_text,
                           skipped=hasattr(assignment, "skip"))
            )
        shown = None
        if state or words:
            shown = [entry for entry in entries if (not state or entry.state == state)
                     and all(word in entry.query_text.lower() for word in words)]
        queues.append(
            ReviewerPoolQueue(
                pool_id=pool.public_id, title=reviewer_title(pool), instructions=pool.instructions,
                kind=pool.kind, entries=entries, shown=shown,
            )
        )
    return queues
