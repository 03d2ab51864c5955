"""The reviewer's queue: their own items in their own order, with status, filters and search (reads only).

The order (``REVIEWER_ORDER``) is the pool's whole-query tiers, then the reviewer's keyed shuffle
(``Assignment.sort_key``), with skipped items last; filters and search narrow what is listed and never reorder
it. Nothing here reads rank, score or where an item came from.

The pages read that order as stored on each assignment (``shuffle_place``, ``seq``, ``state``) and the counts
from the reviewer's ``QueueTally`` of the pool, both kept by ``queue_order`` in the writes that change them: a
page of a queue of 100k items costs what a page of 100 does. ``reviewer_queues`` reads the whole queue in
``REVIEWER_ORDER`` (for callers that want every entry).
"""

from __future__ import annotations

import bisect
import itertools
from collections import defaultdict
from dataclasses import dataclass
from typing import Any, TypedDict

from django.contrib.auth.models import User
from django.db import connections
from django.db.models import BooleanField, Count, Exists, F, OuterRef, Q, QuerySet, Subquery, Value
from django.db.models.expressions import RawSQL
from django.db.models.functions import StrIndex, Upper

from reviewapp.review.assignment.models import Assignment, QueueTally
from reviewapp.review.assignment.queue_order import queue_rebuild
from reviewapp.review.assignment.queue_state import QUEUE_STATES, SKIPPED_SEQ, with_queue_state
from reviewapp.review.judgments.hashes import hashes_match
from reviewapp.review.judgments.models import Judgment, JudgmentRevision, ReviewItem
from reviewapp.review.pools.selectors import reviewer_title


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


# The reviewer's own order: the keyed shuffle, with the items they skipped for later moved to the end (in the
# order they skipped them). Nothing in it depends on the item's rank, score or origin.
# Within that, the pool's work order goes tier by tier (``ReviewItem.priority``, the same for every reviewer and
# for every item of one query: ``pools.services.pool_create`` refuses a tier inside a query), shuffled within a tier.
# This one ordering serves the queue page, the queue API and the item page's previous / next / next open.
REVIEWER_ORDER = (F("skip__skipped_at").asc(nulls_first=True), "item__priority", "sort_key")


def reviewer_queues(*, reviewer: User, state: str = "", search: str = "") -> list[ReviewerPoolQueue]:
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
# The queue page: counts from the tallies, rows one page at a time by index, filters over the whole queue
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
    shown_capped: bool = False  # a search matched more than ``shown_total``: counting stopped there

    @property
    def percent(self) -> int:
        return round(100 * self.completed / self.total) if self.total else 0

    @property
    def shown(self) -> list[QueueEntry] | None:
        return self.entries if self.filtered else None


def _title(public_id: str, reviewer_title_text: str) -> str:
    return reviewer_title_text or f"Review set {public_id[:6]}"


class _Places:
    """Whole-queue positions from stored places: a shuffle place less the skipped items placed before it; a skipped
    item after every other, in the order they were skipped. Reads only the skipped rows (``marks``)."""

    def __init__(self, *, total: int, marks: list[tuple[int, int]]) -> None:
        self.total = total
        self.places = sorted(place for place, _ in marks)
        self.seqs = sorted(seq for _, seq in marks)

    def position(self, *, place: int, seq: int) -> int:
        if seq > SKIPPED_SEQ:
            return self.total - len(self.seqs) + bisect.bisect_right(self.seqs, seq)
        return place - bisect.bisect_left(self.places, place)


def _open_rows(reviewer_id: Any, pool_id: Any) -> QuerySet[Assignment]:
    # Written as the partial index ``review_assign_queue_open`` is, so that both engines read it.
    return Assignment.objects.filter(reviewer_id=reviewer_id, pool_id=pool_id).exclude(state=JudgmentRevision.COMPLETE)


def _first(rows: QuerySet[Assignment], field: str) -> Subquery:
    return Subquery(rows.order_by("seq").values(field)[:1])


def _entries(rows: QuerySet[Assignment], places: dict[int, _Places]) -> dict[int, list[QueueEntry]]:
    """Queue entries of ``rows`` by pool primary key, each pool's in the reviewer's order."""
    found: dict[int, list[QueueEntry]] = defaultdict(list)
    for pool_pk, item_id, place, seq, status, regrade, text, skip in (
            with_queue_state(rows).order_by("pool_id", "seq")
            .values_list("pool_id", "item__public_id", "shuffle_place", "seq", "q_status", "q_regrade",
                         "item__query_text", "skip__pk")):
        found[pool_pk].append(QueueEntry(item_id=item_id, position=places[pool_pk].position(place=place, seq=seq),
                                         status=status, needs_regrade=bool(regrade), query_text=text,
                                         skipped=skip is not None))
    return found


