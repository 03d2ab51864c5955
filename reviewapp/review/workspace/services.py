"""Writes of the reviewer's workspace: a judgment saved, reopened and undone; an item skipped for later, and back.

Append-only: every change of a judgment inserts a revision (``JudgmentRevision``), and the judgment's head only
points at its latest one. An undo is a NEW revision restoring the state before the latest one, so the history stays
append-only and every revision keeps its hash binding. ``judgment_submit`` is the one function that saves grades:
it binds them to the hashes of the texts the reviewer was shown.

A skip is a private marker on the reviewer's own assignment: it moves the item to the end of their order and says
nothing about the item.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from django.contrib.auth.models import User
from django.db import IntegrityError, transaction

from reviewapp.review.assignment.models import Assignment, AssignmentSkip
from reviewapp.review.assignment.queue_order import assignment_skip_mark, assignments_refresh
from reviewapp.review.assignment.services import assignee_refusal
from reviewapp.review.errors import NotAssigned, ReviewError
from reviewapp.review.judgments.models import Judgment, JudgmentRevision, ReviewItem
from reviewapp.review.kinds import PoolKind, pool_kind
from reviewapp.review.spans.normalise import SpanError, spans_answer_check, spans_normalise


class TextChanged(ReviewError):
    """The item's texts changed after the reviewer was shown them: nothing was saved (pages 409, API 409)."""

    def __init__(self, changed: Sequence[str]) -> None:
        self.changed = list(changed)
        super().__init__(
            f"the {', '.join(self.changed)} text of this item changed since it was shown to you; nothing was "
            "saved. Read the new text and grade again."
        )


# What a grading submit carries back: the hashes of the texts the reviewer was shown (form hidden fields,
# API body fields), compared with the item's current hashes when the revision is written.
SHOWN_HASH_FIELDS = ("query_hash", "source_hash", "passage_hash")


def item_shown_hashes(item: ReviewItem) -> dict[str, str]:
    return {field: getattr(item, field) for field in SHOWN_HASH_FIELDS}


@dataclass(frozen=True)
class SubmitResult:
    revision: JudgmentRevision
    created: bool


def _clean_grades(kind: PoolKind, grades: Mapping[str, Any]) -> dict[str, int | str]:
    unknown = set(grades) - set(kind.grade_type_keys)
    if unknown:
        raise ReviewError(f"grades: unknown grade type(s) {sorted(unknown)}; expected {kind.grade_type_keys}")
    cleaned: dict[str, int | str] = {}
    for grade_type in kind.grade_type_keys:
        try:
            value = kind.parse_grade(grades.get(grade_type))
        except ValueError as error:
            raise ReviewError(f"grades.{grade_type}: {error}") from None
        if value is not None:
            cleaned[grade_type] = value
    return cleaned


def judgment_submit(
    *,
    item: ReviewItem,
    reviewer: User,
    grades: Mapping[str, Any],
    complete: bool,
    note: str = "",
    shown: Mapping[str, Any] | None = None,
    spans: Any = None,
) -> SubmitResult:
    """Save a reviewer's grades (and, on a kind that answers with spans, spans) as a new revision.

    ``shown``: the hashes (``SHOWN_HASH_FIELDS``) of the texts the grades were given on, as the page or the
    API sent them to the reviewer; every reviewer-facing submit passes them. If the item was re-bound to new
    texts since, ``TextChanged`` is raised and nothing is stored.

    Append-only: each change inserts a revision; the judgment's current state
    is its latest revision. Saving exactly the current state again (a double
    click, a retried request) inserts nothing. A completed judgment changes
    only after ``judgment_reopen`` (any other save or complete is refused)
    unless it is stale (its texts changed since); the completed revision
    stays in the history. Whoever can see model output
    is refused even if an assignment row exists.
    "unknown" is kept as unknown. A complete judgment needs every grade
    answered (a grade or unknown). ``spans``: [[start, end], ...] offsets into the source text, normalised
    (``spans.normalise``); refused on a kind without spans and when they contradict the answer.
    """
    kind = pool_kind(item.pool.kind)
    cleaned = _clean_grades(kind, grades)
    if complete:
        missing = [grade_type for grade_type in kind.grade_type_keys if grade_type not in cleaned]
        if missing:
            raise ReviewError(f"cannot mark complete: no answer for {', '.join(missing)} (a grade or unknown)")
    status = JudgmentRevision.COMPLETE if complete else JudgmentRevision.DRAFT
    note = (note or "").strip()
    if "\x00" in note:
        raise ReviewError("note: contains a NUL character")
    if shown is not None:
        shown = _clean_shown(shown)
    _own_assignment(reviewer=reviewer, item=item)
    _refuse_grader(item=item, reviewer=reviewer)
    # Checked once assigned: a refusal names the text's length, which only its reviewers may learn.
    try:
        stored_spans = spans_normalise(spans, text=item.source_text, noun=kind.source_label.lower() or "text")
        spans_answer_check(kind=kind, grades=cleaned, spans=stored_spans, complete=complete)
    except SpanError as error:
        raise ReviewError(str(error)) from None
    for _attempt in range(3):
        try:
            return _judgment_submit_once(item=item, reviewer=reviewer, grades=cleaned, status=status, note=note,
                                         shown=shown, spans=stored_spans)
        except IntegrityError:
            # Another request of this same reviewer created the head or the same revision number first.
            continue
    raise ReviewError("the judgment could not be saved after three attempts; try again")


