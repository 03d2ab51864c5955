"""Reads of judgments, as plain dataclasses: each reviewer's current judgment of a pool's items, and its labels.

For admins and jobs. Only COMPLETE, NON-STALE judgments count anywhere a label is read. A stale judgment is one
whose stored query/source/passage hashes differ from the item's current hashes (``hashes_match``); admins see
those separately. The labels resolved from them (``LABEL_RULE``: adjudicated, else agreed, else unresolved),
progress, agreement and adjudication reads are in ``agreement.selectors``; the qrels and JSONL exports in
``agreement.exports``.

They live here, above judgments: a pool's judgments include those linked in from other pools (assignment's judge
once) and leave known-answer items out (pools), and judgments itself stays below both.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any

from reviewapp.review.assignment.reuse import pool_reused_judgments
from reviewapp.review.judgments.hashes import hashes_match
from reviewapp.review.judgments.models import Judgment, JudgmentRevision
from reviewapp.review.pools.known_answers import known_answer_public_ids
from reviewapp.review.pools.models import ReviewPool
from reviewapp.review.pools.refs import PoolRef, pool_model


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


def pool_judgments(pool: ReviewPool | PoolRef) -> list[JudgmentRecord]:
    """Every reviewer's current judgment of a pool, whatever its status, stale or not.

    Includes, once per item and reviewer, judgments of the same texts made in another pool and linked here
    (``reuse``): stale when their hashes differ from this item's, like any judgment. A reviewer's own judgment
    in this pool wins over a link.
    """
    pool = pool_model(pool)
    judgments = (
        Judgment.objects.filter(item__pool=pool, current__isnull=False)
        .select_related("current", "item", "reviewer")
        .order_by("item__query_id", "item__doc_id", "reviewer_id")
    )
    records = []
    for judgment in judgments:
        revision, item = judgment.current, judgment.item
        assert revision is not None  # filtered on current__isnull=False
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
    native = {(r.reviewer_id, r.item_id) for r in records}
    for reused in pool_reused_judgments(pool=pool):
        item, judgment = reused.item, reused.judgment
        revision = judgment.current
        assert revision is not None  # pool_reused_judgments reads only judgments with a current revision
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


def pool_completed_judgments(*, pool: ReviewPool | PoolRef, include_stale: bool = False) -> list[JudgmentRecord]:
    """Current, complete judgments of a pool (non-stale unless asked). What metrics read, per reviewer.

    Judgments of known-answer items are left out: they check reviewers and never count as labels.
    """
    pool = pool_model(pool)
    known = known_answer_public_ids(pool=pool)
    return [
        record
        for record in pool_judgments(pool)
        if record.status == JudgmentRevision.COMPLETE and (include_stale or not record.stale)
        and record.item_id not in known
    ]


def pool_stale_judgments(*, pool: ReviewPool | PoolRef) -> list[JudgmentRecord]:
    """Judgments made on texts that have changed since: excluded from every metric, shown to admins."""
    pool = pool_model(pool)
    return [record for record in pool_judgments(pool) if record.stale]
