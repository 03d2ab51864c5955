"""Writes of the blinded review: pools, assignments, judgments, adjudications, label sources.

Jobs (benchmarks, grading) push items in with ``pool_create`` and read labels
back through ``reviewapp.review.selectors``. The review core never learns what a
pool's items mean: it stores texts, hashes and an opaque ``external_ref``.
"""

from __future__ import annotations

import random
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from django.contrib.auth.models import AbstractBaseUser
from django.db import IntegrityError, transaction

# Who may hold an assignment, and the reviewer's own order, are assignment's rules (assignment/assign.py).
from reviewapp.review.assignment.assign import assignee_refusal as assignee_refusal
from reviewapp.review.assignment.assign import assignment_sort_key as assignment_sort_key
from reviewapp.review.assignment.assign import assignments_rebound, pool_assign_detail
from reviewapp.review.errors import ReviewError as ReviewError
from reviewapp.review.kinds import PoolKind, UnknownKind, kind_for_grade_type, kind_get
from reviewapp.review.models import (
    Assignment,
    ImportedLabel,
    Judgment,
    JudgmentRevision,
    LabelSource,
    ReviewItem,
    ReviewPool,
    item_hashes,
)

# Jobs compute hashes for their own ledgers with the same functions the items are hashed with.
from reviewapp.review.models import passage_hash_of as passage_hash_of
from reviewapp.review.models import query_hash_of as query_hash_of
from reviewapp.review.models import source_hash_of as source_hash_of
from reviewapp.review.spans.normalise import SpanError, spans_answer_check, spans_normalise
from reviewapp.review.workspace.queue_order import assignments_refresh


class NotAssigned(LookupError):
    """The reviewer has no assignment for this item (callers answer 404, never reveal the item)."""


class TextChanged(ReviewError):
    """The item's texts changed after the reviewer was shown them: nothing was saved (pages 409, API 409)."""

    def __init__(self, changed: Sequence[str]) -> None:
        self.changed = list(changed)
        super().__init__(
            f"the {', '.join(self.changed)} text of this item changed since it was shown to you; nothing was "
            "saved. Read the new text and grade again."
        )


# ---------------------------------------------------------------------------
# Hashes (what a judgment binds to)
# ---------------------------------------------------------------------------


def item_hashes_check(*, texts: Mapping[str, str], claimed: Mapping[str, Any], where: str = "") -> dict[str, str]:
    """The hashes of ``texts`` computed here; a hash in ``claimed`` is only a check, refused when it differs.

    The message names the field (``items[3].passage_hash does not match the passage text``).
    """
    computed = item_hashes(**{field: texts[field] for field in _ITEM_TEXT_FIELDS})
    prefix = f"{where}." if where else ""
    for field, value in computed.items():
        sent = claimed.get(field)
        if sent is None or sent == "":
            continue
        if not isinstance(sent, str) or sent.strip().lower() != value:
            text = field.removesuffix("_hash")
            raise ReviewError(f"{prefix}{field} does not match the {text} text (hashes are computed by the server "
                              "from the texts; send them only as a check, or leave them out)")
    return computed


# What a grading submit carries back: the hashes of the texts the reviewer was shown (form hidden fields,
# API body fields), compared with the item's current hashes when the revision is written.
SHOWN_HASH_FIELDS = ("query_hash", "source_hash", "passage_hash")


def item_shown_hashes(item: ReviewItem) -> dict[str, str]:
    return {field: getattr(item, field) for field in SHOWN_HASH_FIELDS}


def pool_kind(kind: str) -> PoolKind:
    try:
        return kind_get(kind)
    except UnknownKind as error:
        raise ReviewError(str(error)) from None


# ---------------------------------------------------------------------------
# Pools
# ---------------------------------------------------------------------------

_ITEM_TEXT_FIELDS = ("query_text", "source_heading", "source_text", "passage_caption", "passage_text")
ITEM_FIELDS = {
    "query_id",
    "doc_id",
    *_ITEM_TEXT_FIELDS,
    "query_hash",
    "source_hash",
    "passage_hash",
    "external_ref",
    "priority",
}
# A tier number; more tiers than this is no work order anyone could follow.
MAX_PRIORITY = 100_000


def _clean_item(index: int, raw: Mapping[str, Any]) -> dict[str, Any]:
    where = f"items[{index}]"
    if not isinstance(raw, Mapping):
        raise ReviewError(f"{where}: expected an object, got {type(raw).__name__}")
    unknown = set(raw) - ITEM_FIELDS
    if unknown:
        raise ReviewError(f"{where}: unknown field(s) {sorted(unknown)}")
    item: dict[str, Any] = {}
    for field in ("query_id", "doc_id"):
        value = raw.get(field)
        if value is None or str(value).strip() == "":
            raise ReviewError(f"{where}.{field}: required")
        item[field] = str(value)
    for field in _ITEM_TEXT_FIELDS:
        value = raw.get(field, "")
        if not isinstance(value, str):
            raise ReviewError(f"{where}.{field}: must be text")
        item[field] = value
    if not item["query_text"].strip():
        raise ReviewError(f"{where}.query_text: required")
    if not (item["passage_text"].strip() or item["source_text"].strip()):
        raise ReviewError(f"{where}: needs source_text or passage_text")
    item.update(item_hashes_check(texts=item, claimed=raw, where=where))
    external_ref = raw.get("external_ref", {})
    if not isinstance(external_ref, dict):
        raise ReviewError(f"{where}.external_ref: must be an object")
    item["external_ref"] = external_ref
    priority = raw.get("priority", 0)
    if isinstance(priority, bool) or not isinstance(priority, int) or not 0 <= priority <= MAX_PRIORITY:
        raise ReviewError(f"{where}.priority: must be a whole number from 0 to {MAX_PRIORITY}")
    item["priority"] = priority
    return item


