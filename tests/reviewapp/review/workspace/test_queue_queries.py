"""The review queue, opened by many reviewers at once, costs a fixed, small number of SQL queries.

Per request: the session, the user, the user's permissions (own and role, one query), the
reviewer's judgments and the reviewer's assignments; the page adds one for the reviewer's day (their saves, for
the time spent). Nothing per item, nothing the page does not show.
"""

from __future__ import annotations

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from tests.factories import client_for
from tests.reviewapp.review.conftest import make_items, make_pool

QUEUE_QUERIES = {"/api/v1/review/queue/": 5, "/review/workspace/": 6}


@pytest.mark.parametrize("path", QUEUE_QUERIES)
def test_the_queue_reads_permissions_once_and_nothing_per_item(path, reviewer_user, reviewer2_user,
                                                                django_assert_num_queries):
    make_pool(reviewers=[reviewer_user, reviewer2_user], items=make_items(n_queries=4, per_query=5))
    make_pool(reviewers=[reviewer_user], per_item=1, name="second pool")
    client = client_for(reviewer_user)
    with django_assert_num_queries(QUEUE_QUERIES[path]):
        response = client.get(path)
    assert response.status_code == 200


def test_a_role_taken_away_applies_from_the_next_request(reviewer_user, reviewer2_user):
    make_pool(reviewers=[reviewer_user, reviewer2_user])
    client = client_for(reviewer_user)
    assert client.get("/api/v1/review/queue/").status_code == 200
    reviewer_user.groups.clear()
    assert client.get("/api/v1/review/queue/").status_code == 403


@pytest.mark.parametrize("path", QUEUE_QUERIES)
def test_the_queue_costs_the_same_queries_with_one_pool_as_with_twelve(path, reviewer_user, reviewer2_user):
    """Per-pool figures come from one grouped query: a reviewer in twelve pools costs what one in a single pool
    does (the firm-scale promise; a query per pool would add eleven)."""
    client = client_for(reviewer_user)
    queries = {}
    for pools in range(1, 13):
        make_pool(reviewers=[reviewer_user, reviewer2_user], items=make_items(n_queries=2, per_query=2),
                  name=f"pool {pools}")
        if pools in (1, 12):
            client.get(path)  # the session warm, as for a reviewer who keeps the page open
            with CaptureQueriesContext(connection) as captured:
                assert client.get(path).status_code == 200
            queries[pools] = len(captured.captured_queries)
    assert queries[1] == queries[12] == QUEUE_QUERIES[path], queries
