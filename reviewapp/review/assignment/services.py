"""Putting items in front of reviewers: the one function that does it, and balanced assignment of a pool.

``assignments_place`` is the only writer of ``Assignment`` rows (assign, reassign, known-answer mixing, suite
confirmation and proposals all come here). It holds two promises in one place:
- never to an account that sees model output (``assignee_refusal``, checked under the lock);
- never the same texts twice to the same reviewer, in any pool: a reviewer who already holds the same three
  texts gets a judge-once link instead when the judge-once key is equal (``reuse.item_key``), and nothing
  otherwise (the item goes to someone else).
It locks the reviewer's user row first, so two admins placing items before the same reviewer run one after the
other and the second sees the first's rows; the database refuses a second row of the same texts for a reviewer
besides (``Assignment.texts_key``), so even a path that skipped the lock could not make one. An item re-bound to
new texts by its job (``item_rebind``) keeps that promise too: a holder who holds the new texts elsewhere loses it.

``pool_assign_detail`` gives each item to the pool's number of distinct reviewers: judge once first, then the
reviewers with the fewest assignments in the pool. Unassigning and reassigning a reviewer move only unjudged
assignments; judged ones stay (they are a label's record).
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

from django.contrib.auth import get_user_model
from django.contrib.auth.models import User
from django.db import transaction
from django.db.models import Count

from reviewapp.core.auth.roles import grading_refusal, is_synthetic_account
from reviewapp.core.records.hashing import sha256_hex
from reviewapp.review.assignment.models import Assignment, JudgmentReuse
from reviewapp.review.assignment.queue_order import assignments_refresh, queue_rebuild
from reviewapp.review.assignment.reuse import Held, item_key, pool_rules, reuse_links_prune, reviewer_holdings
from reviewapp.review.errors import ReviewError
from reviewapp.review.judgments.hashes import ITEM_TEXT_FIELDS, item_hashes_check
from reviewapp.review.judgments.models import Judgment, ReviewItem
from reviewapp.review.pools.known_answers import KnownAnswerError, known_answer_item_pks
from reviewapp.review.pools.models import ReviewPool
from reviewapp.review.pools.refs import PoolRef, pool_model


def assignee_refusal(*, pool: ReviewPool, user: User) -> str | None:
    """Why ``user`` may not hold (or grade) an assignment of ``pool``, or None.

    A real pool takes only people in the reviewer role who cannot see model output; a pool marked synthetic
    (demo data) takes only synthetic demo accounts, so the two never mix.
    """
    if pool.synthetic:
        if is_synthetic_account(user) and user.is_active:
            return None
        return (f"pool {pool.public_id} is a synthetic demo pool; only synthetic demo accounts are assigned to it, "
                f"not {user.get_username()!r}")
    return grading_refusal(user)


def assignment_sort_key(*, pool_public_id: str, reviewer_id: int, item_public_id: str) -> str:
    """The reviewer's own deterministic shuffle: seeded by pool and reviewer, blind to rank and insertion order."""
    return sha256_hex(f"{pool_public_id}:{reviewer_id}:{item_public_id}")


def _tiebreak(pool: ReviewPool, reviewer_id: int, item: ReviewItem) -> str:
    return sha256_hex(f"assign:{pool.public_id}:{item.public_id}:{reviewer_id}")


def reviewers_lock(reviewer_ids: Iterable[int]) -> None:
    """Lock the reviewers' user rows, in pk order (two transactions locking the same people never deadlock)."""
    ids = sorted(set(reviewer_ids))
    if ids:
        list(get_user_model().objects.select_for_update().filter(pk__in=ids).order_by("pk").values_list("pk"))


@dataclass
class Placement:
    """What ``assignments_place`` did with each item it was given, for one reviewer."""

    assigned: list[ReviewItem] = field(default_factory=list)
    linked: list[tuple[ReviewItem, ReviewItem]] = field(default_factory=list)  # (item, the item they hold)
    held: list[ReviewItem] = field(default_factory=list)  # the reviewer holds this very item already
    refused: list[ReviewItem] = field(default_factory=list)  # same texts held under other rules (or no reuse)
    linked_done: set[int] = field(default_factory=set)  # items linked to a judgment complete already

    @property
    def linked_complete(self) -> int:
        return len(self.linked_done)