def _check_tiers_whole_queries(items: Sequence[Mapping[str, Any]]) -> None:
    """Refuse a work order that splits a query: every item of one ``query_id`` must share its ``priority``.

    A tier inside a query would put some of its passages first in every reviewer's queue, and whatever chose
    them (a system's top five, say) would be told to the reviewers by the order. Whole queries may come in any
    order; within a query each reviewer has their own keyed shuffle.
    """
    first: dict[str, int] = {}
    for i, item in enumerate(items):
        j = first.setdefault(item["query_id"], i)
        if items[j]["priority"] != item["priority"]:
            raise ReviewError(
                f"items[{i}].priority: {item['priority']} differs from items[{j}].priority {items[j]['priority']} "
                f"of the same query_id {item['query_id']!r}; the work order ranks whole queries only (an order "
                "inside a query would tell reviewers how the passages were chosen)")


# More would be no review design anyone runs; far more overflowed the column (a 500).
MAX_REVIEWERS_PER_ITEM = 100


@transaction.atomic
def pool_create(
    *,
    name: str,
    kind: str,
    items: Sequence[Mapping[str, Any]],
    declared_rule: str,
    declared_params: Mapping[str, Any] | None = None,
    reviewers_per_item: int = 2,
    reviewer_title: str = "",
    instructions: str = "",
    external_ref: Mapping[str, Any] | None = None,
    created_by: AbstractBaseUser | None = None,
) -> ReviewPool:
    """Declare a pool with its items, all or nothing.

    ``items``: objects with ``query_id``, ``doc_id`` (the job's ids; qrels use
    them), ``query_text``, ``source_heading``, ``source_text``,
    ``passage_caption``, ``passage_text``, optional ``query_hash`` /
    ``source_hash`` / ``passage_hash`` (always computed here from the texts;
    one sent is only a check, and a mismatch is refused) and an opaque
    ``external_ref`` (never shown to reviewers), optional
    ``priority`` (the work order's tier, 0 first; never shown; the same for
    every item of one ``query_id``). The order of ``items`` is not kept: ids
    are random and each reviewer gets a shuffle within each tier.
    """
    pool_kind(kind)
    if not name.strip():
        raise ReviewError("name: required")
    if not declared_rule.strip():
        raise ReviewError("declared_rule: required (say how the pool was chosen)")
    if not isinstance(reviewers_per_item, int) or not 1 <= reviewers_per_item <= MAX_REVIEWERS_PER_ITEM:
        raise ReviewError(f"reviewers_per_item: must be a whole number from 1 to {MAX_REVIEWERS_PER_ITEM}")
    if not items:
        raise ReviewError("items: a pool needs at least one item")
    cleaned = [_clean_item(i, raw) for i, raw in enumerate(items)]
    seen: dict[tuple[str, str], int] = {}
    for i, item in enumerate(cleaned):
        key = (item["query_id"], item["doc_id"])
        if key in seen:
            raise ReviewError(f"items[{i}]: query_id {key[0]!r} with doc_id {key[1]!r} repeats items[{seen[key]}]")
        seen[key] = i
    _check_tiers_whole_queries(cleaned)
    pool = ReviewPool.objects.create(
        name=name.strip(),
        kind=kind,
        declared_rule=declared_rule.strip(),
        declared_params=dict(declared_params or {}),
        reviewers_per_item=reviewers_per_item,
        reviewer_title=reviewer_title.strip(),
        instructions=instructions.strip(),
        external_ref=dict(external_ref or {}),
        created_by=created_by,
    )
    # Shuffle before inserting so that even primary keys carry no trace of the job's order.
    random.SystemRandom().shuffle(cleaned)
    ReviewItem.objects.bulk_create([ReviewItem(pool=pool, **item) for item in cleaned])
    return pool


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
    (``assign.assignments_rebound``): no reviewer is shown the same texts twice.
    """
    item = ReviewItem.objects.select_for_update().get(pk=item.pk)
    for field, value in (
        ("query_text", query_text),
        ("source_heading", source_heading),
        ("source_text", source_text),
        ("passage_caption", passage_caption),
        ("passage_text", passage_text),
    ):
        if value is not None:
            setattr(item, field, value)
    item_hashes_check(texts={field: getattr(item, field) for field in _ITEM_TEXT_FIELDS},
                      claimed={"query_hash": query_hash, "source_hash": source_hash, "passage_hash": passage_hash})
    item.save()
    assignments_refresh(item_id=item.pk)  # judgments of the old texts are stale now: back to "to do"
    assignments_rebound(item=item)
    return item


def pool_assign(
    *,
    pool: ReviewPool,
    reviewers: Iterable[AbstractBaseUser],
    per_item: int | None = None,
) -> int:
    """Give each item to ``per_item`` reviewers, judging once (``assign.pool_assign_detail``); how many added."""
    return pool_assign_detail(pool=pool, reviewers=reviewers, per_item=per_item).assigned


# ---------------------------------------------------------------------------
# Judgments
# ---------------------------------------------------------------------------


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
    reviewer: AbstractBaseUser,
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
    if not Assignment.objects.filter(item=item, reviewer=reviewer).exists():
        raise NotAssigned(item.public_id)
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


def _refuse_grader(*, item: ReviewItem, reviewer: AbstractBaseUser) -> None:
    """Checked on every save: an assignment row made before a role change must not let model output in."""
    refusal = assignee_refusal(pool=item.pool, user=reviewer)
    if refusal:
        raise ReviewError(f"cannot grade: {refusal}")


@transaction.atomic
def judgment_reopen(*, item: ReviewItem, reviewer: AbstractBaseUser) -> SubmitResult:
    """Make a completed judgment a draft again (a new revision with the same grades); the completed one stays.

    Reopening a judgment that is not complete changes nothing.
    """
    if not Assignment.objects.filter(item=item, reviewer=reviewer).exists():
        raise NotAssigned(item.public_id)
    _refuse_grader(item=item, reviewer=reviewer)
    judgment = judgment_lock(item=item, reviewer=reviewer)
    current = judgment.current if judgment is not None else None
    if judgment is None or current is None:
        raise ReviewError("nothing to reopen: no judgment saved for this item yet")
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


class JudgmentChanged(ReviewError):
    """The judgment moved on between the read a decision was made on and its write (nothing was stored)."""


def judgment_lock(*, item: ReviewItem, reviewer: AbstractBaseUser) -> Judgment | None:
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
    *, item: ReviewItem, reviewer: AbstractBaseUser, grades: dict, status: str, note: str,
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


# ---------------------------------------------------------------------------
# Imported label sources (provisional labels are never passage labels)
# ---------------------------------------------------------------------------


@transaction.atomic
def label_source_import(
    *,
    name: str,
    labels: Sequence[Mapping[str, Any]],
    provisional: bool = True,
    description: str = "",
    created_by: AbstractBaseUser | None = None,
) -> LabelSource:
    """Import labels from outside the review (e.g. 60 source-derived section labels) as their own source.

    Each label: ``query_id``, ``doc_id``, ``grade_type`` (e.g. "section"),
    ``value`` (0..3 or "unknown"), optional ``query_hash``, ``source_hash``,
    ``external_ref``. Importing the same name twice is refused (sources are
    append-only; import a new name).
    """
    if not name.strip():
        raise ReviewError("name: required")
    if LabelSource.objects.filter(name=name.strip()).exists():
        raise ReviewError(f"label source {name.strip()!r} exists already; import under a new name")
    source = LabelSource.objects.create(
        name=name.strip(), description=description.strip(), provisional=provisional, created_by=created_by
    )
    rows: list[ImportedLabel] = []
    seen: set[tuple[str, str, str]] = set()
    for i, raw in enumerate(labels):
        where = f"labels[{i}]"
        if not isinstance(raw, Mapping):
            raise ReviewError(f"{where}: expected an object")
        for field in ("query_id", "doc_id", "grade_type"):
            if not str(raw.get(field) or "").strip():
                raise ReviewError(f"{where}.{field}: required")
        try:
            scale = kind_for_grade_type(str(raw["grade_type"]))
        except UnknownKind as error:
            raise ReviewError(f"{where}.grade_type: {error}") from None
        try:
            value = scale.parse_grade(raw.get("value"))
        except ValueError as error:
            raise ReviewError(f"{where}.value: {error}") from None
        if value is None:
            raise ReviewError(f"{where}.value: required (0-3 or unknown)")
        external_ref = raw.get("external_ref") or {}
        if not isinstance(external_ref, Mapping):  # dict("ab") raised inside the import: a 500
            raise ReviewError(f"{where}.external_ref: must be an object")
        key = (str(raw["query_id"]), str(raw["doc_id"]), str(raw["grade_type"]))
        if key in seen:
            raise ReviewError(f"{where}: repeats query_id/doc_id/grade_type {key}")
        seen.add(key)
        rows.append(
            ImportedLabel(
                source=source,
                query_id=key[0],
                doc_id=key[1],
                grade_type=key[2],
                value=value,
                query_hash=str(raw.get("query_hash") or ""),
                source_hash=str(raw.get("source_hash") or ""),
                external_ref=dict(external_ref),
            )
        )
    ImportedLabel.objects.bulk_create(rows)
    return source
