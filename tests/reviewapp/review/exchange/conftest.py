"""A judged pool to exchange: two reviewers complete most items; one item only half; known answers left aside."""

from __future__ import annotations

import pytest

from reviewapp.review.judgments.models import ReviewItem
from reviewapp.review.pools.models import ReviewPool
from reviewapp.review.workspace.services import judgment_submit
from tests.helpers import shown_hashes
from tests.reviewapp.review.conftest import make_items, make_pool


def judge_pool(pool: ReviewPool, reviewers: list, *, seed: int = 7) -> None:
    """Complete judgments with varied grades (including "unknown"), one draft, one item left to one reviewer."""
    import random

    rng = random.Random(seed)
    items = list(ReviewItem.objects.filter(pool=pool).order_by("query_id", "doc_id"))
    for n, item in enumerate(items):
        for r, reviewer in enumerate(reviewers):
            if n == 0 and r == 1:
                continue  # one item judged by one reviewer only
            grades = {"section": rng.choice([0, 1, 2, 3]), "passage": rng.choice([0, 1, 2, 3, "unknown"])}
            judgment_submit(item=item, reviewer=reviewer, grades=grades, complete=not (n == 1 and r == 0),
                                     shown=shown_hashes(item.public_id))


@pytest.fixture
def judged_pool(reviewer_user, reviewer2_user):
    pool = make_pool(reviewers=[reviewer_user, reviewer2_user], items=make_items(n_queries=2, per_query=3))
    judge_pool(pool, [reviewer_user, reviewer2_user])
    return pool
