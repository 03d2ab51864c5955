"""Adjudicating a clause without colour and without a long walk: lawyer A's and B's highlights differ by a label
read out at their start and by a pattern (WCAG 1.4.1), the ruling is two Tabs and an Enter from the top, the gold
page links straight to the first open disagreement, and neither page scrolls sideways at 390 px or at 400% zoom."""

from __future__ import annotations

import pytest

from tests.browser.site.test_page_crawl import _session_cookie
from tests.factories import make_user
from tests.grading.contracts.gold_support import cuad_fixture_set, label, label_all_as_cuad, lawyer

pytestmark = pytest.mark.browser

_FOCUS = "() => { const el = document.activeElement; return [el.tagName, el.id, el.name || '', el.value || '']; }"
_WHO = """() => Array.from(document.querySelectorAll('[data-testid="gold-text"] mark')).map((m) => ({
  who: m.dataset.who, label: getComputedStyle(m, '::before').content, image: getComputedStyle(m).backgroundImage,
  shadow: getComputedStyle(m).boxShadow, outline: getComputedStyle(m).outlineStyle}))"""


@pytest.fixture
def dispute(django_user_model):
    contract_set, pool = cuad_fixture_set(name="A11y set")
    ann, ben = lawyer("ann"), lawyer("ben")
    label_all_as_cuad(pool, ann, ben)
    item = pool.items.get(source_heading="GAMMA-SUPPLY AGREEMENT", query_id="Anti-Assignment")
    # Overlapping spans: a part only A highlighted, a part both did, a part only B did.
    label(item, ann, 1, [[0, 30]])
    label(item, ben, 1, [[16, 60]])
    admin = make_user(django_user_model, "boss", "admin")
    return contract_set, pool, item, admin


def _page(browser, live_server, user, size):
    ctx = browser.new_context(viewport={"width": size[0], "height": size[1]})
    ctx.add_cookies(_session_cookie(user, live_server))
    page = ctx.new_page()
    page.set_default_timeout(15_000)
    return ctx, page


def test_lawyers_are_told_apart_without_colour_and_the_ruling_is_two_tabs_away(browser, live_server, dispute):
    contract_set, pool, item, admin = dispute
    url = f"{live_server.url}/cuad/contracts/{contract_set.pk}/gold/adjudicate/{pool.public_id}/{item.public_id}/"
    ctx, page = _page(browser, live_server, admin, (1440, 900))
    try:
        page.goto(url)
        marks = {m["who"]: m for m in page.evaluate(_WHO)}
        assert {"A", "A+B", "B"} <= set(marks), marks
        # a label read out and shown at the start of each part
        assert [marks[w]["label"] for w in ("A", "A+B", "B")] == ['"[A] "', '"[A+B] "', '"[B] "']
        # and a pattern besides the colour: A underlined, B striped with a dashed outline
        assert "inset" in marks["A"]["shadow"] and marks["A"]["image"] == "none"
        assert "repeating-linear-gradient" in marks["B"]["image"] and marks["B"]["outline"] == "dashed"
        assert "repeating-linear-gradient" in marks["A+B"]["image"] and "inset" in marks["A+B"]["shadow"]

        # Tab (skip to the content), Tab (skip to the ruling), Enter, Tab: the first choice of the ruling.
        page.keyboard.press("Tab")
        page.keyboard.press("Tab")
        assert page.evaluate("() => document.activeElement.dataset.testid") == "skip-to-ruling"
        page.keyboard.press("Enter")
        page.keyboard.press("Tab")
        tag, _, name, value = page.evaluate(_FOCUS)
        assert (tag, name, value) == ("INPUT", "ruling", "lawyer-A")

        # The gold page: its first Tab stop after "skip to the content" goes to the first open disagreement.
        page.goto(f"{live_server.url}/cuad/contracts/{contract_set.pk}/gold/")
        page.keyboard.press("Tab")
        page.keyboard.press("Tab")
        assert page.evaluate("() => document.activeElement.dataset.testid") == "skip-to-open"
        page.keyboard.press("Enter")
        page.keyboard.press("Enter")  # the first "adjudicate" link has focus
        page.wait_for_url(f"**/gold/adjudicate/{pool.public_id}/**")
    finally:
        ctx.close()

    for size in ((390, 844), (320, 256)):
        ctx, page = _page(browser, live_server, admin, size)
        try:
            for path in (url, f"{live_server.url}/cuad/contracts/{contract_set.pk}/gold/"):
                page.goto(path)
                width = page.evaluate("() => [document.documentElement.scrollWidth, window.innerWidth]")
                assert width[0] <= width[1], (path, size, width)
        finally:
            ctx.close()
