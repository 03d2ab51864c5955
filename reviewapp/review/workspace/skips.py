"""Writes of the reviewer's workspace beyond saving a judgment: skip for later, and undo.

Both stay inside the review's rules: a skip is a private marker on the reviewer's own assignment (it moves the
item to the end of their order and says nothing about the item), and an undo is a NEW revision restoring the
state before the latest one, so the history stays append-only and every revision keeps its hash binding.
"""

from __future__ import annotations

from django.contrib.auth.models import AbstractBaseUser
from django.db import transaction

from reviewapp.review.models import Assignment, AssignmentSkip, JudgmentRevision, ReviewItem
from reviewapp.review.services import (
    NotAssigned,
    ReviewError,
    SubmitResult,
    assignee_refusal,
    judgment_advance,
    judgment_lock,
)
from reviewapp.review.workspace.queue_order import assignment_skip_mark


def _own_assignment(*, reviewer: AbstractBaseUser, item: ReviewItem) -> Assignment:
    assignment = Assignment.objects.filter(item=item, reviewer=reviewer).first()
    if assignment is None:
        raise NotAssigned(item.public_id)
    return assignment


@transaction.atomic
def assignment_skip_set(*, reviewer: AbstractBaseUser, item: ReviewItem, skipped: bool) -> bool:
    """Mark (or unmark) the reviewer's item as skipped for later. Returns True when something changed."""
    assignment = _own_assignment(reviewer=reviewer, item=item)
    if skipped:
        _, changed = AssignmentSkip.objects.get_or_create(assignment=assignment)
    else:
        changed = AssignmentSkip.objects.filter(assignment=assignment).delete()[0] > 0
    if changed:
        assignment_skip_mark(assignment=assignment, skipped=skipped)
    return changed


@transaction.atomic
def judgment_undo(*, item: ReviewItem, reviewer: AbstractBaseUser) -> SubmitResult:
    """Undo the reviewer's latest change: a new revision with the state (status, grades, spans, note) before it.

    The restored state keeps the hashes of the revision it restores (its grades were given on those texts); undoing
    the very first revision restores the empty draft, bound to the texts that revision was given on. Undoing twice
    returns to the state before the first undo, as every undo is itself a revision.
    """
    _own_assignment(reviewer=reviewer, item=item)
    refusal = assignee_refusal(pool=item.pool, user=reviewer)
    if refusal:
        raise ReviewError(f"cannot grade: {refusal}")
    # The latest change is read under the judgment's lock: two undos at once undo two changes, in turn.
    judgment = judgment_lock(item=item, reviewer=reviewer)
    current = judgment.current if judgment is not None else None
    if judgment is None or current is None:
        raise ReviewError("nothing to undo: no judgment saved for this item yet")
    previous = JudgmentRevision.objects.filter(judgment=judgment, number=current.number - 1).first()
    source = previous if previous is not None else current
    state = ({"status": previous.status, "grades": previous.grades, "note": previous.note, "spans": previous.spans}
             if previous is not None else {"status": JudgmentRevision.DRAFT, "grades": {}, "note": "", "spans": []})
    revision = JudgmentRevision.objects.create(
        judgment=judgment, number=judgment.revision_count + 1, query_hash=source.query_hash,
        source_hash=source.source_hash, passage_hash=source.passage_hash, **state,
    )
    judgment_advance(judgment=judgment, decided_on=current, revision=revision)
    return SubmitResult(revision=revision, created=True)
