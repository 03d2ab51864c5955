"""Reads of the blinded review, as plain dataclasses: what reviewers see, and the judgments and labels.

Two audiences:
- reviewers (``reviewer_*``): only their own assignments and judgments, only
  the texts needed to grade; nothing about rank, scores, systems or others.
- admins and jobs (``pool_*``, ``label_source_*``): pools, judgments, labels.
  Progress, agreement and adjudication reads are in ``agreement``; the qrels
  and JSONL exports in ``exports``.

Only COMPLETE, NON-STALE judgments count anywhere a label is read. A stale
judgment is one whose stored query/source/passage hashes differ from the
item's current hashes (``hashes_match``); admins see those separately.

The rule that turns judgments into one label per item and grade type
(``LABEL_RULE``): adjudicated, else agreed, else unresolved.
"""

from __future__ import annotations

import dataclasses
from collections import defaultdict
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from django.contrib.auth import get_user_model
from django.contrib.auth.models import AbstractBaseUser
from django.db.models import Count, Max, Q

from reviewapp.review.kinds import UNKNOWN, PoolKind, SourceContext, SpanLocations, kind_get
from reviewapp.review.models import (
    Adjudication,
    Assignment,
    ImportedLabel,
    Judgment,
    JudgmentRevision,
    LabelSource,
    ReviewPool,
)
from reviewapp.review.services import NotAssigned
from reviewapp.review.workspace.passage_location import SourceSegments, passage_locate

# The queue and the staleness rule have their own modules; their names stay readable from here.
from reviewapp.review.workspace.queue import QUEUE_STATES as QUEUE_STATES
from reviewapp.review.workspace.queue import SKIPPED_SEQ, reviewer_item_place, reviewer_title
from reviewapp.review.workspace.queue import QueueEntry as QueueEntry
from reviewapp.review.workspace.queue import QueuePage as QueuePage
from reviewapp.review.workspace.queue import ReviewerPoolQueue as ReviewerPoolQueue
from reviewapp.review.workspace.queue import reviewer_queue_pages as reviewer_queue_pages
from reviewapp.review.workspace.queue import reviewer_queues as reviewer_queues
from reviewapp.review.workspace.staleness import hashes_match as hashes_match

LABEL_RULE = (
    "Adjudicated, else agreed, else unresolved. One label per item and grade: the latest adjudication "
    "if an admin adjudicated it; otherwise the "
    "grade all reviewers agreed on, when at least the pool's required number of reviewers completed it "
    "with a grade (not unknown) and all those grades are equal; otherwise unresolved. Only complete "
    "judgments whose query, source and passage hashes still match the item count. A missing or unknown "
    "grade is never read as 0."
)


# ---------------------------------------------------------------------------
# Reviewer side
# ---------------------------------------------------------------------------


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


def reviewer_assignment(*, reviewer: AbstractBaseUser, item_id: str) -> Assignment:
    """The reviewer's assignment for an item id, or NotAssigned (callers answer 404)."""
    assignment = (
        Assignment.objects.filter(reviewer=reviewer, item__public_id=item_id).select_related("item", "pool").first()
    )
    if assignment is None:
        raise NotAssigned(item_id)
    return assignment


def reviewer_item(*, reviewer: AbstractBaseUser, item_id: str) -> ReviewerItem:
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


def reviewer_history(*, reviewer: AbstractBaseUser, item_id: str) -> list[OwnRevision]:
    """The reviewer's own revisions of one item, oldest first."""
    assignment = reviewer_assignment(reviewer=reviewer, item_id=item_id)
    revisions = JudgmentRevision.objects.filter(
        judgment__item=assignment.item, judgment__reviewer=reviewer
    ).order_by("number")
    return [_own_revision(revision) for revision in revisions]


# ---------------------------------------------------------------------------
# Admin and job side
# ---------------------------------------------------------------------------