def _decide(*, pool: ReviewPool, reviewer_id: int, items: Sequence[ReviewItem], reuse: bool,
            write: bool) -> Placement:
    """Decide (and with ``write``, make) the placement of ``items`` before ``reviewer_id``; see the module doc."""
    items = list(items)
    placement = Placement()
    if not items:
        return placement
    pks = [item.pk for item in items]
    own = set(Assignment.objects.filter(reviewer_id=reviewer_id, item_id__in=pks).values_list("item_id", flat=True))
    own |= set(JudgmentReuse.objects.filter(reviewer_id=reviewer_id, item_id__in=pks)
               .values_list("item_id", flat=True))
    holdings = reviewer_holdings(reviewer_id=reviewer_id, items=items)
    rules = {pool.pk: pool_rules(pool=pool)}
    cache: dict[bytes, str] = {}

    def key_of(item: ReviewItem) -> str:
        if item.pool_id not in rules:
            rules[item.pool_id] = pool_rules(pool=item.pool)
        return item_key(rules=rules[item.pool_id], item=item, cache=cache)

    for item in sorted(items, key=lambda i: i.public_id):
        if item.pk in own:
            placement.held.append(item)
            continue
        texts = item.texts_key
        sources = [h for h in holdings.get(texts, []) if h.item.pk != item.pk]
        if sources:
            wanted = key_of(item) if reuse else None
            # A completed judgment of those very texts first, then the oldest assignment.
            match = next((h for h in sorted(sources, key=lambda h: not h.completed)
                          if reuse and h.item.texts_key == texts and key_of(h.item) == wanted), None)
            if match is None:
                placement.refused.append(item)
            else:
                placement.linked.append((item, match.item))
                if match.completed:
                    placement.linked_done.add(item.pk)
            continue
        placement.assigned.append(item)
        item.pool = pool
        holdings.setdefault(texts, []).append(Held(item=item, assignment_id=0, completed=False))
    if write:
        Assignment.objects.bulk_create([
            Assignment(item=item, pool=pool, reviewer_id=reviewer_id, texts_key=item.texts_key,
                       sort_key=assignment_sort_key(pool_public_id=pool.public_id, reviewer_id=reviewer_id,
                                                    item_public_id=item.public_id))
            for item in placement.assigned])
        JudgmentReuse.objects.bulk_create([JudgmentReuse(item=item, reviewer_id=reviewer_id, source_item=source)
                                           for item, source in placement.linked])
        if placement.assigned:
            queue_rebuild(reviewer_id=reviewer_id, pool_id=pool.pk)
    return placement


@transaction.atomic
def assignments_place(*, pool: ReviewPool, reviewer: User, items: Sequence[ReviewItem],
                      reuse: bool = True) -> Placement:
    """Put ``items`` of ``pool`` in front of ``reviewer``: the one function every path that assigns calls.

    Refused (``ReviewError``) for an account that may not grade this pool (sees model output, inactive, a demo
    account on a real pool). Per item: nothing when the reviewer holds it already; a judge-once link when they
    hold the same texts elsewhere under the same judge-once key (and ``reuse``); nothing when they hold the same
    texts under other rules (or ``reuse`` is off: known-answer mixing, where a repeat would give the item
    away); else an assignment in the reviewer's own keyed shuffle.
    """
    reviewers_lock([reviewer.pk])
    refusal = assignee_refusal(pool=pool, user=reviewer)
    if refusal:
        raise ReviewError(refusal)
    return _decide(pool=pool, reviewer_id=reviewer.pk, items=items, reuse=reuse, write=True)


@transaction.atomic
def assignments_rebound(*, item: ReviewItem) -> int:
    """After ``item`` was re-bound to new texts: take it off every holder who holds those texts elsewhere.

    A re-bind changes what existing assignments show without placing anything, so it could show a reviewer
    texts they hold in another item. Such a repeat assignment goes (a judgment made on the old texts stays,
    stale, in the history); an unjudged one is placed again, which links it when the other item has the same
    judge-once key. Returns how many assignments went.
    """
    rows = list(Assignment.objects.filter(item=item).select_related("reviewer"))
    reviewers_lock(row.reviewer_id for row in rows)
    judged = set(Judgment.objects.filter(item=item).values_list("reviewer_id", flat=True))
    removed = 0
    for row in rows:
        elsewhere = Assignment.objects.filter(reviewer_id=row.reviewer_id).exclude(pk=row.pk)
        if not (elsewhere.filter(texts_key=item.texts_key).exists()
                or elsewhere.filter(item__query_hash=item.query_hash, item__source_hash=item.source_hash,
                                    item__passage_hash=item.passage_hash).exists()):
            continue
        row.delete()
        queue_rebuild(reviewer_id=row.reviewer_id, pool_id=row.pool_id)
        removed += 1
        if row.reviewer_id not in judged and assignee_refusal(pool=item.pool, user=row.reviewer) is None:
            _decide(pool=item.pool, reviewer_id=row.reviewer_id, items=[item], reuse=True, write=True)
    return removed


