"""The reviewer's queue: their own items in their own order, with status, filters and search (reads only).

The order (``REVIEWER_ORDER``) is the pool's whole-query tiers, then the reviewer's keyed shuffle
(``Assignment.sort_key``), with skipped items last; filters and search narrow what is listed and never reorder
it. Nothing here reads rank, score or where an item came from.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass
from typing import Any

from django.contrib.auth.models import AbstractBaseUser
from django.db import connection
from django.db.models import Case, F, FilteredRelation, Q, Value, When, Window
from django.db.models.functions import Coalesce, RowNumber

from reviewapp.review.models import Assignment, Judgment, JudgmentRevision, ReviewPool
from reviewapp.review.workspace.staleness import hashes_match


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


# ---------------------------------------------------------------------------
# The queue page, windowed: counts, filters and search over the whole queue in SQL, rows one page at a time
# ---------------------------------------------------------------------------

QUEUE_PAGE_SIZE = 50


@dataclass(frozen=True)
class QueuePage:
    """One pool's queue as the queue page shows it: whole-queue figures, and one page of the entries shown."""

    pool_id: str
    title: str
    instructions: str
    kind: str
    total: int
    completed: int
    counts: dict[str, int]
    shown_total: int  # the entries the filter and search leave (all of them when neither is set)
    filtered: bool
    entries: list[QueueEntry]  # this page of the shown entries, in the reviewer's order
    next_open: QueueEntry | None
    page: int
    pages: int
    pool_pk: int = 0  # the pool's primary key, for server-side joins only (never shown: the public id is)

    @property
    def percent(self) -> int:
        return round(100 * self.completed / self.total) if self.total else 0

    @property
    def shown(self) -> list[QueueEntry] | None:
        return self.entries if self.filtered else None


def _rows_sql(*, reviewer_id: int, pool_pk: int | None = None, words: tuple[str, ...] = (),
              with_state: bool = True, numbered: bool = True) -> tuple[str, tuple]:
    """SQL (and its parameters) of the reviewer's assignments, one row each, numbered in ``REVIEWER_ORDER``.

    Built by the ORM so the order is the very expression the rest of the review uses; callers wrap it to count,
    filter and window it, so no step reads the whole queue into Python.
    """
    rows = Assignment.objects.filter(reviewer_id=reviewer_id)
    if pool_pk is not None:
        rows = rows.filter(pool_id=pool_pk)
    columns: dict[str, Any] = {"q_pool": F("pool_id"), "q_item": F("item__public_id")}
    if numbered:  # counting needs no order: leave the sort out
        columns["q_position"] = Window(RowNumber(), partition_by=[F("pool_id")], order_by=list(REVIEWER_ORDER))
    if with_state:
        # The reviewer's own judgment of each item, joined once (a left join: most items have none yet).
        rows = rows.alias(own=FilteredRelation("item__judgments",
                                               condition=Q(item__judgments__reviewer_id=F("reviewer_id"))))
        fresh = Q(own__current__query_hash=F("item__query_hash"), own__current__source_hash=F("item__source_hash"),
                  own__current__passage_hash=F("item__passage_hash"))
        matches = Q()
        for word in words:
            matches &= Q(item__query_text__icontains=word)
        rows = rows.alias(cur_status=F("own__current__status"))
        columns |= {
            "q_status": Coalesce("cur_status", Value("new")),
            "q_regrade": Case(When(Q(cur_status__isnull=False) & ~fresh, then=Value(1)), default=Value(0)),
            "q_skipped": Case(When(skip__isnull=False, then=Value(1)), default=Value(0)),
            # QueueEntry.state, in SQL
            "q_state": Case(
                When(Q(cur_status=JudgmentRevision.COMPLETE) & fresh, then=Value("complete")),
                When(skip__isnull=False, then=Value("skipped")),
                When(Q(cur_status=JudgmentRevision.DRAFT) & fresh, then=Value("draft")),
                default=Value("todo"),
            ),
            "q_match": Case(When(matches, then=Value(1)), default=Value(0)) if words else Value(1),
            "q_text": F("item__query_text"),
            "q_pool_pid": F("pool__public_id"), "q_pool_title": F("pool__reviewer_title"),
            "q_pool_instructions": F("pool__instructions"), "q_pool_kind": F("pool__kind"),
            "q_pool_created": F("pool__created_at"),
        }
    query = rows.annotate(**columns).values(*columns).order_by().query
    return query.get_compiler(using=Assignment.objects.db).as_sql()


def _title(public_id: str, reviewer_title_text: str) -> str:
    return reviewer_title_text or f"Review set {public_id[:6]}"