@dataclass(frozen=True)
class PoolSummary:
    pk: int
    public_id: str
    name: str
    kind: str
    declared_rule: str
    reviewers_per_item: int
    items: int
    assignments: int
    completed: int
    created_at: datetime


def pool_list() -> list[PoolSummary]:
    pools = ReviewPool.objects.annotate(
        n_items=Count("items", distinct=True), n_assignments=Count("assignments", distinct=True)
    )
    completed = dict(
        Judgment.objects.filter(current__status=JudgmentRevision.COMPLETE)
        .values_list("item__pool_id")
        .annotate(n=Count("id"))
        .values_list("item__pool_id", "n")
    )
    return [
        PoolSummary(
            pk=pool.pk, public_id=pool.public_id, name=pool.name, kind=pool.kind, declared_rule=pool.declared_rule,
            reviewers_per_item=pool.reviewers_per_item, items=pool.n_items, assignments=pool.n_assignments,
            completed=completed.get(pool.pk, 0), created_at=pool.created_at,
        )
        for pool in pools
    ]


def pool_get(*, public_id: str) -> ReviewPool:
    return ReviewPool.objects.get(public_id=public_id)


def pool_find(*, external_ref: dict[str, Any], kind: str | None = None) -> list[ReviewPool]:
    """Pools whose ``external_ref`` contains every key/value given (a job finding its own pools), newest first."""
    pools = ReviewPool.objects.all() if kind is None else ReviewPool.objects.filter(kind=kind)
    return [
        pool for pool in pools
        if all(pool.external_ref.get(key) == value for key, value in external_ref.items())
    ]


@dataclass(frozen=True)
class JudgmentRecord:
    """A reviewer's current judgment of an item (admin/job view)."""

    item_id: str
    query_id: str
    doc_id: str
    external_ref: dict[str, Any]
    reviewer_id: int
    reviewer_username: str
    status: str
    grades: dict[str, Any]
    revision: int
    saved_at: datetime
    query_hash: str
    source_hash: str
    passage_hash: str
    stale: bool
    # Judge once: set when this is the reviewer's judgment of the same texts in another pool, read through a
    # link ({"pool", "item", "judgment", "revision", "linked_at"}); None for a judgment made in this pool.
    reused_from: dict[str, Any] | None = None
    # How the author signed in when this revision was saved (core.models.SigninMethod) and, through an identity
    # provider, its issuer URL.
    signin_method: str = ""
    signin_issuer: str = ""


def pool_judgments(pool: ReviewPool) -> list[JudgmentRecord]:
    """Every reviewer's current judgment of a pool, whatever its status, stale or not.

    Includes, once per item and reviewer, judgments of the same texts made in another pool and linked here
    (``reuse``): stale when their hashes differ from this item's, like any judgment. A reviewer's own judgment
    in this pool wins over a link.
    """
    judgments = (
        Judgment.objects.filter(item__pool=pool, current__isnull=False)
        .select_related("current", "item", "reviewer")
        .order_by("item__query_id", "item__doc_id", "reviewer_id")
    )
    records = []
    for judgment in judgments:
        revision, item = judgment.current, judgment.item
        records.append(
            JudgmentRecord(
                item_id=item.public_id, query_id=item.query_id, doc_id=item.doc_id,
                external_ref=dict(item.external_ref), reviewer_id=judgment.reviewer_id,
                reviewer_username=judgment.reviewer.get_username(), status=revision.status,
                grades=dict(revision.grades), revision=revision.number, saved_at=revision.created_at,
                query_hash=revision.query_hash, source_hash=revision.source_hash,
                passage_hash=revision.passage_hash, stale=not hashes_match(revision, item),
                signin_method=revision.signin_method, signin_issuer=revision.signin_issuer,
            )
        )
    return _with_reused(pool, records)