# A search counts its matches up to this many (or up to the page asked for, when that is further): past it the
# page says "more than". Counting every match of a common word would read the whole queue.
SEARCH_COUNT_CAP = 200

TRIGRAM_TABLE = "reviewapp_reviewitem_trgm"  # SQLite's FTS5 trigram index of the query texts (migration 0018)

# A word at most this many items hold (any pool) is found through the query-text index first: its items, then the
# reviewer's assignments of them, whatever the length of the queue. A commoner word is checked on the rows the rest
# leave, or on the reviewer's own rows walked in queue order, where the capped count soon has its matches: reading
# it from the index would read every item that holds it, in every pool (PostgreSQL's trigram index scans every
# posting list of its trigrams; SQLite's FTS5 table lists every item before the join).
RARE_WORD_ITEMS = 500


def _rare_word_probes(words: tuple[str, ...], vendor: str) -> dict[str, Any]:
    """Annotations saying, for each word the query-text index can look up, whether it is rare (held by at most
    ``RARE_WORD_ITEMS`` items), for the query the page makes anyway: each reads at most that many matches (a
    scan that stops at the next one; or the index, when the planner expects few)."""
    lookups = {n: word for n, word in enumerate(words) if len(word) >= 3}
    if vendor == "sqlite":
        return {
            f"rare_{n}": RawSQL(  # noqa: S611 -- only constants interpolated; the word is a parameter
                f"SELECT COUNT(*) <= {RARE_WORD_ITEMS} FROM (SELECT 1 FROM {TRIGRAM_TABLE} "  # noqa: S608
                f"WHERE {TRIGRAM_TABLE} MATCH %s LIMIT {RARE_WORD_ITEMS + 1})",
                ['"' + word.replace('"', '""') + '"'], output_field=BooleanField())
            for n, word in lookups.items()
        }
    if vendor == "postgresql":
        beyond = slice(RARE_WORD_ITEMS, RARE_WORD_ITEMS + 1)  # a match past the bar: the word is common
        return {f"rare_{n}": ~Exists(ReviewItem.objects.filter(query_text__icontains=word).values("pk")[beyond])
                for n, word in lookups.items()}
    return {}


def _text_matches(rows: QuerySet[Assignment], words: tuple[str, ...],
                  rare: frozenset[int] = frozenset()) -> QuerySet[Assignment]:
    """``rows`` whose item's query text contains every word (any case); the words at the positions in ``rare``
    through the query-text index, the others checked on the rows the rest leave.

    PostgreSQL: a rare word is Django's ``icontains`` (``UPPER(query_text) LIKE``, the expression the pg_trgm
    index holds); any other word is the same test written with ``STRPOS``, which the index does not serve, so the
    planner never reads a common word's trigrams. SQLite: a rare word is looked up in the FTS5 trigram table, any
    other word is ``icontains``. A word under three characters has no trigram, and is never rare.
    """
    vendor = connections[rows.db].vendor
    for n, word in enumerate(words):
        if vendor == "sqlite" and n in rare:
            phrase = '"' + word.replace('"', '""') + '"'
            # Only the constant table name is interpolated; the word is a parameter.
            rows = rows.filter(item_id__in=RawSQL(  # noqa: S611
                f"SELECT rowid FROM {TRIGRAM_TABLE} WHERE {TRIGRAM_TABLE} MATCH %s", [phrase]))  # noqa: S608
        elif vendor == "postgresql" and n not in rare:
            # "Not absent" rather than "position > 0": the planner then expects nearly every row to match (as a
            # common word does) and walks the queue index to the cap, not a parallel plan for a third of the queue.
            rows = rows.alias(**{f"word_{n}": StrIndex(Upper("item__query_text"), Upper(Value(word)))}).exclude(
                **{f"word_{n}": 0})
        else:
            rows = rows.filter(item__query_text__icontains=word)
    return rows


class _Pk(TypedDict):
    pk: int


