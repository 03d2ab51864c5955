"""Judge once under concurrency: two admins assigning one reviewer the same texts at the same moment.

Two threads, each with its own database connection, are released together by a barrier; each assigns the same
reviewer to its own pool over the same 20 texts. The reviewer must hold 20 assignments and 20 judge-once links,
never 40 assignments. It needs two concurrent writers, which SQLite does not have (it serialises them): CI runs
it on PostgreSQL.
"""

from __future__ import annotations

import threading

import pytest
from django.db import connections

from reviewapp.review.assignment.models import Assignment, JudgmentReuse
from reviewapp.review.assignment.services import pool_assign_detail
from reviewapp.review.pools.services import pool_create_model
from tests.reviewapp.review.conftest import make_items

pytestmark = [
    pytest.mark.django_db(transaction=True),
    pytest.mark.postgresql,
]

ROUNDS = 3


def _pool(name: str):
    return pool_create_model(name=name, kind="passage", items=make_items(n_queries=4, per_query=5),
                                declared_rule="the same 20 texts", reviewers_per_item=1)


def _assign_released_together(pool, reviewer, barrier: threading.Barrier, errors: list[BaseException]) -> None:
    try:
        barrier.wait(timeout=30)
        pool_assign_detail(pool=pool, reviewers=[reviewer], per_item=1)
    except BaseException as error:  # reported by the main thread
        errors.append(error)
    finally:
        connections.close_all()


def test_two_admins_assigning_the_same_texts_at_once_give_the_reviewer_each_text_once(reviewer_user):
    for round_ in range(ROUNDS):
        Assignment.objects.filter(reviewer=reviewer_user).delete()
        JudgmentReuse.objects.filter(reviewer=reviewer_user).delete()
        pools = [_pool(f"admin {n} round {round_}") for n in (1, 2)]
        barrier = threading.Barrier(2)
        errors: list[BaseException] = []
        threads = [threading.Thread(target=_assign_released_together, args=(pool, reviewer_user, barrier, errors))
                   for pool in pools]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(timeout=120)

        assert errors == []
        assert Assignment.objects.filter(reviewer=reviewer_user).count() == 20
        assert JudgmentReuse.objects.filter(reviewer=reviewer_user).count() == 20