def _with_reused(pool: ReviewPool, records: list[JudgmentRecord]) -> list[JudgmentRecord]:
    from reviewapp.review.assignment.reuse import pool_reused_judgments

    native = {(r.reviewer_id, r.item_id) for r in records}
    for reused in pool_reused_judgments(pool=pool):
        item, judgment = reused.item, reused.judgment
        revision = judgment.current
        if (judgment.reviewer_id, item.public_id) in native:
            continue
        native.add((judgment.reviewer_id, item.public_id))
        records.append(JudgmentRecord(
            item_id=item.public_id, query_id=item.query_id, doc_id=item.doc_id, external_ref=dict(item.external_ref),
            reviewer_id=judgment.reviewer_id, reviewer_username=judgment.reviewer.get_username(),
            status=revision.status, grades=dict(revision.grades), revision=revision.number,
            saved_at=revision.created_at, query_hash=revision.query_hash, source_hash=revision.source_hash,
            passage_hash=revision.passage_hash, stale=not hashes_match(revision, item),
            reused_from=reused.provenance, signin_method=revision.signin_method,
            signin_issuer=revision.signin_issuer,
        ))
    records.sort(key=lambda r: (r.query_id, r.doc_id, r.reviewer_id))
    return records


def pool_completed_judgments(*, pool: ReviewPool, include_stale: bool = False) -> list[JudgmentRecord]:
    """Current, complete judgments of a pool (non-stale unless asked). What metrics read, per reviewer.

    Judgments of known-answer items are left out: they check reviewers and never count as labels.
    """
    from reviewapp.review.pools.known_answers import known_answer_public_ids

    known = known_answer_public_ids(pool=pool)
    return [
        record
        for record in pool_judgments(pool)
        if record.status == JudgmentRevision.COMPLETE and (include_stale or not record.stale)
        and record.item_id not in known
    ]


def pool_stale_judgments(*, pool: ReviewPool) -> list[JudgmentRecord]:
    """Judgments made on texts that have changed since: excluded from every metric, shown to admins."""
    return [record for record in pool_judgments(pool) if record.stale]


@dataclass(frozen=True)
class ResolvedLabel:
    item_id: str
    query_id: str
    doc_id: str
    external_ref: dict[str, Any]
    grade_type: str
    state: str  # "adjudicated" | "agreed" | "unresolved"
    value: int | str | None  # a grade, "unknown" (adjudicated as unknown), or None when unresolved
    reason: str  # for unresolved: why
    grades: tuple[Any, ...]  # the counted (complete, non-stale) reviewers' grades, sorted by reviewer id
    query_hash: str
    source_hash: str
    passage_hash: str

    @property
    def is_grade(self) -> bool:
        """True when the label is a usable grade (not unresolved, not unknown)."""
        return self.state != "unresolved" and isinstance(self.value, int)


def pool_labels(*, pool: ReviewPool, grade_type: str | None = None) -> list[ResolvedLabel]:
    """One label per item (and grade type) by ``LABEL_RULE``. Default grade type: the kind's qrels grade."""
    kind = kind_get(pool.kind)
    grade_type = grade_type or kind.qrels_grade_type
    if grade_type not in kind.grade_type_keys:
        raise ValueError(f"grade_type {grade_type!r} is not one of {kind.grade_type_keys}")
    counted: dict[str, list[JudgmentRecord]] = defaultdict(list)
    for record in pool_completed_judgments(pool=pool):
        counted[record.item_id].append(record)
    rulings: dict[int, Adjudication] = {}
    for ruling in Adjudication.objects.filter(item__pool=pool, grade_type=grade_type).order_by("id"):
        rulings[ruling.item_id] = ruling  # the latest wins
    from reviewapp.review.pools.known_answers import known_answer_item_pks

    labels = []
    # Known-answer items check reviewers; they are not part of the pool's labels.
    for item in pool.items.exclude(pk__in=known_answer_item_pks(pool=pool)).order_by("query_id", "doc_id"):
        records = counted.get(item.public_id, [])
        grades = tuple(r.grades.get(grade_type) for r in records)
        ruling = rulings.get(item.pk)
        if ruling is not None and hashes_match(ruling, item):
            state, value, reason = "adjudicated", ruling.value, ""
        else:
            known = [g for g in grades if isinstance(g, int)]
            if len(known) >= pool.reviewers_per_item and len(set(known)) == 1:
                state, value, reason = "agreed", known[0], ""
            else:
                state, value = "unresolved", None
                if len(set(known)) > 1:
                    reason = "reviewers disagree"
                elif any(g == UNKNOWN for g in grades):
                    reason = "a reviewer answered unknown"
                else:
                    reason = f"{len(known)} of {pool.reviewers_per_item} complete judgments"
        labels.append(
            ResolvedLabel(
                item_id=item.public_id, query_id=item.query_id, doc_id=item.doc_id,
                external_ref=dict(item.external_ref), grade_type=grade_type, state=state, value=value,
                reason=reason, grades=grades, query_hash=item.query_hash, source_hash=item.source_hash,
                passage_hash=item.passage_hash,
            )
        )
    return labels


