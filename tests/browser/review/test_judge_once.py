"""Judge once in headless chromium: assigning a second pool of the same texts reuses each reviewer's judgments,
says how many, shows their provenance to the admin, and leaves nothing to grade twice in the reviewer's queue."""

from __future__ import annotations

import pytest

from reviewapp.review.pools.services import pool_create_model
from reviewapp.review.workspace.queue import reviewer_queues
from reviewapp.review.workspace.services import judgment_submit
from tests.browser.conftest import login
from tests.reviewapp.review.conftest import make_items, make_pool

pytestmark = pytest.mark.browser


def test_a_second_pool_of_the_same_texts_is_judged_once(page, live_server, admin_user_, reviewer_user,
                                                        reviewer2_user):
    first = make_pool(reviewers=[reviewer_user, reviewer2_user], items=make_items(n_queries=2, per_query=3))
    graded = first.items.order_by("query_id", "doc_id")[:2]
    for item in graded:
        judgment_submit(item=item, reviewer=reviewer_user, grades={"section": 2, "passage": 3},
                                 complete=True)
    new = [dict(item, doc_id=f"NEW-{n}", passage_text=f"A passage not seen before, number {n}.")
           for n, item in enumerate(make_items(n_queries=1, per_query=2))]
    second = pool_create_model(name="second pool", kind="passage", items=make_items(n_queries=2, per_query=3) + new,
                                  declared_rule="the same texts and two new ones", reviewers_per_item=2)

    login(page, live_server, admin_user_.username, "pw-" + admin_user_.username)
    page.goto(f"{live_server.url}/review/pools/{second.public_id}/")
    page.click("text=Assign reviewers")
    page.check(f'input[name="reviewers"][value="{reviewer_user.pk}"]')
    page.check(f'input[name="reviewers"][value="{reviewer2_user.pk}"]')
    page.click("text=Assign (balanced; only missing assignments are added)")
    status = page.inner_text('[role="status"]')
    assert "4 assignments added; 12 reused" in status and "(2 complete already)" in status
    reused = page.inner_text('[data-testid="reused"]')
    assert reused.count(first.public_id) == 2 and reviewer_user.username in reused

    queue = next(q for q in reviewer_queues(reviewer=reviewer_user) if q.pool_id == second.public_id)
    page.context.clear_cookies()
    login(page, live_server, reviewer_user.username, "pw-" + reviewer_user.username)
    page.goto(f"{live_server.url}/review/workspace/")
    body = page.inner_text("body")
    assert queue.total == 2 and "reused" not in body.lower()
    for entry in queue.entries:
        page.goto(f"{live_server.url}/review/workspace/items/{entry.item_id}/")
        assert "A passage not seen before" in page.inner_text("body")
