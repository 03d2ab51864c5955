"""Target confirmation in headless chromium: an admin sends a suite's two provisional targets to two lawyers,
each confirms them blind on the review page, the admin freezes the confirmed version, and its report says
"confirmed by 2 lawyers" where the first version's said "provisional"."""

from __future__ import annotations

import re

import pytest
from playwright.sync_api import expect

from benchmarks.retrieval.services import retrieval_run_create
from benchmarks.suites.models import NominatedTarget, Suite
from reviewapp.review.assignment.models import Assignment
from reviewapp.review.judgments.models import JudgmentRevision
from tests.benchmarks.suites.confirmation_fixtures import NOMINATOR, SECTIONS, confirm_suite
from tests.browser.conftest import login
from tests.factories import make_user

pytestmark = pytest.mark.browser


def _population(page, live_server, suite: Suite) -> str:
    run = retrieval_run_create(suite=suite, configuration="bm25-v1")
    page.goto(f"{live_server.url}/benchmarks/reports/retrieval/{run.pk}/?replicates=1000")
    return page.inner_text("#population")


def test_two_lawyers_confirm_two_provisional_targets_and_the_report_caveat_changes(browser, page, live_server,
                                                                                  transactional_db,
                                                                                  django_user_model):
    make_user(django_user_model, "conf_admin", "admin")
    lawyers = [make_user(django_user_model, name, "reviewer") for name in ("conf_lena", "conf_lars")]
    suite = confirm_suite()
    login(page, live_server, "conf_admin", "pw-conf_admin")
    page.wait_for_selector('[data-testid="roles"]')
    assert "all provisional" in _population(page, live_server, suite)

    page.goto(f"{live_server.url}/benchmarks/suites/{suite.pk}/")
    expect(page.locator('[data-testid="confirmation-counts"]')).to_contain_text("2 provisional targets")
    page.click('[data-testid="confirmation-declare"]')
    expect(page.locator(".messages")).to_contain_text("2 items in 1 new confirmation pools")

    bodies = {f"NRS {number}": text for number, _, text in SECTIONS}
    for lawyer in lawyers:
        context = browser.new_context()
        own = context.new_page()
        own.set_default_timeout(15_000)
        login(own, live_server, lawyer.username, "pw-" + lawyer.username)
        own.wait_for_selector('[data-testid="roles"]')
        items = dict(Assignment.objects.filter(reviewer=lawyer).values_list("item__public_id", "item__doc_id"))
        assert len(items) == 2
        for item_id, citation in items.items():
            own.goto(f"{live_server.url}/review/workspace/items/{item_id}/")
            text = own.inner_text("body")
            assert bodies[citation] in text and NOMINATOR not in own.content() and "nominat" not in own.content()
            expect(own.locator('#propose-target')).to_be_visible()
            own.check('input[name="target"][data-key="y"]')
            # Completing moves straight on to the next open item: wait for that page before going elsewhere.
            with own.expect_navigation():
                own.click('[data-action="complete"]')
        context.close()
        assert set(JudgmentRevision.objects.filter(judgment__reviewer=lawyer, status="complete")
                   .values_list("grades__target", flat=True)) == {1}

    page.goto(f"{live_server.url}/benchmarks/suites/{suite.pk}/")
    expect(page.locator('[data-testid="confirmation-counts"]')).to_contain_text("2 confirmed")
    page.click('[data-testid="confirmation-new-version"]')
    confirmed = Suite.objects.get(name=suite.name, version=2)
    expect(page).to_have_url(re.compile(rf"/benchmarks/suites/{confirmed.pk}/$"))
    expect(page.locator('[data-testid="confirmed"]')).to_have_count(2)
    expect(page.locator('[data-testid="confirmed"]').first).to_have_text("confirmed by 2 lawyers")
    assert set(NominatedTarget.objects.filter(query__suite=confirmed).values_list("provisional", flat=True)) == {False}

    population = _population(page, live_server, confirmed)
    assert "all confirmed by 2 lawyers" in population and "provisional" not in population
