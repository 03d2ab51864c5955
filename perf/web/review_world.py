"""The world the review benches load: reviewers, one explicit-list pool, and a logged-in session each.

Shared by bench_review.py (50 reviewers saving drafts) and bench_queue.py (50 reviewers opening their
queue at once), so both measure the same pool. Sessions are written straight to the session store: no
password hashing sits in the measured path.
"""

from __future__ import annotations

import os
import socket
from dataclasses import dataclass


@dataclass(frozen=True)
class ReviewWorld:
    sessions: dict[str, str]  # username -> session key
    item_ids: list[str]


def review_world(*, database_url: str, reviewers: int, items: int) -> ReviewWorld:
    """Migrates ``database_url`` (a scratch database the caller made), then fills it: ``reviewers`` reviewers,
    one pool of ``items`` items, two reviewers per item."""
    os.environ["DATABASE_URL"] = database_url
    os.environ.pop("REDIS_URL", None)
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "reviewapp.settings")
    import django

    django.setup()
    from django.contrib.auth import get_user_model
    from django.contrib.auth.models import Group
    from django.core.management import call_command

    from reviewapp.core.auth.roles import ensure_role_groups
    from reviewapp.review.assignment.services import pool_assign
    from reviewapp.review.pools.selectors import pool_item_keys
    from reviewapp.review.pools.services import pool_create

    call_command("migrate", verbosity=0)
    ensure_role_groups()
    user_model = get_user_model()
    group = Group.objects.get(name="reviewer")
    users = []
    for i in range(reviewers):
        user = user_model.objects.create_user(username=f"bench_reviewer_{i:02d}", password=None)
        user.groups.add(group)
        users.append(user)
    text = " ".join(["The landlord shall return the deposit within thirty days of the end of the tenancy."] * 12)
    pool_items = [
        {
            "query_id": f"q{i // 10:03d}", "doc_id": f"doc-{i:04d}",
            "query_text": f"Question {i // 10}: when must a deposit be returned?",
            "source_heading": f"Sec. {i}  Deposits", "source_text": text,
            "passage_caption": f"Sec. {i}  Deposits", "passage_text": text[:400],
        }
        for i in range(items)
    ]
    pool = pool_create(name="bench", kind="passage", items=pool_items, declared_rule="bench: explicit list")
    pool_assign(pool=pool, reviewers=users, per_item=2)
    return ReviewWorld(sessions=login_sessions(users), item_ids=[key.item_id for key in pool_item_keys(pool=pool)])


def login_sessions(users) -> dict[str, str]:
    """A logged-in session key per username, written straight to the session store (no login round trip)."""
    from django.conf import settings
    from django.contrib.auth import BACKEND_SESSION_KEY, HASH_SESSION_KEY, SESSION_KEY
    from django.contrib.sessions.backends.db import SessionStore

    sessions = {}
    for user in users:
        session = SessionStore()
        session[SESSION_KEY] = str(user.pk)
        session[BACKEND_SESSION_KEY] = settings.AUTHENTICATION_BACKENDS[0]
        session[HASH_SESSION_KEY] = user.get_session_auth_hash()
        session.save()
        sessions[user.username] = session.session_key
    return sessions


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def queue_of(*, reviewer, items: int, title: str, rare_word: str = "") -> list[str]:
    """A pool of ``items`` items assigned to ``reviewer`` alone, written with bulk_create (seconds for 10k);
    returns the item ids in the reviewer's order. Two tiers, keyed sort keys, like a declared pool. With
    ``rare_word``, the first query (its ten items) says it, and no other: what a search that matches little finds."""
    import hashlib

    from reviewapp.review.assignment.models import Assignment
    from reviewapp.review.assignment.queue_order import queue_rebuild
    from reviewapp.review.judgments.hashes import item_hashes
    from reviewapp.review.judgments.models import ReviewItem
    from reviewapp.review.pools.models import ReviewPool
    from reviewapp.review.workspace.queue import REVIEWER_ORDER

    pool = ReviewPool.objects.create(name=title, reviewer_title=title, kind="passage", declared_rule="bench",
                                     reviewers_per_item=1)
    texts = {"source_heading": "Sec. 1 Deposits", "source_text": "A deposit is returned within thirty days. " * 20,
             "passage_caption": "Sec. 1 Deposits", "passage_text": "returned within thirty days"}
    rows = []
    for n in range(items):
        rare = f"{rare_word} " if n < 10 and rare_word else ""
        query_text = f"Question {n // 10}: when must a {rare}deposit be returned?"
        rows.append(ReviewItem(pool=pool, query_id=f"q{n // 10:05d}", doc_id=f"d{n:06d}", query_text=query_text,
                               priority=0 if n < items // 2 else 1, **texts,
                               **item_hashes(query_text=query_text, **texts)))
    ReviewItem.objects.bulk_create(rows, batch_size=2000)
    Assignment.objects.bulk_create(
        [Assignment(item_id=pk, reviewer=reviewer, pool=pool,
                    sort_key=hashlib.sha256(f"{reviewer.pk}:{pk}".encode()).hexdigest())
         for pk in pool.items.values_list("pk", flat=True)],
        batch_size=2000,
    )
    queue_rebuild(reviewer_id=reviewer.pk, pool_id=pool.pk)  # what the placing service does after its bulk_create
    return list(Assignment.objects.filter(reviewer=reviewer).order_by(*REVIEWER_ORDER)
                .values_list("item__public_id", flat=True))