# --- imported label sources -------------------------------------------------------


@dataclass(frozen=True)
class LabelSourceSummary:
    pk: int
    name: str
    description: str
    provisional: bool
    labels: int
    grade_types: list[str] = field(default_factory=list)


def label_source_list() -> list[LabelSourceSummary]:
    out = []
    for source in LabelSource.objects.annotate(n=Count("labels")).order_by("name"):
        grade_types = sorted(set(source.labels.values_list("grade_type", flat=True)))
        out.append(
            LabelSourceSummary(
                pk=source.pk, name=source.name, description=source.description, provisional=source.provisional,
                labels=source.n, grade_types=grade_types,
            )
        )
    return out


@dataclass(frozen=True)
class SourceLabel:
    source: str
    provisional: bool  # provisional labels are never passage labels
    query_id: str
    doc_id: str
    grade_type: str
    value: int | str
    query_hash: str
    source_hash: str
    external_ref: dict[str, Any]


def label_source_find(*, name: str) -> LabelSource | None:
    """The label source of that name, or None."""
    return LabelSource.objects.filter(name=name).first()


def reviewer_pools(*, reviewer: AbstractBaseUser) -> list[ReviewPool]:
    """Every pool with an assignment of ``reviewer``."""
    return list(ReviewPool.objects.filter(assignments__reviewer=reviewer).distinct().order_by("id"))


def label_source_labels(*, name: str) -> list[SourceLabel]:
    source = LabelSource.objects.get(name=name)
    return [
        SourceLabel(
            source=source.name, provisional=source.provisional, query_id=label.query_id, doc_id=label.doc_id,
            grade_type=label.grade_type, value=label.value, query_hash=label.query_hash,
            source_hash=label.source_hash, external_ref=dict(label.external_ref),
        )
        for label in ImportedLabel.objects.filter(source=source).order_by("query_id", "doc_id", "grade_type")
    ]


def reviewer_candidates() -> list[AbstractBaseUser]:
    """People who may be assigned blind review: the reviewer role, active, not synthetic, never seeing model output."""
    from reviewapp.core.auth.roles import grading_refusal

    User = get_user_model()
    perm = Q(groups__permissions__codename="grade_passages", groups__permissions__content_type__app_label="reviewapp")
    direct = Q(user_permissions__codename="grade_passages", user_permissions__content_type__app_label="reviewapp")
    people = User.objects.filter(is_active=True, is_staff=False, is_superuser=False).filter(perm | direct).distinct()
    return [user for user in people.order_by(User.USERNAME_FIELD) if grading_refusal(user) is None]


@dataclass(frozen=True)
class ReviewerAccount:
    """A reviewer account as the admin's reviewer page shows it (never a password or token)."""

    pk: int
    username: str
    name: str
    active: bool
    assigned: int
    complete: int


