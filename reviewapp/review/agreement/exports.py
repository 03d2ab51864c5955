"""Exports of a review pool: TREC qrels of the resolved labels, and one JSON line per reviewer judgment."""

from __future__ import annotations

import json
from collections.abc import Iterator

from reviewapp.core.models import ADMIN_HELD, SigninMethod
from reviewapp.core.records.hashing import sha256_hex
from reviewapp.review.agreement.judgments import pool_judgments
from reviewapp.review.agreement.selectors import pool_labels
from reviewapp.review.judgments.models import Judgment, JudgmentRevision
from reviewapp.review.pools.known_answers import known_answer_public_ids
from reviewapp.review.pools.models import ReviewPool
from reviewapp.review.pools.refs import PoolRef, pool_model


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


def _admin_held_judgment_ids(judgment_ids: set[int]) -> set[int]:
    return set(JudgmentRevision.objects.filter(judgment_id__in=judgment_ids, signin_method__in=ADMIN_HELD)
               .values_list("judgment_id", flat=True))


def pool_judgments_admin_held(*, pool: ReviewPool | PoolRef) -> set[tuple[str, int]]:
    """(item public id, reviewer id) of the pool's judgments any revision of which was saved after signing in with
    credentials an admin once held (a password chosen through an invitation link, or set by an admin)."""
    pool = pool_model(pool)
    local = dict(Judgment.objects.filter(item__pool=pool).values_list("pk", "item__public_id"))
    reviewer_of = dict(Judgment.objects.filter(item__pool=pool).values_list("pk", "reviewer_id"))
    held = {(local[j], reviewer_of[j]) for j in _admin_held_judgment_ids(set(local))}
    # Judge once: a judgment made in another pool counts here too, under this pool's item.
    reused = {int(r.reused_from["judgment"]): (r.item_id, r.reviewer_id)
              for r in pool_judgments(pool) if r.reused_from and r.reused_from.get("judgment") is not None}
    held |= {reused[j] for j in _admin_held_judgment_ids(set(reused))}
    return held


def pool_admin_held_complete(*, pool: ReviewPool | PoolRef) -> int:
    """How many complete judgments of the pool came from credentials an admin once held."""
    pool = pool_model(pool)
    held = pool_judgments_admin_held(pool=pool)
    return sum(1 for r in pool_judgments(pool)
               if r.status == JudgmentRevision.COMPLETE and (r.item_id, r.reviewer_id) in held)


def pool_idp_complete(*, pool: ReviewPool | PoolRef) -> dict[str, int]:
    """Complete judgments of the pool whose current revision was saved after a sign-in through an identity
    provider (OpenID Connect), per issuer: the labels whose authors the organisation itself vouched for."""
    pool = pool_model(pool)
    counts: dict[str, int] = {}
    for record in pool_judgments(pool):
        if record.status == JudgmentRevision.COMPLETE and record.signin_method == SigninMethod.OIDC:
            counts[record.signin_issuer] = counts.get(record.signin_issuer, 0) + 1
    return dict(sorted(counts.items()))


def pool_jsonl(*, pool: ReviewPool, pseudonymise: bool = False, include_drafts: bool = False) -> Iterator[str]:
    """One JSON line per reviewer judgment (current revision), with hashes and stale flag.

    Complete judgments only unless ``include_drafts``. Reviewer ids are
    usernames, or per-pool pseudonyms on request. Judgments on known-answer
    items are marked, since they measure the reviewer and never count as labels.
    """
    known = known_answer_public_ids(pool=pool)
    held = pool_judgments_admin_held(pool=pool)
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
                # Saved after signing in with a password an admin chose or could have chosen (disclosed).
                "credentials_admin_held": (record.item_id, record.reviewer_id) in held,
                # How the author signed in when saving this revision; the IdP's issuer for "oidc".
                "signin_method": record.signin_method,
                "signin_issuer": record.signin_issuer,
            },
            sort_keys=True,
            ensure_ascii=False,
        ) + "\n"
