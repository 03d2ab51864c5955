"""A lawyer labels a long contract blind in headless chromium: search in the document, grow the match to its
sentence, highlight, mark complete, reload and find the span again; a second category marked absent. Prints what it
took (keys, clicks) and how long a 338k-character contract took to open (server and browser), without asserting
either."""

from __future__ import annotations

import time

import pytest

from reviewapp.review.judgments.models import Judgment, ReviewItem
from tests.browser.conftest import login
from tests.browser.site.test_content_security_policy import Watch
from tests.grading.contracts.labelling_support import labelling_pool

pytestmark = pytest.mark.browser

CLAUSE = "This Agreement is governed by the laws of the State of Nevada, without regard to its conflict rules."
QUERY = "State of Nevada"


def _long_contract() -> bytes:
    """About the longest CUAD contract (338,211 characters): numbered sections, the clause two thirds down."""
    lines, n = [], 0
    while sum(len(line) + 1 for line in lines) < 338_000:
        n += 1
        lines.append(f"{n}.{n % 7} The Supplier shall deliver the goods described in Schedule {n} to the "
                     f"Purchaser's premises at the times agreed in writing between the parties, clause {n}.")
        if n == 1600:
            lines.append(CLAUSE)
    return ("MASTER SUPPLY AGREEMENT\n" + "\n".join(lines) + "\n").encode()


# Selects characters [start, end) of the stored text in the page, as a drag of the mouse over them would (the
# contract gold flow's lawyers use the mouse).
_SELECT = """([start, end]) => {
  function point(offset) {
    const chunks = Array.from(document.querySelectorAll('#contract-text .chunk'));
    const chunk = chunks.filter((c) => Number(c.dataset.offset) <= offset).pop();
    let left = offset - Number(chunk.dataset.offset);
    const walker = document.createTreeWalker(chunk, NodeFilter.SHOW_TEXT);
    for (let node = walker.nextNode(); node; node = walker.nextNode()) {
      if (left <= node.data.length) return [node, left];
      left -= node.data.length;
    }
  }
  const range = document.createRange();
  range.setStart(...point(start));
  range.setEnd(...point(end));
  const selection = window.getSelection();
  selection.removeAllRanges();
  selection.addRange(range);
}"""


def _print_timing(page, what: str, wall_ms: float) -> None:
    timing = page.evaluate("""() => { const n = performance.getEntriesByType('navigation')[0];
        return {server: n.responseStart - n.requestStart, html: n.responseEnd - n.requestStart,
                dom: n.domContentLoadedEventEnd, ready: Number(document.body.dataset.spansReady),
                build: Number(document.body.dataset.spansBuildMs),
                bytes: n.transferSize, chunks: document.querySelectorAll('#contract-text .chunk').length}; }""")
    print(f"\n{what}: server {timing['server']:.0f} ms, HTML received {timing['html']:.0f} ms, "
          f"DOMContentLoaded {timing['dom']:.0f} ms, ready to label {timing['ready']} ms (the script: "
          f"{timing['build']} ms), wall {wall_ms:.0f} ms, "
          f"{timing['bytes']} bytes, {timing['chunks']} chunks")


def _ready(page) -> None:
    page.wait_for_selector("body[data-spans-ready]", state="attached")


def test_a_lawyer_highlights_a_clause_in_a_long_contract_and_marks_another_category_absent(
        page, live_server, reviewer_user, reviewer2_user):
    pool = labelling_pool(reviewers=[reviewer_user, reviewer2_user], contract=_long_contract(), filename="msa.txt")
    law = ReviewItem.objects.get(pool=pool, query_id="Governing Law")
    compete = ReviewItem.objects.get(pool=pool, query_id="Non-Compete")
    text = law.source_text
    watch = Watch(page, live_server.url)  # no CSP violation, script error or off-site request
    login(page, live_server, reviewer_user.username, "pw-" + reviewer_user.username)
    page.wait_for_selector('[data-testid="roles"]')

    # Open the Governing Law item (the queue's order is the reviewer's own shuffle; go to it directly).
    started = time.perf_counter()
    page.goto(f"{live_server.url}/review/workspace/items/{law.public_id}/")
    _ready(page)
    wall_ms = (time.perf_counter() - started) * 1000
    _print_timing(page, f"338k-character contract ({len(text)} chars), first open", wall_ms)
    assert page.eval_on_selector("#contract-text", "el => el.textContent") == text  # the DOM holds the stored text

    keys = clicks = 0
    page.keyboard.press("/")
    keys += 1
    page.keyboard.type(QUERY)
    keys += len(QUERY)
    page.keyboard.press("Enter")  # goes to the match and selects it
    keys += 1
    assert page.inner_text('[data-testid="search-count"]').startswith("1 of 1")
    assert page.eval_on_selector("mark.hit", "el => el.textContent") == QUERY
    page.keyboard.press("Escape")  # back to the text, the match still selected
    page.keyboard.press("x")  # grown to its sentence: the whole clause
    keys += 2
    start = text.index(CLAUSE)
    selected = page.eval_on_selector_all("#contract-text .kbd-sel", "els => els.map((e) => e.textContent).join('')")
    assert selected == CLAUSE
    # The key h, dispatched in the page to time the highlight itself (synchronous: marks, list, hidden field).
    highlight_ms = page.evaluate("""() => { const t = performance.now();
        document.getElementById('contract-text').dispatchEvent(new KeyboardEvent('keydown', {key: 'h', bubbles: true}));
        return performance.now() - t; }""")
    keys += 1
    print(f"highlighting the selection took {highlight_ms:.1f} ms in the page")
    page.wait_for_selector('[data-testid="span-list"] li[data-start]')
    assert page.eval_on_selector_all("mark.span-mark", "els => els.map((e) => e.textContent).join('')") == CLAUSE
    page.keyboard.press("c")
    keys += 1
    page.wait_for_url(lambda url: law.public_id not in url)
    present = (keys, clicks)

    # Auto-advanced to the next open item: Non-Compete, marked absent.
    _ready(page)
    assert compete.public_id in page.url
    keys = clicks = 0
    page.keyboard.press("a")
    page.keyboard.press("c")
    keys += 2
    page.wait_for_url(lambda url: compete.public_id not in url)
    absent = (keys, clicks)
    print(f"present with one span: {present[0]} keystrokes ({len(QUERY)} of them the search words) + {present[1]} "
          f"clicks; absent: {absent[0]} keystrokes")

    page.goto(f"{live_server.url}/review/workspace/items/{law.public_id}/")
    _ready(page)
    started = time.perf_counter()
    page.reload()
    _ready(page)
    _print_timing(page, "the same, reloaded", (time.perf_counter() - started) * 1000)
    assert page.get_attribute('[data-testid="span-list"] li[data-start]', "data-start") == str(start)
    assert "line 1602" in page.inner_text('[data-testid="span-list"]')
    assert page.eval_on_selector_all("mark.span-mark", "els => els.map((e) => e.textContent).join('')") == CLAUSE
    assert "Complete" in page.inner_text('[data-testid="status"]')

    law_rev = Judgment.objects.get(item=law, reviewer=reviewer_user).current
    compete_rev = Judgment.objects.get(item=compete, reviewer=reviewer_user).current
    assert (law_rev.status, law_rev.grades, law_rev.spans) == ("complete", {"presence": 1},
                                                               [[start, start + len(CLAUSE)]])
    assert (compete_rev.status, compete_rev.grades, compete_rev.spans) == ("complete", {"presence": 0}, [])
    assert law_rev.source_hash == law.source_hash
    watch.check("the span workspace")