@transaction.atomic
def item_rebind(
    *,
    item: ReviewItem,
    query_text: str | None = None,
    source_heading: str | None = None,
    source_text: str | None = None,
    passage_caption: str | None = None,
    passage_text: str | None = None,
    query_hash: str | None = None,
    source_hash: str | None = None,
    passage_hash: str | None = None,
) -> ReviewItem:
    """A job's texts changed (new source snapshot, new passage): update the item; its hashes follow the texts.

    Hashes given are only a check (a mismatch is refused). Judgments are not touched; those made on the old
    hashes become stale. A holder who holds the new texts in another item loses this one
    (``assignments_rebound``): no reviewer is shown the same texts twice.
    """
    item = ReviewItem.objects.select_for_update().get(pk=item.pk)
    for name, value in (
        ("query_text", query_text),
        ("source_heading", source_heading),
        ("source_text", source_text),
        ("passage_caption", passage_caption),
        ("passage_text", passage_text),
    ):
        if value is not None:
            setattr(item, name, value)
    item_hashes_check(texts={name: getattr(item, name) for name in ITEM_TEXT_FIELDS},
                      claimed={"query_hash": query_hash, "source_hash": source_hash, "passage_hash": passage_hash})
    item.save()
    assignments_refresh(item_id=item.pk)  # judgments of the old texts are stale now: back to "to do"
    assignments_rebound(item=item)
    return item


@dataclass(frozen=True)
class AssignResult:
    """What one ``pool_assign_detail`` added: new assignments, and judge-once links (no new work)."""

    assigned: int
    reused: int  # items a reviewer already held in another pool, linked instead of assigned again
    reused_complete: int  # of those, how many the reviewer has completed already (they count at once)
    per_reviewer: dict[int, dict[str, int]]  # reviewer id -> {"assigned": n, "reused": n}
    # (item, reviewer) pairs left out: the reviewer holds the same texts under other rules (another pool's
    # instructions, guidelines, scale or context), so they may not see them again
    refused: int = 0


