"""Keeps each reviewer's stored order and tally in step with the writes that change them (writes only).

The queue page reads one page of a queue by index and its counts from one ``QueueTally`` row, so its cost does
not grow with the queue. That holds only if every write that changes what the queue shows updates the stored
columns in the same transaction:

- placing or removing assignments (``assignment.services``): ``queue_rebuild`` of that reviewer's pool (the
  places move, so the whole pool is renumbered; these are admin actions, not the reviewer's clicks);
- a judgment moving to a new revision (``workspace.services.judgment_advance``), an item's texts changing
  (``assignment.services.item_rebind``): ``assignments_refresh`` of the rows concerned;
- skip for later and back (``workspace.assignment_skip_set``): ``assignment_skip_mark``.

The state of a row is always computed by the queue's own SQL expression (``queue.with_queue_state``), never
worked out here a second time. Rows locked first, then read: a tally is a sum of deltas, so two writers must
not both count the same move; the assignment rows are locked before their tallies, in every writer.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Iterable
from functools import cache

from django.db import connection
from django.db.models import F, Max, QuerySet

from reviewapp.review.assignment.models import Assignment, QueueTally
from reviewapp.review.assignment.queue_state import QUEUE_STATES, SKIPPED_SEQ, with_queue_state

_BATCH = 2000


def _write_order(rows: list[tuple[int, int, int, str]]) -> None:
    """Set (shuffle_place, seq, state) of many assignments, a batch a statement (``UPDATE ... FROM (VALUES ...)``)."""
    table, place, seq, state, pk = (connection.ops.quote_name(name) for name in
                                   (Assignment._meta.db_table, "shuffle_place", "seq", "state", "id"))
    with connection.cursor() as cursor:
        for start in range(0, len(rows), _BATCH):
            batch = rows[start:start + _BATCH]
            values = ", ".join(["(%s, %s, %s, %s)"] * len(batch))
            cursor.execute(
                f"UPDATE {table} SET {place} = v.column2, {seq} = v.column3, {state} = v.column4 "  # noqa: S608
                f"FROM (VALUES {values}) AS v WHERE {table}.{pk} = v.column1",
                [value for row in batch for value in row],
            )


def queue_rebuild(*, reviewer_id: int, pool_id: int) -> None:
    """Number ``reviewer_id``'s assignments in ``pool_id`` afresh and recount their tally (O(queue), once).

    Called after assignments were placed or removed, and by anything that wrote assignments in bulk.
    """
    rows = list(
        with_queue_state(Assignment.objects.filter(reviewer_id=reviewer_id, pool_id=pool_id))
        .values_list("pk", "item__priority", "sort_key", "skip__skipped_at", "q_state", "shuffle_place", "seq",
                     "state")
    )
    if not rows:
        QueueTally.objects.filter(reviewer_id=reviewer_id, pool_id=pool_id).delete()
        return
    shuffled = sorted(rows, key=lambda row: (row[1], row[2], row[0]))
    place = {row[0]: n for n, row in enumerate(shuffled, start=1)}
    skipped = sorted((row for row in rows if row[3] is not None), key=lambda row: (row[3], row[0]))
    seq = {row[0]: place[row[0]] for row in rows} | {row[0]: SKIPPED_SEQ + n for n, row in enumerate(skipped, 1)}
    changed = [(pk, place[pk], seq[pk], state) for pk, _, _, _, state, old_place, old_seq, old_state in rows
               if (place[pk], seq[pk], state) != (old_place, old_seq, old_state)]
    _write_order(changed)
    counts = Counter(row[4] for row in rows)
    QueueTally.objects.update_or_create(
        reviewer_id=reviewer_id, pool_id=pool_id,
        defaults={**{state: counts.get(state, 0) for state in QUEUE_STATES}, "skip_marks": len(skipped)},
    )


@cache
def _state_by_pk() -> QuerySet[Assignment, tuple[int, str]]:
    """``(pk, q_state)`` of every assignment, built once per process: resolving the queue-state expression (a
    filtered join and three CASEs) cost about half of every save's time; each call filters a clone of it."""
    return with_queue_state(Assignment.objects.all()).values_list("pk", "q_state")


def assignments_refresh(assignments: Iterable[int] | None = None, **where: object) -> None:
    """Recompute the queue state of the assignments ``where`` selects (or the primary keys ``assignments``), and
    move their counts in their tallies. Call inside the transaction of the write that changed them."""
    rows = Assignment.objects.filter(pk__in=list(assignments)) if assignments is not None else \
        Assignment.objects.filter(**where)
    # Locked, then read in a second statement: under READ COMMITTED that read sees what the lock waited for.
    held = {pk: (reviewer, pool, state) for pk, reviewer, pool, state in
            rows.select_for_update(of=("self",)).values_list("pk", "reviewer_id", "pool_id", "state")}
    if not held:
        return
    now = dict(_state_by_pk().filter(pk__in=held))
    moves: dict[tuple[int, int], Counter[str]] = defaultdict(Counter)
    by_state: dict[str, list[int]] = defaultdict(list)
    for pk, (reviewer, pool, before) in held.items():
        after = now[pk]
        if after != before:
            by_state[after].append(pk)
            moves[reviewer, pool][before] -= 1
            moves[reviewer, pool][after] += 1
    for state, pks in by_state.items():
        Assignment.objects.filter(pk__in=pks).update(state=state)
    for (reviewer, pool), delta in sorted(moves.items()):  # tallies in one order: two writers cannot deadlock
        changed = QueueTally.objects.filter(reviewer_id=reviewer, pool_id=pool).update(
            **{state: F(state) + n for state, n in delta.items() if n})
        if not changed:  # rows written before tallies existed: count them once
            queue_rebuild(reviewer_id=reviewer, pool_id=pool)


def assignment_skip_mark(*, assignment: Assignment, skipped: bool) -> None:
    """After the skip marker of ``assignment`` was set or removed: move it to the end of its order, or back."""
    # Locks in the order every writer takes them (the assignment, then its tally), so none waits on another's.
    list(Assignment.objects.select_for_update(of=("self",)).filter(pk=assignment.pk).values_list("pk"))
    tally = QueueTally.objects.select_for_update().filter(reviewer_id=assignment.reviewer_id,
                                                          pool_id=assignment.pool_id).first()
    if tally is None:
        queue_rebuild(reviewer_id=assignment.reviewer_id, pool_id=assignment.pool_id)
        return
    if skipped:
        # After every item skipped before it (the tally's row lock orders two skips of one queue).
        last = Assignment.objects.filter(reviewer_id=assignment.reviewer_id, pool_id=assignment.pool_id,
                                         seq__gt=SKIPPED_SEQ).aggregate(last=Max("seq"))["last"]
        seq = (last or SKIPPED_SEQ) + 1
    else:
        seq = Assignment.objects.filter(pk=assignment.pk).values_list("shuffle_place", flat=True).get()
    Assignment.objects.filter(pk=assignment.pk).update(seq=seq)
    QueueTally.objects.filter(pk=tally.pk).update(skip_marks=F("skip_marks") + (1 if skipped else -1))
    assignments_refresh([assignment.pk])
