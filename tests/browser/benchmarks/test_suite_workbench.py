"""The suite workbench in headless chromium, on the real NRS chapters: write a suite from scratch, nominate a
target found by the corpus search, freeze it, and get the hash that importing its exported files gives."""

from __future__ import annotations

import pytest
from playwright.sync_api import expect

from benchmarks.suites.files import suite_load
from benchmarks.suites.models import Suite, SuiteDraft
from benchmarks.suites.services import suite_check, suite_import
from tests.browser.conftest import login
from tests.factories import make_user

pytestmark = pytest.mark.browser
# Counts completed htmx swaps, so a step waits for the server's answer to be in the page before the next one.
_SETTLED = "window.__settled = 0; document.addEventListener('htmx:afterSettle', () => { window.__settled += 1; });"
QUESTION = "When may a police officer take a child into protective custody without a court order?"


def _swap(page, action) -> None:
    """Do ``action`` (a click that issues an htmx request) and wait until its answer is swapped in."""
    before = page.evaluate("window.__settled")
    action()
    page.wait_for_function("(n) => window.__settled > n", arg=before)


@pytest.fixture
def nrs_imported(transactional_db, data_dir):
    """The real NRS chapters (as tests/benchmarks/conftest.py imports them), committed for the live server."""
    from benchmarks.corpus.services import statutes_import

    return statutes_import(fmt="nrs-html", paths=[data_dir / "statutes" / "nrs"])


def test_a_suite_written_in_the_browser_freezes_to_the_hash_of_its_exported_files(page, live_server,
                                                                                   django_user_model, nrs_imported):
    make_user(django_user_model, "wb_browser_admin", "admin")
    problems: list[str] = []
    page.on("pageerror", lambda error: problems.append(f"page error: {error}"))
    # A failed load is recorded from its response (with its URL); the browser's own favicon probe is not ours.
    page.on("console", lambda m: problems.append(m.text)
            if m.type == "error" and not m.text.startswith("Failed to load resource") else None)
    page.on("response", lambda r: problems.append(f"{r.status} {r.url}")
            if r.status >= 400 and not r.url.endswith("/favicon.ico") else None)
    page.add_init_script(_SETTLED)
    login(page, live_server, "wb_browser_admin", "pw-wb_browser_admin")

    page.goto(f"{live_server.url}/benchmarks/suites/workbench/")
    page.fill('[data-testid="new-name"]', "browser_suite")
    page.select_option('[data-testid="new-corpus"]', "nrs")
    page.click('[data-testid="new-draft"]')
    draft = SuiteDraft.objects.get(document__name="browser_suite")
    expect(page).to_have_url(f"{live_server.url}/benchmarks/suites/workbench/{draft.pk}/")
    page.evaluate("window.__marker = 1")  # survives only while edits update the page in place

    page.fill('[data-testid="suite-description"]', "Written in the browser test")
    page.select_option('[data-testid="suite-synthetic"]', "true")
    _swap(page, lambda: page.click('[data-testid="suite-save"]'))
    expect(page.locator('[data-testid="suite-synthetic"]')).to_have_value("true")

    page.fill('[data-testid="family-id"]', "custody")
    page.select_option('[data-testid="family-split"]', "dev")
    _swap(page, lambda: page.click('[data-testid="family-add"]'))
    expect(page.locator('[data-testid="family-custody"]')).to_be_visible()

    page.fill('[data-testid="query-id"]', "dev-01")
    page.select_option('[data-testid="query-kind"]', "ranking")
    _swap(page, lambda: page.click('[data-testid="query-add"]'))
    card = page.locator('[data-testid="query-dev-01"]')
    card.locator('[data-testid="q-split"]').select_option("dev")
    card.locator('[data-testid="q-family"]').select_option("custody")
    card.locator('[data-testid="q-text"]').fill(QUESTION)
    _swap(page, lambda: card.locator('[data-testid="q-save"]').click())
    # the live check names the query and the field that still stops the freeze
    expect(page.locator('[data-testid="problems"]')).to_contain_text(
        "dev-01: targets: a ranking query needs at least one nominated target")
    expect(page.locator('[data-testid="freeze"]')).to_be_disabled()

    # search the corpus for this query, read a provision, nominate it in one click
    _swap(page, lambda: card.locator('[data-testid="find-targets"]').click())
    panel = page.locator('[data-testid="search-panel"]')
    expect(panel.locator('[data-testid="nominating-for"]')).to_contain_text("dev-01")
    panel.locator('[data-testid="search-text"]').fill("protective custody")
    _swap(page, lambda: panel.locator('[data-testid="search"]').click())
    result = panel.locator('[data-testid="result"][data-citation="NRS 432B.390"]')
    _swap(page, lambda: result.locator('[data-testid="read"]').click())
    expect(panel.locator('[data-testid="reading"]')).to_contain_text("NRS 432B.390")
    _swap(page, lambda: result.locator('[data-testid="nominate"]').click())
    expect(card.locator('[data-testid="target"]')).to_contain_text("NRS 432B.390")
    expect(result.locator('[data-testid="nominated"]')).to_contain_text("target of dev-01")

    # controls: one outside the corpus, one exact citation written as a lawyer writes it
    for qid, kind, text in (("oc-01", "outside_corpus", "What notice does a summary eviction need?"),
                            ("ec-01", "exact_citation", "N.R.S. 432B.220")):
        page.fill('[data-testid="query-id"]', qid)
        page.select_option('[data-testid="query-kind"]', kind)
        _swap(page, lambda: page.click('[data-testid="query-add"]'))
        control = page.locator(f'[data-testid="query-{qid}"]')
        control.locator('[data-testid="q-text"]').fill(text)
        if kind == "exact_citation":
            control.locator('[data-testid="q-expected"]').fill("Nev. Rev. Stat. § 432B.220")
        _swap(page, control.locator('[data-testid="q-save"]').click)
        expect(control.locator('[data-testid="q-text"]')).to_have_value(text)

    expect(page.locator('[data-testid="ready"]')).to_be_visible()
    would_be = page.locator('[data-testid="would-be-sha256"]').inner_text()
    assert page.evaluate("window.__marker") == 1  # every edit above updated the page in place

    page.click('[data-testid="freeze"]')
    suite = Suite.objects.get(name="browser_suite", version=1)
    expect(page).to_have_url(f"{live_server.url}/benchmarks/suites/{suite.pk}/")
    shown = page.locator('[data-testid="suite-sha256"]').inner_text()
    assert shown == suite.sha256 == would_be

    for fmt in ("json", "yaml"):
        href = page.locator(f'[data-testid="export-{fmt}"]').get_attribute("href")
        exported = page.request.get(f"{live_server.url}{href}")
        assert exported.ok
        definition, digest = suite_check(data=suite_load(exported.body(), filename=f"browser_suite.{fmt}"))
        assert digest == suite.sha256, fmt
        assert suite_import(raw=exported.body(), filename=f"browser_suite.{fmt}") == (suite, False)
    assert definition["queries"][0]["targets"][0]["citation"] == "NRS 432B.390"
    assert definition["queries"][2]["expected_citation"] == "NRS 432B.220"

    # the draft is read-only now and points at its suite
    page.goto(f"{live_server.url}/benchmarks/suites/workbench/{draft.pk}/")
    expect(page.locator('[data-testid="frozen-suite"]')).to_have_text("browser_suite v1")
    assert page.locator('[data-testid="freeze"]').count() == 0
    assert page.locator('[data-testid="q-save"]').count() == 0
    assert problems == []