def reviewer_accounts() -> list[ReviewerAccount]:
    """Every account in the reviewer role, active or not, with its workload. Synthetic demo accounts and accounts
    that see model output are not reviewers and are not listed."""
    from reviewapp.core.auth.roles import MODEL_OUTPUT_PERMISSIONS, SYNTHETIC

    User = get_user_model()

    def holds(codenames: list[str]) -> Q:
        return (Q(groups__permissions__codename__in=codenames, groups__permissions__content_type__app_label="reviewapp")
                | Q(user_permissions__codename__in=codenames,
                    user_permissions__content_type__app_label="reviewapp"))

    excluded = [perm.split(".")[1] for perm in (*MODEL_OUTPUT_PERMISSIONS, SYNTHETIC)]
    rows = (User.objects.filter(holds(["grade_passages"]), is_staff=False, is_superuser=False)
            .exclude(pk__in=User.objects.filter(holds(excluded)).values("pk")).distinct()
            .annotate(n_assigned=Count("review_assignments", distinct=True)).order_by(User.USERNAME_FIELD))
    complete = dict(Judgment.objects.filter(current__status="complete").values("reviewer_id")
                    .annotate(n=Count("id")).values_list("reviewer_id", "n"))
    return [ReviewerAccount(pk=user.pk, username=user.get_username(), name=user.get_full_name(),
                            active=user.is_active, assigned=user.n_assigned, complete=complete.get(user.pk, 0))
            for user in rows]


def pool_assignees(*, pool: ReviewPool) -> list[AbstractBaseUser]:
    """Everyone holding an assignment of ``pool`` (for unassigning and reassigning)."""
    User = get_user_model()
    return list(User.objects.filter(review_assignments__pool=pool).distinct().order_by(User.USERNAME_FIELD))


# ---------------------------------------------------------------------------
# What the email notices read (reviewapp.notifications): assignments by reviewer and pool, pools by kind of notice
# ---------------------------------------------------------------------------

@dataclass(frozen=True)
class NoticePool:
    pk: int
    public_id: str
    name: str  # admin-facing
    reviewer_title: str  # what reviewers see


def _notice_pool(pool: ReviewPool) -> NoticePool:
    from reviewapp.review.workspace.queue import reviewer_title

    return NoticePool(pk=pool.pk, public_id=pool.public_id, name=pool.name, reviewer_title=reviewer_title(pool))


def notice_pools(*, multi_reviewer: bool = False) -> list[NoticePool]:
    """The pools of real review (not the synthetic demo pools), oldest first; ``multi_reviewer``: graded twice+."""
    pools = ReviewPool.objects.order_by("created_at", "id")
    if multi_reviewer:
        pools = pools.filter(reviewers_per_item__gte=2)
    # Synthetic is a JSON key of the declaration, decided in Python: compared in SQL it is NULL where missing.
    return [_notice_pool(pool) for pool in pools if not pool.synthetic]


def assignment_marks() -> dict[tuple[int, int], int]:
    """(reviewer id, pool pk) -> the highest assignment id, over pools of real review."""
    real = [pool.pk for pool in notice_pools()]
    return {(row["reviewer_id"], row["pool_id"]): row["last"] for row in
            Assignment.objects.filter(pool_id__in=real).values("reviewer_id", "pool_id").annotate(last=Max("id"))}


def assignments_after(*, reviewer_id: int, pool_pk: int, after_id: int) -> int:
    return Assignment.objects.filter(reviewer_id=reviewer_id, pool_id=pool_pk, id__gt=after_id).count()


def assignments_waiting(*, assigned_before: datetime) -> set[tuple[int, str]]:
    """(reviewer id, pool public id) of real pools where the reviewer holds an assignment older than the cutoff."""
    real = [pool.pk for pool in notice_pools()]
    return set(Assignment.objects.filter(pool_id__in=real, created_at__lte=assigned_before)
               .values_list("reviewer_id", "pool__public_id").distinct())
