"""A reviewer grades a whole queue blind with the keyboard in headless chromium.

Every page, htmx fragment and API payload the reviewer's browser receives is
checked for the markers planted in the job-side data (rank, score,
probability, proposed grade, system, model and judge names) and for the words
themselves.
"""

from __future__ import annotations

import re

import pytest

from reviewapp.review.agreement.judgments import pool_completed_judgments
from reviewapp.review.judgments.models import Judgment
from tests.browser.conftest import login
from tests.reviewapp.review.conftest import assert_blind, make_items, make_pool

pytestmark = pytest.mark.browser


_HTMX_READY = (
    "() => { const f = document.getElementById('judgment');"
    " return !!(window.htmx && f && f['htmx-internal-data']"
    " && !document.querySelector('.htmx-settling, .htmx-request')); }"
)


def _wait_ready(page) -> None:
    """Keys go to htmx only once it has processed the (new) form; before that the page posts natively."""
    page.wait_for_function(_HTMX_READY)


def _grades_for(position: int) -> tuple[str, str]:
    section = str(position % 4)
    passage = "u" if position % 3 == 0 else str((position + 1) % 4)
    return section, passage


def test_a_reviewer_grades_a_queue_blind_with_the_keyboard(page, live_server, reviewer_user, reviewer2_user):
    pool = make_pool(reviewers=[reviewer_user, reviewer2_user], items=make_items(n_queries=2, per_query=4))
    login(page, live_server, reviewer_user.username, "pw-" + reviewer_user.username)
    page.wait_for_selector('[data-testid="roles"]')

    response = page.goto(f"{live_server.url}/review/workspace/")
    assert_blind(response.text(), where="queue HTML")
    assert_blind(page.inner_text("body"), where="queue DOM text")
    queue_ids = [href.rstrip("/").split("/")[-1]
                 for href in page.eval_on_selector_all('[data-testid="queue-item"]', "els => els.map(e => e.href)")]
    assert len(queue_ids) == 8

    # The queue is not in rank order (the job listed items by query, then rank).
    rank_order = [item["doc_id"] for item in make_items(n_queries=2, per_query=4)]
    doc_of = dict(pool.items.values_list("public_id", "doc_id"))
    assert [doc_of[i] for i in queue_ids] != rank_order

    page.click('[data-testid="continue"]')
    for position, item_id in enumerate(queue_ids, start=1):
        page.wait_for_url(re.compile(rf"/review/workspace/items/{re.escape(item_id)}/$"))
        html = page.content()
        assert_blind(html, where=f"item {position} DOM")
        ids_in_dom = page.eval_on_selector_all("[id]", "els => els.map(e => e.id)")
        assert_blind(" ".join(ids_in_dom), where="element ids")
        section, passage = _grades_for(position)
        _wait_ready(page)
        page.keyboard.press(section)  # sets the section grade, moves on to the passage grade
        page.keyboard.press(passage)
        assert page.is_checked(f'input[name="section"][data-key="{section}"]')
        assert page.is_checked(f'input[name="passage"][data-key="{passage}"]')
        with page.expect_response(lambda r: r.request.method == "POST") as saved:
            page.keyboard.press("d")
        assert_blind(saved.value.text(), where="htmx draft fragment")
        page.wait_for_selector('[data-testid="status"]:has-text("revision 1 (draft)")')
        _wait_ready(page)
        with page.expect_response(lambda r: r.request.method == "POST") as completed:
            page.keyboard.press("c")
        # An htmx answer (an empty body naming where to go next), not a page.
        assert completed.value.status == 200 and "hx-redirect" in completed.value.headers
        assert_blind(completed.value.headers["hx-redirect"], where="htmx complete answer")
        # Complete moves straight on to the next open item; after the last one, to the queue.
        if position < len(queue_ids):
            page.wait_for_url(re.compile(rf"/review/workspace/items/{re.escape(queue_ids[position])}/$"))
        else:
            page.wait_for_url(re.compile(r"/review/workspace/\?end=1$"))
            assert_blind(page.content(), where="queue after the last item")

    # previous with the keyboard
    page.goto(f"{live_server.url}/review/workspace/items/{queue_ids[-1]}/")
    page.wait_for_selector('[data-testid="status"]:has-text("Complete (revision 2")')
    page.keyboard.press("k")
    page.wait_for_url(re.compile(rf"/review/workspace/items/{re.escape(queue_ids[-2])}/$"))

    for url in ["/api/v1/review/queue/", *[f"/api/v1/review/items/{i}/" for i in queue_ids],
                *[f"/api/v1/review/items/{i}/history/" for i in queue_ids]]:
        api = page.request.get(f"{live_server.url}{url}")
        assert api.status == 200, url
        assert_blind(api.text(), where=url)

    response = page.goto(f"{live_server.url}/review/workspace/")
    assert "All done" in response.text()
    assert_blind(response.text(), where="finished queue")

    judgments = Judgment.objects.filter(reviewer=reviewer_user).select_related("current", "item")
    assert judgments.count() == 8
    by_item = {j.item.public_id: j for j in judgments}
    for position, item_id in enumerate(queue_ids, start=1):
        section, passage = _grades_for(position)
        current = by_item[item_id].current
        assert current.status == "complete" and current.number == 2
        assert current.grades == {"section": int(section), "passage": "unknown" if passage == "u" else int(passage)}
    assert len(pool_completed_judgments(pool=pool)) == 8


def test_a_reviewer_browser_is_refused_admin_pages_and_other_reviewers_items(page, live_server, reviewer_user,
                                                                             reviewer2_user, django_user_model):
    from django.contrib.auth.models import Group

    outsider = django_user_model.objects.create_user(username="olive", password="a-long-pass-phrase")
    outsider.groups.add(Group.objects.get(name="reviewer"))
    pool = make_pool(reviewers=[reviewer_user, reviewer2_user], items=make_items(n_queries=1, per_query=2))
    item_id = pool.items.first().public_id
    login(page, live_server, "olive", "a-long-pass-phrase")
    page.wait_for_selector('[data-testid="roles"]')
    for url, expected in [(f"/review/workspace/items/{item_id}/", 404), (f"/api/v1/review/items/{item_id}/", 404),
                          ("/review/pools/", 403), (f"/review/pools/{pool.public_id}/", 403),
                          ("/api/v1/review/pools/", 403)]:
        assert page.goto(f"{live_server.url}{url}").status == expected, url