@transaction.atomic
def pool_assign_detail(
    *,
    pool: ReviewPool | PoolRef,
    reviewers: Iterable[User],
    per_item: int | None = None,
) -> AssignResult:
    """Give each item to ``per_item`` (default: the pool's N) distinct reviewers, balanced, judging once.

    Judge once first: a reviewer who already holds an item with the same judge-once key elsewhere serves this
    item with that judgment through a link, at no new work, before anyone else is considered. A reviewer who
    holds the same texts under other rules is not given the item. The rest goes to the reviewers with the
    fewest assignments in this pool so far (ties broken by a hash, not by name). Safe to run again: only missing
    assignments and links are added. Every row is made by ``assignments_place``.
    """
    pool = pool_model(pool)
    per_item = pool.reviewers_per_item if per_item is None else per_item
    people = {user.pk: user for user in reviewers}
    for user in people.values():
        refusal = assignee_refusal(pool=pool, user=user)
        if refusal:
            raise ReviewError(refusal)
    if per_item < 1:
        raise ReviewError("per_item: must be at least 1")
    if per_item > len(people):
        raise ReviewError(f"per_item {per_item} needs at least {per_item} reviewers; {len(people)} given")
    # Lock the pool row so two concurrent assign runs cannot over-assign, then the people (judge once across pools).
    ReviewPool.objects.select_for_update().filter(pk=pool.pk).first()
    reviewers_lock(people)
    load = dict.fromkeys(people, 0)
    counts = Assignment.objects.filter(pool=pool, reviewer_id__in=people).values("reviewer_id").annotate(n=Count("id"))
    for row in counts:
        load[row["reviewer_id"]] = row["n"]
    existing: dict[int, set[int]] = {}
    for item_id, reviewer_id in Assignment.objects.filter(pool=pool).values_list("item_id", "reviewer_id"):
        existing.setdefault(item_id, set()).add(reviewer_id)
    reuse_links_prune(pool=pool)
    for item_id, reviewer_id in JudgmentReuse.objects.filter(item__pool=pool).values_list("item_id", "reviewer_id"):
        existing.setdefault(item_id, set()).add(reviewer_id)
    items = list(pool.items.order_by("public_id"))
    open_items = [item for item in items if len(existing.get(item.pk, ())) < per_item]
    # What each reviewer's placement would do with every open item: link, refuse, or assign.
    plans = {pk: _decide(pool=pool, reviewer_id=pk, items=open_items, reuse=True, write=False) for pk in people}
    linkable = {(item.pk, pk) for pk, plan in plans.items() for item, _ in plan.linked}
    done = {(item_pk, pk) for pk, plan in plans.items() for item_pk in plan.linked_done}
    refused = {(item.pk, pk) for pk, plan in plans.items() for item in plan.refused}
    chosen: dict[int, list[ReviewItem]] = {pk: [] for pk in people}
    for item in open_items:
        have = existing.get(item.pk, set())
        need = per_item - len(have)
        # Judge once: a completed judgment first, then one still to make elsewhere (it will serve here too).
        holders = sorted((pk for pk in people if pk not in have and (item.pk, pk) in linkable),
                         key=lambda pk: ((item.pk, pk) not in done, _tiebreak(pool, pk, item)))[:max(0, need)]
        need -= len(holders)
        candidates = sorted((pk for pk in people if pk not in have and pk not in holders
                             and (item.pk, pk) not in refused and (item.pk, pk) not in linkable),
                            key=lambda pk: (load[pk], _tiebreak(pool, pk, item)))[:max(0, need)]
        for pk in candidates:
            load[pk] += 1
        for pk in (*holders, *candidates):
            chosen[pk].append(item)
    assigned = reused = reused_complete = 0
    per_reviewer = {pk: {"assigned": 0, "reused": 0} for pk in people}
    for pk in sorted(people):
        placement = assignments_place(pool=pool, reviewer=people[pk], items=chosen[pk])
        per_reviewer[pk] = {"assigned": len(placement.assigned), "reused": len(placement.linked)}
        assigned += len(placement.assigned)
        reused += len(placement.linked)
        reused_complete += placement.linked_complete
    refused_pairs = sum(1 for item in open_items for pk in people
                        if (item.pk, pk) in refused and pk not in existing.get(item.pk, set()))
    return AssignResult(assigned=assigned, reused=reused, reused_complete=reused_complete,
                        per_reviewer=per_reviewer, refused=refused_pairs)


def pool_assign(
    *,
    pool: ReviewPool | PoolRef,
    reviewers: Iterable[User],
    per_item: int | None = None,
) -> int:
    """Give each item to ``per_item`` reviewers, judging once (``pool_assign_detail``); how many added."""
    pool = pool_model(pool)
    return pool_assign_detail(pool=pool, reviewers=reviewers, per_item=per_item).assigned


def _open_assignments(*, pool: ReviewPool, reviewer: User):
    """Assignments of ``reviewer`` in ``pool`` with no judgment yet (a judged one is a label's record: it stays)."""
    judged = Judgment.objects.filter(reviewer=reviewer, item__pool=pool).values("item_id")
    return Assignment.objects.filter(pool=pool, reviewer=reviewer).exclude(item_id__in=judged)


@dataclass(frozen=True)
class Unassigned:
    removed: int
    kept_judged: int


@transaction.atomic
def assignment_unassign(*, pool: ReviewPool | PoolRef, reviewer: User) -> Unassigned:
    """Take ``reviewer`` off ``pool``: their unjudged assignments go; judged ones stay (their history)."""
    pool = pool_model(pool)
    ReviewPool.objects.select_for_update().filter(pk=pool.pk).first()
    open_ids = list(_open_assignments(pool=pool, reviewer=reviewer).values_list("pk", flat=True))
    Assignment.objects.filter(pk__in=open_ids).delete()
    queue_rebuild(reviewer_id=reviewer.pk, pool_id=pool.pk)
    kept = Assignment.objects.filter(pool=pool, reviewer=reviewer).count()
    return Unassigned(removed=len(open_ids), kept_judged=kept)


@dataclass(frozen=True)
class Reassigned:
    moved: int
    already_held: int
    kept_judged: int
    linked: int = 0  # served by ``to_reviewer``'s judgment of the same texts in another pool (judge once)
    kept_repeat: int = 0  # left with ``from_reviewer``: ``to_reviewer`` holds the same texts under other rules