def _in_any(parts: list[QuerySet[Assignment, _Pk]]) -> QuerySet[Assignment]:
    """Assignments whose pk is in any of ``parts`` (each a sliced query of pks, read by index): one query.

    Joined by UNION ALL. SQLite refuses a LIMIT inside a compound statement, so there each part is wrapped in an
    unsliced ``pk IN (...)`` first; PostgreSQL takes the parts as they are (a wrapper would let its planner read
    the whole table to match them).
    """
    if not connections[parts[0].db].features.supports_slicing_ordering_in_compound:
        parts = [Assignment.objects.filter(pk__in=part).order_by().values("pk") for part in parts]
    return Assignment.objects.filter(pk__in=parts[0].union(*parts[1:], all=True) if len(parts) > 1 else parts[0])


def _counts(parts: dict[int, QuerySet[Assignment, _Pk]]) -> dict[int, int]:
    """The rows of each sliced query in ``parts`` (by pool pk), counted in one statement.

    ``SELECT pool, COUNT(*) FROM (part) UNION ALL ...``: each count reads only its part's LIMIT rows, which a
    grouped count over ``pk IN (...)`` would not promise (PostgreSQL may read the whole table to join them).
    """
    sql, params = [], []
    for pool_pk, part in parts.items():
        part_sql, part_params = part.query.get_compiler(using=part.db).as_sql()
        sql.append(f"SELECT %s, COUNT(*) FROM ({part_sql}) AS shown_part")  # noqa: S608 -- Django's compiled SQL
        params += [pool_pk, *part_params]
    with connections[next(iter(parts.values())).db].cursor() as cursor:
        cursor.execute(" UNION ALL ".join(sql), params)
        return {int(pool_pk): count for pool_pk, count in cursor.fetchall()}


