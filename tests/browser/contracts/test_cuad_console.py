"""CUAD console in headless chromium: live regrade, locate a quote in its contract, a pasted invalid run's error."""

from __future__ import annotations

import json

import pytest
from django.contrib.auth.models import Group

from grading.dataset.models import Contract
from reviewapp.core.auth.roles import ensure_role_groups
from tests.browser.conftest import login
from tests.grading.console_support import FABRICATED, load

pytestmark = pytest.mark.browser
PASSWORD = "a-long-pass-phrase"


def _user(django_user_model, role: str):
    ensure_role_groups()
    user = django_user_model.objects.create_user(username=f"cuad_{role}", password=PASSWORD)
    user.groups.add(Group.objects.get(name=role))
    return user


@pytest.fixture
def loaded(transactional_db, tmp_path):
    return load(tmp_path)


def test_changing_a_threshold_changes_the_scorecard_in_place(page, live_server, django_user_model, loaded):
    _user(django_user_model, "stakeholder")
    login(page, live_server, "cuad_stakeholder", PASSWORD)
    page.goto(f"{live_server.url}/cuad/scorecard/?run={loaded.noisy.pk}")
    headline = page.locator('[data-testid="headline-f1"]')
    before = headline.inner_text()
    page.evaluate("window.__marker = 1")  # survives only if the page is not reloaded
    page.fill('[data-testid="th-partial"]', "0.1")
    page.fill('[data-testid="th-correct"]', "0.2")
    page.wait_for_function(
        "(before) => { const h = document.querySelector('[data-testid=headline-f1]');"
        " return h && h.innerText !== before && document.location.search.includes('correct=0.2'); }",
        arg=before,
    )
    assert headline.inner_text() != before
    assert page.evaluate("window.__marker") == 1
    assert "correct=0.2" in page.url  # the URL follows, so the view can be shared
    # an absurd value is refused with a message where the figures were
    page.fill('[data-testid="th-partial"]', "0.9")
    page.wait_for_selector('[data-testid="errors"]')
    assert "partial floor 0.9 is above the correct threshold 0.2" in page.inner_text('[data-testid="errors"]')
    # values a number box would have blocked in the browser (so htmx sent nothing and the old figures stayed)
    page.fill('[data-testid="th-correct"]', "7")
    page.wait_for_function(
        "() => { const e = document.querySelector('[data-testid=errors]');"
        " return e && e.innerText.includes('correct: 7 is outside [0, 1]'); }"
    )
    assert page.locator('[data-testid="headline-f1"]').count() == 0
    page.fill('[data-testid="th-correct"]', "0.2")
    page.fill('[data-testid="th-partial"]', "")
    page.wait_for_function(
        "() => { const e = document.querySelector('[data-testid=errors]');"
        " return e && e.innerText.includes('partial: the box is empty'); }"
    )
    # the matcher switch and comparison also update in place
    page.fill('[data-testid="th-partial"]', "0.1")
    page.wait_for_selector('[data-testid="headline-f1"]')
    page.check(f'[data-testid="compare-{loaded.gold.pk}"]')
    page.wait_for_selector('[data-testid="comparison"]')
    assert page.evaluate("window.__marker") == 1


def test_clicking_a_quote_scrolls_the_contract_to_it_and_highlights_it(page, live_server, django_user_model, loaded):
    _user(django_user_model, "stakeholder")
    login(page, live_server, "cuad_stakeholder", PASSWORD)
    alpha = Contract.objects.get(title="ALPHA-DISTRIBUTOR AGREEMENT")
    page.goto(f"{live_server.url}/cuad/scorecard/explorer/?run={loaded.noisy.pk}&type=Governing+Law&contract={alpha.pk}")
    span = page.locator('[data-testid="span"]').first
    span_text = span.locator(".body").inner_text()
    span.click()
    mark = page.locator('[data-testid="located"]')
    mark.wait_for()
    assert mark.inner_text() == span_text
    assert mark.is_visible()
    # a fabricated quote is shown as found nowhere, and clicking it says so
    nowhere = page.locator('[data-testid="extraction"].nowhere')
    assert FABRICATED in nowhere.inner_text()
    nowhere.click()
    assert "found nowhere in the contract" in page.inner_text('[data-testid="locate-status"]')
    assert page.locator('[data-testid="located"]').count() == 0


def test_pasting_an_invalid_run_shows_the_error_and_saves_nothing(page, live_server, django_user_model, loaded):
    from grading.runs.models import ExtractionRun

    _user(django_user_model, "admin")
    login(page, live_server, "cuad_admin", PASSWORD)
    page.goto(f"{live_server.url}/cuad/runs/")
    before = ExtractionRun.objects.count()
    bad = {"model": "m", "extractions": [{"contract": "NO SUCH CONTRACT", "category": "Governing Law", "text": "x"}]}
    page.fill("#run_text", json.dumps(bad))
    page.click('[data-testid="paste-submit"]')
    errors = page.locator('[data-testid="paste-errors"]')
    errors.wait_for()
    assert "extractions[0], field 'contract': unknown contract 'NO SUCH CONTRACT'" in errors.inner_text()
    assert json.loads(page.input_value("#run_text")) == bad  # the text is kept for fixing
    assert ExtractionRun.objects.count() == before


def test_the_playground_recomputes_as_you_type(page, live_server, django_user_model, loaded, settings):
    _user(django_user_model, "stakeholder")
    login(page, live_server, "cuad_stakeholder", PASSWORD)
    page.goto(f"{live_server.url}/cuad/scorecard/playground/")
    page.fill('[data-testid="pg-a"]', "governed by Nevada law")
    page.fill('[data-testid="pg-b"]', "Nevada law governs")
    page.wait_for_function("() => document.querySelector('[data-testid=f1]').innerText === '0.571'")
    assert page.locator('[data-testid="a-marked"] mark').count() == 2

    # a 70,000-character contract: sent by POST (by GET it was "414 Request-URI Too Long")
    contract = " ".join(f"{i}. The Licensee shall pay the royalty of clause {i} on time." for i in range(1, 1400))
    contract = contract[:70_000]
    assert len(contract) == 70_000
    page.fill('[data-testid="pg-claim"]', "the royalty of clause 777 on time")
    page.fill('[data-testid="pg-source"]', contract)
    page.wait_for_function(
        "() => { const g = document.querySelector('[data-testid=grounding]');"
        " return g && g.innerText.includes('verbatim in the source'); }"
    )
    assert page.inner_text('[data-testid="grounding-value"]') == "1.000"

    # two empty boxes: no tokens, not a perfect F1
    page.fill('[data-testid="pg-a"]', "")
    page.fill('[data-testid="pg-b"]', "")
    page.wait_for_function("() => document.querySelector('[data-testid=f1]').innerText === 'no tokens'")
    assert "0/0" not in page.inner_text('[data-testid="overlap"]')

    # a request the server refuses (here: a body over the upload limit, answered 400 by Django itself) clears the
    # previous figures instead of leaving them on the page
    settings.DATA_UPLOAD_MAX_MEMORY_SIZE = 100_000
    page.fill('[data-testid="pg-source"]', contract + contract)
    page.locator('[data-testid="pg-error"]').wait_for()
    assert "HTTP 400" in page.inner_text('[data-testid="grounding"]')
    assert page.locator('[data-testid="grounding-value"]').count() == 0