def reviewer_queue_pages(*, reviewer: AbstractBaseUser, state: str = "", search: str = "", page: int = 1,
                         page_pool: str = "", page_size: int = QUEUE_PAGE_SIZE) -> list[QueuePage]:
    """The reviewer's queues, one per pool, each one page of entries long: two SQL queries whatever their length.

    Totals, per-state counts, the filtered count and the first open item come from one aggregate over the whole
    queue; the entries shown from one windowed query. ``page`` (1-based) applies to the pool ``page_pool`` (every
    pool when empty); the others show their first page. Positions stay those of the whole queue.
    """
    words = tuple(search.lower().split())
    counted, counted_params = _rows_sql(reviewer_id=reviewer.pk, words=words, numbered=False)
    inner, params = _rows_sql(reviewer_id=reviewer.pk, words=words)
    shown_sql = "(q_match = 1 AND (%s = '' OR q_state = %s))"
    counts_sql = ", ".join(f"SUM(CASE WHEN q_state = '{s}' THEN 1 ELSE 0 END)" for s in QUEUE_STATES)
    # Only SQL built here or by the ORM is spliced in; every value the reviewer sends is a parameter.
    with connection.cursor() as cursor:
        cursor.execute(
            f"SELECT q_pool, q_pool_pid, q_pool_title, q_pool_instructions, q_pool_kind, COUNT(*), {counts_sql}, "  # noqa: S608
            f"SUM(CASE WHEN {shown_sql} THEN 1 ELSE 0 END) "
            f"FROM ({counted}) t GROUP BY q_pool, q_pool_pid, q_pool_title, q_pool_instructions, q_pool_kind, "
            "q_pool_created ORDER BY q_pool_created, q_pool",
            (state, state, *counted_params),
        )
        pools = cursor.fetchall()
        offsets = {}
        for pool in pools:
            pages = max(1, -(-pool[10] // page_size))
            wanted = page if not page_pool or page_pool == pool[1] else 1
            offsets[pool[0]] = (min(max(wanted, 1), pages), pages)
        offset_case = " ".join(f"WHEN {int(pk)} THEN {(number - 1) * page_size}"
                               for pk, (number, _) in offsets.items()) or "WHEN 0 THEN 0"
        cursor.execute(
            "SELECT q_pool, q_item, q_position, q_status, q_regrade, q_text, q_skipped, "  # noqa: S608
            "shown = 1 AND shown_rank > skip_rows AND shown_rank <= skip_rows + %s, "
            "q_position = first_open FROM ("
            f" SELECT t.*, CASE WHEN {shown_sql} THEN 1 ELSE 0 END AS shown,"
            f" SUM(CASE WHEN {shown_sql} THEN 1 ELSE 0 END) OVER (PARTITION BY q_pool ORDER BY q_position)"
            " AS shown_rank,"
            " MIN(CASE WHEN q_state <> 'complete' THEN q_position END) OVER (PARTITION BY q_pool) AS first_open,"
            f" CASE q_pool {offset_case} ELSE 0 END AS skip_rows"
            f" FROM ({inner}) t) u "
            "WHERE (shown = 1 AND shown_rank > skip_rows AND shown_rank <= skip_rows + %s) OR q_position = first_open "
            "ORDER BY q_pool, q_position",
            (page_size, state, state, state, state, *params, page_size),
        )
        rows = cursor.fetchall()
    shown: dict[int, list[QueueEntry]] = {}
    next_open: dict[int, QueueEntry] = {}
    for pool_pk, item_id, position, status, regrade, text, skipped, is_shown, is_next in rows:
        entry = QueueEntry(item_id=item_id, position=position, status=status, needs_regrade=bool(regrade),
                           query_text=text, skipped=bool(skipped))
        if is_shown:
            shown.setdefault(pool_pk, []).append(entry)
        if is_next:
            next_open[pool_pk] = entry
    return [
        QueuePage(
            pool_id=public_id, title=_title(public_id, title), instructions=instructions, kind=kind, total=total,
            completed=complete, counts=dict(zip(QUEUE_STATES, (todo, draft, complete, skipped), strict=True)),
            shown_total=shown_total, filtered=bool(state or words), entries=shown.get(pool_pk, []),
            next_open=next_open.get(pool_pk), page=offsets[pool_pk][0], pages=offsets[pool_pk][1],
            pool_pk=pool_pk,
        )
        for pool_pk, public_id, title, instructions, kind, total, todo, draft, complete, skipped, shown_total in pools
    ]


@dataclass(frozen=True)
class ItemPlace:
    """Where an item sits in its reviewer's queue: what the item page's previous / next / next open need."""

    position: int
    total: int
    previous_id: str | None
    next_id: str | None
    next_open_id: str | None


def reviewer_item_place(*, reviewer_id: int, pool_pk: int, item_id: str) -> ItemPlace:
    """The item's place in the reviewer's order of one pool: two SQL queries, whatever the queue's length."""
    inner, params = _rows_sql(reviewer_id=reviewer_id, pool_pk=pool_pk, with_state=False)
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT q_position, total, q_prev, q_next FROM ("  # noqa: S608
            " SELECT t.*, COUNT(*) OVER () AS total,"
            " LAG(q_item) OVER (ORDER BY q_position) AS q_prev, LEAD(q_item) OVER (ORDER BY q_position) AS q_next"
            f" FROM ({inner}) t) u WHERE q_item = %s",
            (*params, item_id),
        )
        position, total, previous, following = cursor.fetchone()
        # The first open item after this one, wrapping round to the start.
        inner, params = _rows_sql(reviewer_id=reviewer_id, pool_pk=pool_pk)
        cursor.execute(
            f"SELECT q_item FROM ({inner}) t WHERE q_state <> 'complete' AND q_item <> %s "  # noqa: S608
            "ORDER BY CASE WHEN q_position > %s THEN 0 ELSE 1 END, q_position LIMIT 1",
            (*params, item_id, position),
        )
        found = cursor.fetchone()
    return ItemPlace(position=position, total=total, previous_id=previous, next_id=following,
                     next_open_id=found[0] if found else None)