COMPLETED_MESSAGE = ("cannot change a completed judgment: reopen it first (the Reopen button, or POST "
                     "/api/v1/review/items/<id>/judgment/reopen/); the completed revision stays in the history")


def _refuse_grader(*, item: ReviewItem, reviewer: User) -> None:
    """Checked on every save: an assignment row made before a role change must not let model output in."""
    refusal = assignee_refusal(pool=item.pool, user=reviewer)
    if refusal:
        raise ReviewError(f"cannot grade: {refusal}")


def _latest_locked(*, item: ReviewItem, reviewer: User, act: str) -> tuple[Judgment, JudgmentRevision]:
    """The reviewer's judgment of ``item``, locked, and its current revision, for an act on the latest change;
    refused as every act of theirs is (not assigned, may not grade) or when nothing was saved yet."""
    _own_assignment(reviewer=reviewer, item=item)
    _refuse_grader(item=item, reviewer=reviewer)
    judgment = judgment_lock(item=item, reviewer=reviewer)
    current = judgment.current if judgment is not None else None
    if judgment is None or current is None:
        raise ReviewError(f"nothing to {act}: no judgment saved for this item yet")
    return judgment, current


@transaction.atomic
def judgment_reopen(*, item: ReviewItem, reviewer: User) -> SubmitResult:
    """Make a completed judgment a draft again (a new revision with the same grades); the completed one stays.

    Reopening a judgment that is not complete changes nothing.
    """
    judgment, current = _latest_locked(item=item, reviewer=reviewer, act="reopen")
    if current.status != JudgmentRevision.COMPLETE:
        return SubmitResult(revision=current, created=False)
    revision = JudgmentRevision.objects.create(
        judgment=judgment, number=judgment.revision_count + 1, status=JudgmentRevision.DRAFT, grades=current.grades,
        # Reopening re-grades nothing: the draft keeps the texts the completed grades were given on.
        note=current.note, spans=current.spans, query_hash=current.query_hash, source_hash=current.source_hash,
        passage_hash=current.passage_hash,
    )
    judgment_advance(judgment=judgment, decided_on=current, revision=revision)
    return SubmitResult(revision=revision, created=True)


@transaction.atomic
def judgment_undo(*, item: ReviewItem, reviewer: User) -> SubmitResult:
    """Undo the reviewer's latest change: a new revision with the state (status, grades, spans, note) before it.

    The restored state keeps the hashes of the revision it restores (its grades were given on those texts); undoing
    the very first revision restores the empty draft, bound to the texts that revision was given on. Undoing twice
    returns to the state before the first undo, as every undo is itself a revision.
    """
    # The latest change is read under the judgment's lock: two undos at once undo two changes, in turn.
    judgment, current = _latest_locked(item=item, reviewer=reviewer, act="undo")
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


class JudgmentChanged(ReviewError):
    """The judgment moved on between the read a decision was made on and its write (nothing was stored)."""


def judgment_lock(*, item: ReviewItem, reviewer: User) -> Judgment | None:
    """The reviewer's judgment of ``item``, its row locked, with ``current`` read AFTER the lock is held.

    Only the judgment row is locked (``of=("self",)``), so another reviewer saving the same item is never
    blocked. The current revision is deliberately not joined into the locking query: under READ COMMITTED a
    row lock waited for re-reads the locked row only, and a join keeps what it read before the wait (on
    PostgreSQL the joined revision then comes back as NULL or as the state another request already replaced),
    so a check such as "already complete?" would decide on old state. Call inside a transaction.
    """
    judgment = (Judgment.objects.select_for_update(of=("self",)).select_related("item")
                .filter(item=item, reviewer=reviewer).first())
    if judgment is not None and judgment.current_id is not None:
        # Read under the lock held: the revision the judgment points at now.
        judgment.current = JudgmentRevision.objects.get(pk=judgment.current_id)
    return judgment


