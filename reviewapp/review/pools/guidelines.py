"""A pool's guidelines for reviewers: admin-written plain text, published as numbered, hashed versions.

The current version is what reviewers see on the item page (escaped, paragraphs kept). A new version of the
pool (``services.pool_new_version``) starts from the guidelines of the version it replaces.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from datetime import datetime

from django.contrib.auth.models import User
from django.db import transaction
from django.db.models import Max

from reviewapp.review.judgments.models import JudgmentRevision
from reviewapp.review.pools.models import PoolGuidelines, ReviewPool

MAX_GUIDELINES_CHARS = 50_000


class GuidelinesError(ValueError):
    """Bad guidelines input; the message names the field."""


@dataclass(frozen=True)
class Guidelines:
    """What a reviewer may see of the guidelines: the text and its version number, nothing about who wrote it."""

    version: int
    text: str
    text_hash: str


@dataclass(frozen=True)
class GuidelinesVersion:
    version: int
    text: str
    text_hash: str
    author: str
    created_at: datetime
    completed_under: int  # judgments completed while this version was the current one


def guidelines_hash(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


@transaction.atomic
def guidelines_publish(*, pool: ReviewPool, text: str, by: User | None) -> PoolGuidelines:
    """Publish ``text`` as the pool's next guidelines version; the same text as the current one adds nothing."""
    text = (text or "").replace("\r\n", "\n").strip()
    if not text:
        raise GuidelinesError("text: required (write the guidelines reviewers should follow)")
    if len(text) > MAX_GUIDELINES_CHARS:
        raise GuidelinesError(f"text: at most {MAX_GUIDELINES_CHARS} characters (got {len(text)})")
    ReviewPool.objects.select_for_update().filter(pk=pool.pk).first()
    current = PoolGuidelines.objects.filter(pool=pool).order_by("-version").first()
    if current is not None and current.text == text:
        return current
    number = (PoolGuidelines.objects.filter(pool=pool).aggregate(n=Max("version"))["n"] or 0) + 1
    return PoolGuidelines.objects.create(pool=pool, version=number, text=text, text_hash=guidelines_hash(text),
                                         created_by=by)


def pool_guidelines(*, pool: ReviewPool) -> Guidelines | None:
    """The current guidelines of ``pool`` (reviewer-safe), or None if none were published."""
    current = PoolGuidelines.objects.filter(pool_id=pool.pk).order_by("-version").first()
    if current is None:
        return None
    return Guidelines(version=current.version, text=current.text, text_hash=current.text_hash)


def pool_guidelines_history(*, pool: ReviewPool) -> list[GuidelinesVersion]:
    """Every version, newest first, with the number of completing saves made while it was the current one.

    Both guidelines and judgment revisions are append-only and timestamped, so the version in force at any
    judgment is the latest one published before it.
    """
    rows = list(PoolGuidelines.objects.filter(pool=pool).select_related("created_by").order_by("version"))
    completed = list(JudgmentRevision.objects.filter(judgment__item__pool=pool, status=JudgmentRevision.COMPLETE)
                     .values_list("created_at", flat=True))
    out = []
    for n, row in enumerate(rows):
        until = rows[n + 1].created_at if n + 1 < len(rows) else None
        under = sum(1 for at in completed if at >= row.created_at and (until is None or at < until))
        out.append(GuidelinesVersion(version=row.version, text=row.text, text_hash=row.text_hash,
                                     author=row.created_by.get_username() if row.created_by else "system",
                                     created_at=row.created_at, completed_under=under))
    return out[::-1]


def reviewer_guidelines(*, pool_id: str) -> Guidelines | None:
    """The current guidelines of the pool with public id ``pool_id`` (for the reviewer's item page)."""
    current = PoolGuidelines.objects.filter(pool__public_id=pool_id).order_by("-version").first()
    if current is None:
        return None
    return Guidelines(version=current.version, text=current.text, text_hash=current.text_hash)
