"""An admin in chromium: the workload view (counts, reassigning open items) and adjudication's "next
disagreement" walk, with known-answer accuracy shown next to the work."""

from __future__ import annotations

import pytest

from reviewapp.review.agreement.models import Adjudication
from reviewapp.review.assignment.models import Assignment
from reviewapp.review.judgments.models import JudgmentRevision
from reviewapp.review.pools import known_answers
from reviewapp.review.workspace.services import judgment_submit
from tests.browser.conftest import login
from tests.factories import make_user
from tests.helpers import shown_hashes
from tests.reviewapp.review.conftest import make_items, make_pool

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def _grade(item, reviewer, section: int) -> None:
    judgment_submit(item=item, reviewer=reviewer, grades={"section": section, "passage": 1}, complete=True,
                             shown=shown_hashes(item.public_id))


def test_an_admin_reassigns_open_work_and_walks_the_disagreements(page, live_server, django_user_model):
    admin = make_user(django_user_model, "admin_b", "admin", staff=True)
    one = make_user(django_user_model, "rev_one", "reviewer")
    two = make_user(django_user_model, "rev_two", "reviewer")
    three = make_user(django_user_model, "rev_three", "reviewer")
    pool = make_pool(reviewers=[one, two], items=make_items(2, 3))
    items = list(pool.items.order_by("query_id", "doc_id"))
    # Both grade the first four; they disagree on items 0 and 2. Item 3 is a known-answer item (expected 2).
    for n, item in enumerate(items[:4]):
        _grade(item, one, 2)
        _grade(item, two, 3 if n in (0, 2) else 2)
    known_answers.known_answer_set(item=items[3], expected={"section": 2}, by=admin)
    revisions_before = JudgmentRevision.objects.count()

    login(page, live_server, "admin_b", "pw-admin_b")
    page.goto(f"{live_server.url}/review/people/workload/?pool={pool.public_id}")
    row = page.locator('[data-testid="workload-row"][data-reviewer="rev_one"]')
    assert row.locator('[data-testid="complete"]').inner_text() == "4"
    assert "1 of 1 correct" in page.inner_text('[data-testid="reviewer-summary"]')
    # Reassign rev_one's two open items to rev_three.
    row.locator("select[name=to_reviewer]").select_option(label="rev_three")
    row.locator("button", has_text="Reassign").click()
    page.wait_for_selector("text=2 open item(s) moved from rev_one to rev_three")
    assert Assignment.objects.filter(pool=pool, reviewer=three).count() == 2
    assert Assignment.objects.filter(pool=pool, reviewer=one).count() == 4
    three_row = page.locator('[data-testid="workload-row"][data-reviewer="rev_three"]')
    assert three_row.locator("td.num").first.inner_text() == "2"

    # Next disagreement: from the pool page to the first open one, rule, go on, until none is left.
    page.goto(f"{live_server.url}/review/pools/{pool.public_id}/")
    page.click('[data-testid="first-disagreement"]')
    page.wait_for_url(f"**/items/{items[0].public_id}/adjudicate/")
    assert "2 open disagreements in this pool, this one included" in page.inner_text(
        '[data-testid="disagreement-walk"]')
    page.check('input[name="section"][value="3"]')
    page.click('[data-testid="record-and-next"]')
    page.wait_for_url(f"**/items/{items[2].public_id}/adjudicate/")
    assert "1 open disagreement in this pool, this one included" in page.inner_text(
        '[data-testid="disagreement-walk"]')
    page.check('input[name="section"][value="2"]')
    page.click('[data-testid="record-and-next"]')
    page.wait_for_url(f"**/review/pools/{pool.public_id}/#disagreements")
    assert "No open disagreements left" in page.content()
    assert Adjudication.objects.filter(item__pool=pool).count() == 2
    assert JudgmentRevision.objects.count() == revisions_before  # no reviewer's label was written