def reviewer_queue_pages(*, reviewer: User, state: str = "", search: str = "", page: int = 1,
                         page_pool: str = "", page_size: int = QUEUE_PAGE_SIZE) -> list[QueuePage]:
    """The reviewer's queues, one per pool, each one page of entries long, read by index whatever their length.

    The same number of queries whatever the number of pools and the length of the queues: totals, per-state
    counts and progress from the pools' tallies (one query, with each pool's first open item); the skipped
    items' places (one, when there are any); every pool's page at once (one: each pool's slice by index, joined
    by UNION ALL). A state filter is counted by the tally. A search looks its rare words up in the query-text index
    and checks the common ones on the reviewer's own rows (which words are rare is read with the tallies), so its
    cost does not grow with the queue; it counts the matches of every pool in one query, up to
    ``SEARCH_COUNT_CAP`` (``shown_capped`` says when there are more). ``page`` (1-based) applies to the pool
    ``page_pool`` (every pool when empty); the others show their first page. Positions stay those of the whole
    queue.
    """
    words = tuple(search.lower().split())
    probes = _rare_word_probes(words, connections[QueueTally.objects.db].vendor) if words else {}
    tallies = list(
        QueueTally.objects.filter(reviewer=reviewer).select_related("pool")
        .annotate(open_item=_first(_open_rows(OuterRef("reviewer_id"), OuterRef("pool_id")), "item__public_id"),
                  open_place=_first(_open_rows(OuterRef("reviewer_id"), OuterRef("pool_id")), "shuffle_place"),
                  open_seq=_first(_open_rows(OuterRef("reviewer_id"), OuterRef("pool_id")), "seq"), **probes)
        .order_by("pool__created_at", "pool_id")
    )
    rare = frozenset(int(name.split("_")[1]) for name in probes if tallies and getattr(tallies[0], name))
    marked = [t.pool_id for t in tallies if t.skip_marks]
    marks: dict[int, list[tuple[int, int]]] = defaultdict(list)
    if marked:
        skipped = Assignment.objects.filter(reviewer=reviewer, pool_id__in=marked, seq__gt=SKIPPED_SEQ)
        for pool_pk, place, seq in skipped.values_list("pool_id", "shuffle_place", "seq"):
            marks[pool_pk].append((place, seq))
    places = {t.pool_id: _Places(total=t.total, marks=marks[t.pool_id]) for t in tallies}

    def shown_rows(pool_pk: int) -> QuerySet[Assignment]:
        rows = Assignment.objects.filter(reviewer=reviewer, pool_id=pool_pk)
        return _text_matches(rows.filter(state=state) if state else rows, words, rare)

    def asked(tally: QueueTally) -> int:
        return max(page if not page_pool or page_pool == tally.pool.public_id else 1, 1)

    shown_totals = {t.pool_id: getattr(t, state) if state else t.total for t in tallies}
    caps: dict[int, int] = {}
    if words and tallies:
        # Counted up to one past the cap (or past the page asked for), so "more than" is known without reading on.
        caps = {t.pool_id: max(SEARCH_COUNT_CAP, asked(t) * page_size) + 1 for t in tallies}
        # In queue order, so the database walks the reviewer's own queue index (or the text index, for few
        # matches), never the items of every reviewer.
        shown_totals = _counts({pk: shown_rows(pk).order_by("seq").values("pk")[:cap] for pk, cap in caps.items()})
    numbers, parts = {}, []
    for tally in tallies:
        shown_total = min(shown_totals[tally.pool_id], caps.get(tally.pool_id, 0) - 1) if words \
            else shown_totals[tally.pool_id]
        count = max(1, -(-shown_total // page_size))
        numbers[tally.pool_id] = number = min(asked(tally), count)
        if shown_total:
            offset = (number - 1) * page_size
            parts.append(shown_rows(tally.pool_id).order_by("seq").values("pk")[offset:offset + page_size])
    entries = _entries(_in_any(parts), places) if parts else {}
    pages = []
    for tally in tallies:
        pool = tally.pool
        pool_entries = entries.get(pool.pk, [])
        capped = bool(words) and shown_totals[pool.pk] >= caps[pool.pk]
        shown_total = shown_totals[pool.pk] - (1 if capped else 0)
        next_open = None
        if tally.open_item is not None:
            next_open = next((e for e in pool_entries if e.item_id == tally.open_item), None) or QueueEntry(
                item_id=tally.open_item, position=places[pool.pk].position(place=tally.open_place,
                                                                           seq=tally.open_seq),
                status="", needs_regrade=False)
        pages.append(QueuePage(
            pool_id=pool.public_id, title=_title(pool.public_id, pool.reviewer_title), instructions=pool.instructions,
            kind=pool.kind, total=tally.total, completed=tally.complete,
            counts={s: getattr(tally, s) for s in QUEUE_STATES}, shown_total=shown_total,
            filtered=bool(state or words), entries=pool_entries, next_open=next_open, page=numbers[pool.pk],
            pages=max(1, -(-shown_total // page_size)),
            pool_pk=pool.pk, shown_capped=capped,
        ))
    return pages


@dataclass(frozen=True)
class ItemPlace:
    """Where an item sits in its reviewer's queue: what the item page's previous / next / next open need."""

    position: int
    total: int
    previous_id: str | None
    next_id: str | None
    next_open_id: str | None


def reviewer_item_place(*, assignment: Assignment) -> ItemPlace:
    """The item's place in the reviewer's order of its pool: one query of index lookups, whatever the length."""
    reviewer, pool, seq = assignment.reviewer_id, assignment.pool_id, assignment.seq
    rows = Assignment.objects.filter(reviewer_id=reviewer, pool_id=pool)
    others = _open_rows(reviewer, pool)
    # Skipped items before this one: those before it in the shuffle, or (when it is skipped) those skipped first.
    before = rows.filter(seq__gt=SKIPPED_SEQ).filter(Q(seq__lte=seq) if seq > SKIPPED_SEQ
                                                     else Q(shuffle_place__lt=assignment.shuffle_place))
    found = (
        QueueTally.objects.filter(reviewer_id=reviewer, pool_id=pool)
        .annotate(
            previous_id=Subquery(rows.filter(seq__lt=seq).order_by("-seq").values("item__public_id")[:1]),
            next_id=_first(rows.filter(seq__gt=seq), "item__public_id"),
            # The first open item after this one, wrapping round to the start.
            open_after=_first(others.filter(seq__gt=seq), "item__public_id"),
            open_before=_first(others.filter(seq__lt=seq), "item__public_id"),
            skipped_before=Subquery(before.order_by().values("reviewer_id").annotate(n=Count("pk")).values("n")),
        )
        .first()
    )
    if found is None:  # assignments written before tallies existed
        queue_rebuild(reviewer_id=reviewer, pool_id=pool)
        assignment.refresh_from_db(fields=["shuffle_place", "seq"])
        return reviewer_item_place(assignment=assignment)
    skipped_before = found.skipped_before or 0
    position = (found.total - found.skip_marks + skipped_before if seq > SKIPPED_SEQ
                else assignment.shuffle_place - skipped_before)
    return ItemPlace(position=position, total=found.total, previous_id=found.previous_id, next_id=found.next_id,
                     next_open_id=found.open_after or found.open_before)
