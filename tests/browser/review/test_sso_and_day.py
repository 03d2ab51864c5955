"""In headless chromium: a lawyer signs in through the loopback OpenID Connect provider and grades an item; the
queue shows the day per pool, the estimate, and the end-of-queue message only once every pool is done."""

from __future__ import annotations

import re

import pytest
from django.contrib.auth import get_user_model

from reviewapp.review.judgments.models import JudgmentRevision
from tests.browser.review.test_review_workspace import _ready
from tests.reviewapp.review.conftest import make_items, make_pool
from tests.reviewapp.sso.idp import idp, sso_on  # noqa: F401  (the loopback IdP and the product set up for it)

pytestmark = [pytest.mark.browser, pytest.mark.slow]


def _items(prefix: str, n: int) -> list[dict]:
    items = make_items(n_queries=1, per_query=n)
    return [{**item, "query_id": f"{prefix}-{item['query_id']}", "query_text": f"{prefix} question: deposits?",
             "source_text": f"{item['source_text']} ({prefix})"} for item in items]


def test_a_lawyer_signs_in_through_the_idp_and_works_through_two_pools(page, live_server, sso_on,  # noqa: F811
                                                                        reviewer2_user):
    sso_on.set_user("bea", groups=["Lawyers"])
    sso_on.allow_redirect(f"{live_server.url}/accounts/oidc/callback/")
    page.goto(f"{live_server.url}/accounts/login/")
    page.click('[data-testid="sso-signin"]')
    page.wait_for_url(re.compile(r"127\.0\.0\.1:\d+/login/"))  # the IdP's own sign-in page
    assert not page.url.startswith(live_server.url)
    page.fill('input[name="username"]', "bea")
    page.fill('input[name="password"]', "pw-" + "idp")
    page.click("button")
    page.wait_for_selector('[data-testid="roles"]')
    assert page.url.startswith(live_server.url) and "reviewer" in page.inner_text('[data-testid="roles"]')

    user = get_user_model().objects.get(oidc_identities__subject=sso_on.subjects["bea"])
    first = make_pool(reviewers=[user, reviewer2_user], items=_items("First", 2), name="first")
    second = make_pool(reviewers=[user, reviewer2_user], items=_items("Second", 3), name="second")
    for pool, title in ((first, "First set"), (second, "Second set")):
        pool.reviewer_title = title
        pool.save(update_fields=["reviewer_title"])

    page.goto(f"{live_server.url}/review/workspace/")
    rows = page.locator('[data-testid="day-row"]')
    assert rows.count() == 2
    assert "2 of 2" in rows.nth(0).inner_text() and "3 of 3" in rows.nth(1).inner_text()
    assert "not yet known" in rows.nth(0).inner_text()
    # One set only, then grade both of its items with the keyboard.
    rows.nth(0).locator('[data-testid="only-pool"]').click()
    assert page.locator('[data-testid="queue"]').count() == 1
    page.click('[data-testid="continue"]')
    for _ in range(2):
        _ready(page)
        before = page.url
        page.keyboard.press("2")
        page.keyboard.press("1")
        page.keyboard.press("c")
        page.wait_for_url(lambda url, before=before: url != before)
    # The first set is done, the second is not: no "every item is complete", and the way on is shown.
    assert "/review/workspace/?end=1" in page.url
    assert page.locator('[data-testid="end"]').count() == 0
    assert "3 items are still open" in page.inner_text('[data-testid="end-of-set"]')
    assert page.inner_text('[data-testid="day-row"] >> nth=0 >> [data-testid="day-estimate"]') == "done"
    revisions = JudgmentRevision.objects.filter(judgment__reviewer=user, status="complete")
    assert revisions.count() == 2
    assert {(r.signin_method, r.signin_issuer) for r in revisions} == {("oidc", sso_on.issuer)}
