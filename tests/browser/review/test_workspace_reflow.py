"""The workspace on any screen: no sideways scrolling at 390 px (a phone) or at 1280 px / 400% zoom (320 x 256 CSS
px), for a passage item and for a clause item (the page crawl's world has no clause pool); on a phone the actions
stay in view at the bottom; on a touch screen the words name touches, not keys."""

from __future__ import annotations

import pytest

from tests.browser.review.test_review_workspace import _queue
from tests.browser.site.test_page_crawl import _session_cookie
from tests.grading.contracts.labelling_support import item_of, labelling_pool
from tests.reviewapp.review.conftest import make_items, make_pool

pytestmark = pytest.mark.browser

SIZES = {"phone": (390, 844), "zoom 400%": (320, 256)}
# A contract whose lines are long: the text must wrap inside the screen, never widen the page.
WIDE = (b"MASTER AGREEMENT\n\n" + b"1. " + b"The Supplier shall deliver the goods described in the Schedules " * 40
        + b"\n\n2. Governing Law. This Agreement is governed by the laws of the State of Nevada.\n")

_WIDTHS = """() => ({viewport: window.innerWidth, doc: document.documentElement.scrollWidth,
  wide: Array.from(document.body.querySelectorAll('*')).filter((el) => el.getBoundingClientRect().right >
    window.innerWidth + 1 && el.offsetParent !== null).slice(0, 5).map((el) => el.tagName + '.' + el.className)})"""


def _open(browser, live_server, user, path: str, size: tuple[int, int], **context):
    ctx = browser.new_context(viewport={"width": size[0], "height": size[1]}, **context)
    ctx.add_cookies(_session_cookie(user, live_server))
    page = ctx.new_page()
    page.set_default_timeout(15_000)
    page.goto(live_server.url + path)
    page.wait_for_load_state("load")
    return ctx, page


def _no_sideways_scroll(page, what: str) -> None:
    m = page.evaluate(_WIDTHS)
    assert m["doc"] <= m["viewport"], f"{what}: {m['doc']} px wide in {m['viewport']} px ({m['wide']})"


def test_both_item_kinds_reflow_at_390_px_and_at_400_percent_zoom(browser, live_server, reviewer_user,
                                                                    reviewer2_user):
    make_pool(reviewers=[reviewer_user, reviewer2_user], items=make_items(n_queries=1, per_query=2))
    passage = _queue(reviewer_user)[0]
    clause = item_of(labelling_pool(reviewers=[reviewer_user, reviewer2_user], contract=WIDE), "Governing Law")
    for name, size in SIZES.items():
        for path in (f"/review/workspace/items/{passage}/", f"/review/workspace/items/{clause.public_id}/"):
            ctx, page = _open(browser, live_server, reviewer_user, path, size)
            try:
                page.wait_for_selector("#judgment")
                _no_sideways_scroll(page, f"{path} at {name}")
                # the keys dialog too
                page.keyboard.press("?")
                page.wait_for_selector('[data-testid="keys-help"]', state="visible")
                _no_sideways_scroll(page, f"{path} keys dialog at {name}")
            finally:
                ctx.close()


def test_on_a_phone_the_actions_stay_in_view_and_touch_words_replace_keys(browser, live_server, reviewer_user,
                                                                            reviewer2_user):
    clause = item_of(labelling_pool(reviewers=[reviewer_user, reviewer2_user], contract=WIDE), "Governing Law")
    path = f"/review/workspace/items/{clause.public_id}/"

    # A phone with a keyboard-less touch screen: the bar with "Highlight the selection" is on screen at the top
    # of the contract, and nothing says "press h".
    ctx, page = _open(browser, live_server, reviewer_user, path, SIZES["phone"], has_touch=True, is_mobile=True)
    try:
        page.wait_for_selector("body[data-spans-ready]", state="attached")
        box = page.locator('[data-testid="add-span"]').bounding_box()
        assert box is not None and box["y"] >= 0 and box["y"] + box["height"] <= SIZES["phone"][1], box
        complete = page.locator('#judgment button[data-action="complete"]').bounding_box()
        assert complete is not None and complete["y"] + complete["height"] <= SIZES["phone"][1]
        assert page.inner_text('[data-testid="add-span"]') == "Highlight the selection"
        assert page.inner_text('#judgment button[data-action="complete"]') == "Mark complete"
        hints = page.inner_text('[data-testid="text-keys"]')
        assert "Touch and hold" in hints and "Shift" not in hints
        assert "tap Highlight the selection" in page.inner_text('[data-testid="span-list"]')
        assert not page.is_visible(".keys-button")
        _no_sideways_scroll(page, "the clause item on a touch phone")
    finally:
        ctx.close()

    # The same page with a mouse and a keyboard names the keys.
    ctx, page = _open(browser, live_server, reviewer_user, path, (1280, 900))
    try:
        page.wait_for_selector("body[data-spans-ready]", state="attached")
        assert page.inner_text('[data-testid="add-span"]') == "Highlight the selection (h)"
        assert "Shift" in page.inner_text('[data-testid="text-keys"]')
        assert "press h" in page.inner_text('[data-testid="span-list"]')
    finally:
        ctx.close()