@transaction.atomic
def assignment_reassign(*, pool: ReviewPool, from_reviewer: User,
                        to_reviewer: User) -> Reassigned:
    """Give ``from_reviewer``'s unjudged items of ``pool`` to ``to_reviewer`` (who must be assignable).

    Placed by ``assignments_place``: an item ``to_reviewer`` already holds is not given twice (it is only
    taken off ``from_reviewer``), one whose texts they judge elsewhere under the same rules is linked, and one
    whose texts they hold under other rules stays with ``from_reviewer``.
    """
    if from_reviewer.pk == to_reviewer.pk:
        raise ReviewError("to_reviewer: choose a different reviewer")
    refusal = assignee_refusal(pool=pool, user=to_reviewer)
    if refusal:
        raise ReviewError(f"to_reviewer: {refusal}")
    ReviewPool.objects.select_for_update().filter(pk=pool.pk).first()
    moving = list(_open_assignments(pool=pool, reviewer=from_reviewer).select_related("item"))
    try:
        placement = assignments_place(pool=pool, reviewer=to_reviewer, items=[a.item for a in moving])
    except ReviewError as error:
        raise ReviewError(f"to_reviewer: {error}") from None
    kept = {item.pk for item in placement.refused}
    Assignment.objects.filter(pk__in=[a.pk for a in moving if a.item_id not in kept]).delete()
    queue_rebuild(reviewer_id=from_reviewer.pk, pool_id=pool.pk)
    judged_kept = Assignment.objects.filter(pool=pool, reviewer=from_reviewer).count() - len(kept)
    return Reassigned(moved=len(placement.assigned), already_held=len(placement.held), kept_judged=judged_kept,
                      linked=len(placement.linked), kept_repeat=len(kept))


# --- known-answer items ---------------------------------------------------------

# Share of a reviewer's queue made of known-answer items when an admin mixes them in without saying.
DEFAULT_SHARE = 0.1
MAX_SHARE = 0.5


@dataclass(frozen=True)
class Mixed:
    added: int
    reviewers: int
    known_items: int


@transaction.atomic
def known_answer_mix(*, pool: ReviewPool, share: float = DEFAULT_SHARE) -> Mixed:
    """Give every reviewer of ``pool`` known-answer items up to ``share`` of their queue.

    The items each reviewer gets are the first in that reviewer's own keyed shuffle (the same sort key every
    assignment carries), so the choice and the place in the queue follow no pattern a reviewer could read.
    Placed by ``assignments_place`` without judge-once links: an item whose texts the reviewer holds
    anywhere (natively or through a link) is skipped, since seeing them again would mark it as a known answer.
    """
    if not isinstance(share, (int, float)) or not 0 < share <= MAX_SHARE:
        raise KnownAnswerError(f"share: must be more than 0 and at most {MAX_SHARE}")
    ReviewPool.objects.select_for_update().filter(pk=pool.pk).first()
    known = list(ReviewItem.objects.filter(pk__in=known_answer_item_pks(pool=pool)))
    if not known:
        raise KnownAnswerError("pool: mark at least one item as a known-answer item first")
    known_pks = {item.pk for item in known}
    held: dict[int, set[int]] = defaultdict(set)
    for reviewer_id, item_id in Assignment.objects.filter(pool=pool).values_list("reviewer_id", "item_id"):
        held[reviewer_id].add(item_id)
    linked: dict[int, set[int]] = defaultdict(set)
    for reviewer_id, item_id in JudgmentReuse.objects.filter(item__pool=pool).values_list("reviewer_id", "item_id"):
        linked[reviewer_id].add(item_id)
    # Someone who may no longer grade (deactivated, or now sees model output) gets nothing new.
    users = get_user_model().objects.in_bulk(list(held))
    added = 0
    for reviewer_id in sorted(held):
        items = held[reviewer_id]
        if assignee_refusal(pool=pool, user=users[reviewer_id]):
            continue
        others = len(items - known_pks)
        # share of the whole queue: k / (others + k) <= share
        wanted = min(len(known), math.floor(share * others / (1 - share)))
        have = len(items & known_pks)
        keyed = [item for _, item in sorted(
            (assignment_sort_key(pool_public_id=pool.public_id, reviewer_id=reviewer_id,
                                 item_public_id=item.public_id), item)
            for item in known if item.pk not in items and item.pk not in linked[reviewer_id]
        )]
        # Walk the reviewer's own order until enough are placed: a skipped repeat lets the next one in.
        for item in keyed:
            if have >= wanted:
                break
            placement = assignments_place(pool=pool, reviewer=users[reviewer_id], items=[item], reuse=False)
            have += len(placement.assigned)
            added += len(placement.assigned)
    return Mixed(added=added, reviewers=len(held), known_items=len(known))
