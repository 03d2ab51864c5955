"""Known-answer items: items with an admin's expected grade, mixed into reviewers' queues to check reliability.

A known-answer item is an ordinary item of the pool with an ordinary assignment (same public id format, same
keyed-shuffle sort key): nothing a reviewer receives tells it apart. What marks it lives only in
``KnownAnswer`` rows, read by admin pages. Its judgments never count towards the pool's labels, agreement or
metrics (``agreement.judgments.pool_completed_judgments`` and ``pool_labels`` leave such items out); they only
measure each reviewer's accuracy here.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass
from typing import Any

from django.contrib.auth import get_user_model
from django.contrib.auth.models import User
from django.db import transaction

from reviewapp.review.judgments.models import Judgment, JudgmentRevision, ReviewItem
from reviewapp.review.kinds import UNKNOWN, kind_get
from reviewapp.review.pools.models import KnownAnswer, ReviewPool
from scoring.stats.proportion import Proportion, proportion_interval


class KnownAnswerError(ValueError):
    """Bad input to a known-answer service; the message names the field."""


def _matches(row: Any, item: ReviewItem) -> bool:
    return (row.query_hash == item.query_hash and row.source_hash == item.source_hash
            and row.passage_hash == item.passage_hash)


def known_answers_of(*, pool: ReviewPool) -> dict[int, dict[str, Any]]:
    """Item pk -> {grade type: expected value} of the pool's current known answers (latest row, texts unchanged)."""
    latest: dict[tuple[int, str], KnownAnswer] = {}
    for row in KnownAnswer.objects.filter(item__pool=pool).select_related("item").order_by("id"):
        latest[(row.item_id, row.grade_type)] = row
    out: dict[int, dict[str, Any]] = defaultdict(dict)
    for (item_pk, grade_type), row in latest.items():
        if row.expected is not None and _matches(row, row.item):
            out[item_pk][grade_type] = row.expected
    return dict(out)


def known_answer_item_pks(*, pool: ReviewPool) -> set[int]:
    """Items of ``pool`` that are known-answer items now (left out of every label and metric)."""
    return set(known_answers_of(pool=pool))


def _clean_expected(pool: ReviewPool, expected: dict[str, Any]) -> dict[str, Any]:
    kind = kind_get(pool.kind)
    clean: dict[str, Any] = {}
    for grade_type, raw in expected.items():
        if grade_type not in kind.grade_type_keys:
            raise KnownAnswerError(f"{grade_type}: not a grade type of this pool ({', '.join(kind.grade_type_keys)})")
        if raw in (None, ""):
            continue
        try:
            value = int(raw)
        except (TypeError, ValueError):
            raise KnownAnswerError(f"{grade_type}: {raw!r} is not a grade ({kind.values})") from None
        if value not in kind.values:
            raise KnownAnswerError(f"{grade_type}: {value} is not a grade ({kind.values})")
        clean[grade_type] = value
    return clean


@transaction.atomic
def known_answer_set(*, item: ReviewItem, expected: dict[str, Any], by: User) -> int:
    """Record ``expected`` grades (grade type -> grade) for ``item``; returns how many were recorded.

    Only grades, never "unknown": an item whose answer is unknown cannot check anyone.
    """
    clean = _clean_expected(item.pool, expected)
    if not clean:
        raise KnownAnswerError("expected: choose the expected grade for at least one grade type")
    for grade_type, value in clean.items():
        KnownAnswer.objects.create(item=item, grade_type=grade_type, expected=value, set_by=by,
                                   query_hash=item.query_hash, source_hash=item.source_hash,
                                   passage_hash=item.passage_hash)
    return len(clean)


@transaction.atomic
def known_answer_withdraw(*, item: ReviewItem, by: User) -> int:
    """Stop using ``item`` as a known-answer item (its assignments stay: a reviewer's queue never shrinks)."""
    current = known_answers_of(pool=item.pool).get(item.pk, {})
    for grade_type in current:
        KnownAnswer.objects.create(item=item, grade_type=grade_type, expected=None, set_by=by,
                                   query_hash=item.query_hash, source_hash=item.source_hash,
                                   passage_hash=item.passage_hash)
    return len(current)


# --- accuracy ------------------------------------------------------------------


@dataclass(frozen=True)
class KnownAnswerRow:
    item_id: str
    query_id: str
    doc_id: str
    expected: dict[str, Any]
    answered: int  # complete, non-stale judgments


@dataclass(frozen=True)
class ReviewerAccuracy:
    reviewer_id: int
    username: str
    accuracy: Proportion  # exact matches among graded answers (not unknown)
    unknown: int  # answers "unknown" on a known-answer grade (not counted in n)
    items: int  # known-answer items completed


def _counted(judgment: Judgment) -> bool:
    revision = judgment.current
    return revision is not None and revision.status == JudgmentRevision.COMPLETE and _matches(revision, judgment.item)


def pool_known_answers(*, pool: ReviewPool) -> list[KnownAnswerRow]:
    answers = known_answers_of(pool=pool)
    items = ReviewItem.objects.filter(pk__in=answers).order_by("query_id", "doc_id")
    answered: dict[int, int] = defaultdict(int)
    for judgment in Judgment.objects.filter(item__in=items).select_related("current", "item"):
        answered[judgment.item_id] += _counted(judgment)
    return [KnownAnswerRow(item_id=item.public_id, query_id=item.query_id, doc_id=item.doc_id,
                           expected=answers[item.pk], answered=answered[item.pk])
            for item in items]


def reviewer_accuracy(*, pool: ReviewPool | None = None, confidence: float = 0.95) -> list[ReviewerAccuracy]:
    """Each reviewer's accuracy on known-answer items: exact grade matches over graded (not unknown) answers.

    Population: every grade type with a known answer on an item the reviewer completed (current revision,
    texts unchanged), in ``pool`` or in every pool. Interval: Wilson score, two-sided, at ``confidence``.
    """
    pools = [pool] if pool is not None else list(ReviewPool.objects.filter(items__known_answers__isnull=False)
                                                 .distinct())
    counts: dict[int, list[int]] = defaultdict(lambda: [0, 0, 0, 0])  # correct, n, unknown, items
    for one in pools:
        answers = known_answers_of(pool=one)
        judgments = Judgment.objects.filter(item_id__in=answers).select_related("current", "item")
        for judgment in judgments:
            revision = judgment.current
            if revision is None or not _counted(judgment):
                continue
            row = counts[judgment.reviewer_id]
            row[3] += 1
            for grade_type, expected in answers[judgment.item_id].items():
                given = revision.grades.get(grade_type)
                if given == UNKNOWN or not isinstance(given, int):
                    row[2] += 1
                    continue
                row[1] += 1
                row[0] += given == expected
    user_model = get_user_model()
    names = dict(user_model.objects.filter(pk__in=counts).values_list("pk", user_model.USERNAME_FIELD))
    return [
        ReviewerAccuracy(reviewer_id=pk, username=names.get(pk, str(pk)),
                         accuracy=proportion_interval(correct, n, confidence=confidence), unknown=unknown,
                         items=items)
        for pk, (correct, n, unknown, items) in sorted(counts.items(), key=lambda kv: names.get(kv[0], ""))
    ]


def known_answer_public_ids(*, pool: ReviewPool) -> set[str]:
    pks = known_answer_item_pks(pool=pool)
    return set(ReviewItem.objects.filter(pk__in=pks).values_list("public_id", flat=True)) if pks else set()