def judgment_advance(*, judgment: Judgment, decided_on: JudgmentRevision | None, revision: JudgmentRevision) -> None:
    """Point the judgment at ``revision``, only if it still points at the revision the decision was made on.

    The row lock already serialises writers; this conditional UPDATE makes the promise hold by construction
    even for a caller that forgot the lock: zero rows changed means someone else moved the judgment on, and
    the whole transaction (the new revision included) is rolled back.
    """
    changed = Judgment.objects.filter(
        pk=judgment.pk, current_id=decided_on.pk if decided_on is not None else None,
        revision_count=revision.number - 1,
    ).update(current=revision, revision_count=revision.number)
    if changed != 1:
        raise JudgmentChanged("the judgment changed while this save was decided (another tab or request saved "
                              "first); nothing was stored: reload the item and try again")
    assignments_refresh(item_id=judgment.item_id, reviewer_id=judgment.reviewer_id)


def _clean_shown(shown: Mapping[str, Any]) -> dict[str, str]:
    cleaned = {}
    for field in SHOWN_HASH_FIELDS:
        value = shown.get(field)
        if not isinstance(value, str) or not value.strip():
            raise ReviewError(f"{field}: required (the hash of the text you were shown, as the item page or "
                              "GET /api/v1/review/items/<id>/ gave it)")
        cleaned[field] = value.strip()
    return cleaned


@transaction.atomic
def _judgment_submit_once(
    *, item: ReviewItem, reviewer: User, grades: dict, status: str, note: str,
    shown: dict[str, str] | None = None, spans: list[list[int]] | None = None,
) -> SubmitResult:
    spans = spans or []
    # Serialise saves of the same reviewer on the same item, and decide on the state read under the lock.
    judgment = judgment_lock(item=item, reviewer=reviewer)
    if judgment is None:
        Judgment.objects.get_or_create(item=item, reviewer=reviewer)
        judgment = judgment_lock(item=item, reviewer=reviewer)
        assert judgment is not None  # created just above, in this transaction
    fresh = judgment.item
    hashes = {"query_hash": fresh.query_hash, "source_hash": fresh.source_hash, "passage_hash": fresh.passage_hash}
    if shown is not None:
        changed = [field.removesuffix("_hash") for field in SHOWN_HASH_FIELDS if shown[field] != hashes[field]]
        if changed:
            # Raised inside the transaction: a judgment head created just above is rolled back too.
            raise TextChanged(changed)
    if spans and fresh.source_hash != item.source_hash:
        # The spans were checked against the text the caller held; they point into that text only.
        raise TextChanged(["source"])
    current = judgment.current
    if (
        current is not None
        and current.status == status
        and current.grades == grades
        and current.note == note
        and (current.spans or []) == spans
        and all(getattr(current, field) == value for field, value in hashes.items())
    ):
        return SubmitResult(revision=current, created=False)
    if (
        current is not None
        and current.status == JudgmentRevision.COMPLETE
        # A stale judgment (its texts changed since) is graded again on the new texts, no reopen needed.
        and all(getattr(current, field) == value for field, value in hashes.items())
    ):
        raise ReviewError(COMPLETED_MESSAGE)
    revision = JudgmentRevision.objects.create(
        judgment=judgment, number=judgment.revision_count + 1, status=status, grades=grades, note=note, spans=spans,
        **hashes,
    )
    judgment_advance(judgment=judgment, decided_on=current, revision=revision)
    return SubmitResult(revision=revision, created=True)


def _own_assignment(*, reviewer: User, item: ReviewItem) -> Assignment:
    assignment = Assignment.objects.filter(item=item, reviewer=reviewer).first()
    if assignment is None:
        raise NotAssigned(item.public_id)
    return assignment


@transaction.atomic
def assignment_skip_set(*, reviewer: User, item: ReviewItem, skipped: bool) -> bool:
    """Mark (or unmark) the reviewer's item as skipped for later. Returns True when something changed."""
    assignment = _own_assignment(reviewer=reviewer, item=item)
    if skipped:
        _, changed = AssignmentSkip.objects.get_or_create(assignment=assignment)
    else:
        changed = AssignmentSkip.objects.filter(assignment=assignment).delete()[0] > 0
    if changed:
        assignment_skip_mark(assignment=assignment, skipped=skipped)
    return changed
