"""Concurrent saves lose nothing and duplicate nothing.

On PostgreSQL the saves run in real parallel threads (each with its own
connection). SQLite allows one writer at a time, so there the same threads are
serialised by a lock: the test then checks the bookkeeping, not the locking.
"""

from __future__ import annotations

import threading
from concurrent.futures import ThreadPoolExecutor

import pytest
from django.db import connection, connections

from reviewapp.review.judgments.models import Judgment, JudgmentRevision, ReviewItem
from reviewapp.review.workspace.services import judgment_submit
from tests.reviewapp.review.conftest import make_pool

pytestmark = pytest.mark.django_db(transaction=True)

_sqlite_lock = threading.Lock()


def _run(fn):
    def wrapped(*args):
        try:
            if connection.vendor == "sqlite":
                with _sqlite_lock:
                    return fn(*args)
            return fn(*args)
        finally:
            connections.close_all()

    return wrapped


def test_two_reviewers_saving_the_same_item_at_once_lose_nothing(reviewer_user, reviewer2_user):
    pool = make_pool(reviewers=[reviewer_user, reviewer2_user])
    item_id = pool.items.first().pk
    rounds = 15
    barrier = threading.Barrier(2) if connection.vendor != "sqlite" else None

    @_run
    def save(user, n):
        item = ReviewItem.objects.select_related("pool").get(pk=item_id)
        return judgment_submit(item=item, reviewer=user, grades={"section": n % 4, "passage": (n + 1) % 4},
                                        complete=n == rounds - 1).created

    def reviewer_loop(user):
        created = 0
        for n in range(rounds):
            if barrier is not None:
                barrier.wait(timeout=30)
            created += save(user, n)
        return created

    with ThreadPoolExecutor(max_workers=2) as pool_executor:
        results = list(pool_executor.map(reviewer_loop, [reviewer_user, reviewer2_user]))

    for user, created in zip([reviewer_user, reviewer2_user], results, strict=True):
        numbers = list(JudgmentRevision.objects.filter(judgment__item_id=item_id, judgment__reviewer=user)
                       .order_by("number").values_list("number", flat=True))
        # consecutive grades differ, so every save is a change: none lost, none doubled
        assert created == rounds
        assert numbers == list(range(1, rounds + 1))
        judgment = Judgment.objects.select_related("current").get(item_id=item_id, reviewer=user)
        assert judgment.current.number == rounds and judgment.current.status == "complete"
        assert judgment.current.grades == {"section": (rounds - 1) % 4, "passage": rounds % 4}


def test_one_reviewer_double_submitting_makes_one_revision(reviewer_user, reviewer2_user):
    pool = make_pool(reviewers=[reviewer_user, reviewer2_user])
    item_id = pool.items.first().pk
    threads = 8
    barrier = threading.Barrier(threads) if connection.vendor != "sqlite" else None

    @_run
    def save(_):
        item = ReviewItem.objects.select_related("pool").get(pk=item_id)
        return judgment_submit(item=item, reviewer=reviewer_user, grades={"section": 2, "passage": 3},
                                        complete=True).revision.pk

    def go(i):
        if barrier is not None:
            barrier.wait(timeout=30)
        return save(i)

    with ThreadPoolExecutor(max_workers=threads) as executor:
        revision_ids = set(executor.map(go, range(threads)))
    assert len(revision_ids) == 1
    assert Judgment.objects.filter(item_id=item_id, reviewer=reviewer_user).count() == 1
    assert JudgmentRevision.objects.filter(judgment__item_id=item_id).count() == 1
