"""Exports of a review pool: TREC qrels of the resolved labels, and one JSON line per reviewer judgment."""

from __future__ import annotations

import json
from collections.abc import Iterator

from reviewapp.core.hashing import sha256_hex
from reviewapp.review.known_answers import known_answer_public_ids
from reviewapp.review.models import JudgmentRevision, ReviewPool
from reviewapp.review.selectors import pool_judgments, pool_labels


def pool_qrels(*, pool: ReviewPool, grade_type: str | None = None) -> str:
    """TREC qrels ("qid 0 docid grade"), resolved labels only.

    An item without a resolved grade (unjudged, incomplete, stale, disagreeing,
    unknown) is left out, never written as 0.
    """
    lines = [
        f"{label.query_id} 0 {label.doc_id} {label.value}"
        for label in pool_labels(pool=pool, grade_type=grade_type)
        if label.is_grade
    ]
    for line in lines:
        if len(line.split()) != 4:
            raise ValueError(f"query or doc id contains white space, cannot write qrels: {line!r}")
    return "".join(line + "\n" for line in lines)


def reviewer_pseudonym(*, pool: ReviewPool, reviewer_id: int) -> str:
    """Stable within a pool, unlinkable across pools without the pool's random id."""
    return "reviewer-" + sha256_hex(f"pseudonym:{pool.public_id}:{reviewer_id}")[:10]


def pool_jsonl(*, pool: ReviewPool, pseudonymise: bool = False, include_drafts: bool = False) -> Iterator[str]:
    """One JSON line per reviewer judgment (current revision), with hashes and stale flag.

    Complete judgments only unless ``include_drafts``. Reviewer ids are
    usernames, or per-pool pseudonyms on request. Judgments on known-answer
    items are marked, since they measure the reviewer and never count as labels.
    """
    known = known_answer_public_ids(pool=pool)
    for record in pool_judgments(pool):
        if record.status != JudgmentRevision.COMPLETE and not include_drafts:
            continue
        reviewer = (
            reviewer_pseudonym(pool=pool, reviewer_id=record.reviewer_id) if pseudonymise else record.reviewer_username
        )
        yield json.dumps(
            {
                "pool": pool.public_id,
                "item": record.item_id,
                "query_id": record.query_id,
                "doc_id": record.doc_id,
                "reviewer": reviewer,
                "status": record.status,
                "grades": record.grades,
                "revision": record.revision,
                "saved_at": record.saved_at.isoformat(),
                "query_hash": record.query_hash,
                "source_hash": record.source_hash,
                "passage_hash": record.passage_hash,
                "stale": record.stale,
                # Judge once: the other pool's judgment this one is (None: made in this pool).
                "reused_from": record.reused_from,
                "known_answer": record.item_id in known,
            },
            sort_keys=True,
            ensure_ascii=False,
        ) + "\n"
