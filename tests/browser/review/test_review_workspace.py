"""The reviewer's workspace in headless chromium: nothing typed is lost, the passage is highlighted in its section,
undo, the "?" list, auto-advance, skip, and the queue's filters and search.

Screenshots of the workspace go to ``$SCREENSHOT_DIR`` (docs/ in the repository) when that variable is set.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

import pytest

from reviewapp.review.judgments.models import JudgmentRevision
from reviewapp.review.workspace.queue import reviewer_queues
from tests.browser.conftest import login
from tests.reviewapp.review.conftest import assert_blind, make_items, make_pool

pytestmark = pytest.mark.browser

_HTMX_READY = (
    "() => { const f = document.getElementById('judgment');"
    " return !!(window.htmx && f && f['htmx-internal-data']"
    " && !document.querySelector('.htmx-settling, .htmx-request')); }"
)


def _ready(page) -> None:
    page.wait_for_function(_HTMX_READY)


def _item_url(live_server, item_id: str) -> str:
    return f"{live_server.url}/review/workspace/items/{item_id}/"


def _queue(reviewer) -> list[str]:
    return [entry.item_id for entry in reviewer_queues(reviewer=reviewer)[0].entries]


def _checked(page, grade_type: str) -> str | None:
    return page.eval_on_selector_all(f'#judgment input[name="{grade_type}"]:checked', "els => els.length ? "
                                     "els[0].dataset.key : null")


def _start(page, live_server, reviewer, item_id: str) -> None:
    login(page, live_server, reviewer.username, "pw-" + reviewer.username)
    page.wait_for_selector('[data-testid="roles"]')
    page.goto(_item_url(live_server, item_id))
    _ready(page)


def _revisions(reviewer, item_id: str) -> list[JudgmentRevision]:
    return list(JudgmentRevision.objects.filter(judgment__reviewer=reviewer, judgment__item__public_id=item_id)
                .order_by("number"))


def test_grades_survive_navigation_reload_and_a_refused_submit(page, live_server, reviewer_user, reviewer2_user):
    make_pool(reviewers=[reviewer_user, reviewer2_user], items=make_items(n_queries=1, per_query=3))
    ids = _queue(reviewer_user)
    _start(page, live_server, reviewer_user, ids[0])

    # 2, 2, then straight on with j: the change is saved before the page is left.
    page.keyboard.press("2")
    page.keyboard.press("2")
    page.keyboard.press("j")
    page.wait_for_url(re.compile(rf"/review/workspace/items/{re.escape(ids[1])}/$"))
    assert [(r.status, r.grades) for r in _revisions(reviewer_user, ids[0])] == [
        ("draft", {"section": 2, "passage": 2})]
    _ready(page)
    page.keyboard.press("k")
    page.wait_for_url(re.compile(rf"/review/workspace/items/{re.escape(ids[0])}/$"))
    assert (_checked(page, "section"), _checked(page, "passage")) == ("2", "2")
    assert "revision 1 (draft)" in page.inner_text('[data-testid="status"]')

    # A reload keeps them too (they are saved, so leaving asks nothing).
    page.reload()
    _ready(page)
    assert (_checked(page, "section"), _checked(page, "passage")) == ("2", "2")

    # A refused "complete" (the passage grade missing) keeps every field, the note included.
    page.goto(_item_url(live_server, ids[2]))
    _ready(page)
    page.keyboard.press("1")
    page.fill('#judgment textarea[name="note"]', "sub (2) applies only to tenants; check")
    page.keyboard.press("Escape")
    with page.expect_response(lambda r: r.request.method == "POST" and "/review/workspace/items/" in r.url
                              and r.request.post_data and "action=complete" in r.request.post_data):
        page.click('#judgment button[data-action="complete"]')
    page.wait_for_selector('[data-testid="error"]:has-text("cannot mark complete")')
    assert _checked(page, "section") == "1" and _checked(page, "passage") is None
    assert page.input_value('#judgment textarea[name="note"]') == "sub (2) applies only to tenants; check"
    assert all(r.status == "draft" for r in _revisions(reviewer_user, ids[2]))


def test_drafts_save_themselves_and_the_status_line_tells_the_truth(page, live_server, reviewer_user,
                                                                     reviewer2_user):
    make_pool(reviewers=[reviewer_user, reviewer2_user], items=make_items(n_queries=1, per_query=2))
    ids = _queue(reviewer_user)
    _start(page, live_server, reviewer_user, ids[0])
    assert page.inner_text('[data-testid="status"]') == "Nothing saved yet"

    page.keyboard.press("1")
    assert page.inner_text('[data-testid="status"]') in ("Unsaved changes", "Saving…")
    # A change not yet saved makes leaving the page ask first.
    assert page.evaluate("() => { const e = new Event('beforeunload', {cancelable: true});"
                         " window.dispatchEvent(e); return e.defaultPrevented; }")
    page.keyboard.press("3")
    page.wait_for_selector('[data-testid="status"]:has-text("revision 1 (draft)")')
    assert re.fullmatch(r"Saved at \d\d:\d\d, revision 1 \(draft\)", page.inner_text('[data-testid="status"]'))
    assert [(r.status, r.grades) for r in _revisions(reviewer_user, ids[0])] == [
        ("draft", {"section": 1, "passage": 3})]
    assert not page.evaluate("() => { const e = new Event('beforeunload', {cancelable: true});"
                             " window.dispatchEvent(e); return e.defaultPrevented; }")

    # The note saves itself too; a second autosave is a second revision.
    page.fill('#judgment textarea[name="note"]', "exception in sub (3)")
    page.wait_for_selector('[data-testid="status"]:has-text("revision 2 (draft)")')
    assert _revisions(reviewer_user, ids[0])[-1].note == "exception in sub (3)"

    page.keyboard.press("Escape")
    with page.expect_response(lambda r: r.request.method == "POST" and "/review/workspace/items/" in r.url):
        page.keyboard.press("c")
    page.wait_for_url(re.compile(rf"/review/workspace/items/{re.escape(ids[1])}/$"))  # auto-advance
    page.goto(_item_url(live_server, ids[0]))
    assert page.inner_text('[data-testid="status"]').startswith("Complete (revision 3")


def test_the_passage_is_highlighted_in_place_inside_the_section(page, live_server, reviewer_user, reviewer2_user):
    pool = make_pool(reviewers=[reviewer_user, reviewer2_user], items=make_items(n_queries=1, per_query=2))
    ids = _queue(reviewer_user)
    item = pool.items.get(public_id=ids[0])
    _start(page, live_server, reviewer_user, ids[0])
    mark = page.locator('[data-testid="source-text"] mark[data-testid="passage-mark"]')
    assert mark.count() == 1 and mark.inner_text() == item.passage_text
    assert page.inner_text('[data-testid="source-text"]') == item.source_text  # the whole section, in order
    assert page.locator('[data-testid="passage"]').count() == 0  # no second printing of the passage
    assert page.content().count(item.passage_text) == 1


def test_undo_restores_the_previous_state_as_a_new_revision(page, live_server, reviewer_user, reviewer2_user):
    make_pool(reviewers=[reviewer_user, reviewer2_user], items=make_items(n_queries=1, per_query=2))
    ids = _queue(reviewer_user)
    _start(page, live_server, reviewer_user, ids[0])
    page.keyboard.press("1")
    page.keyboard.press("1")
    page.keyboard.press("d")
    page.wait_for_selector('[data-testid="status"]:has-text("revision 1 (draft)")')
    _ready(page)
    page.keyboard.press("ArrowUp")
    page.keyboard.press("3")  # the section grade, 1 -> 3
    page.wait_for_selector('[data-testid="status"]:has-text("revision 2 (draft)")')

    # An unsaved change is undone in the page: back to what is saved, no revision written.
    page.keyboard.press("ArrowDown")
    page.keyboard.press("0")
    page.keyboard.press("z")
    assert _checked(page, "passage") == "1"
    assert "revision 2 (draft)" in page.inner_text('[data-testid="status"]')

    # A saved change is undone by a new revision restoring the state before it.
    with page.expect_response(lambda r: r.request.method == "POST" and "/review/workspace/items/" in r.url):
        page.keyboard.press("z")
    page.wait_for_selector('[data-testid="saved"]:has-text("Undone")')
    assert (_checked(page, "section"), _checked(page, "passage")) == ("1", "1")
    assert [(r.number, r.grades) for r in _revisions(reviewer_user, ids[0])] == [
        (1, {"section": 1, "passage": 1}), (2, {"section": 3, "passage": 1}), (3, {"section": 1, "passage": 1})]


def test_the_question_mark_lists_every_key(page, live_server, reviewer_user, reviewer2_user):
    make_pool(reviewers=[reviewer_user, reviewer2_user], items=make_items(n_queries=1, per_query=2))
    ids = _queue(reviewer_user)
    _start(page, live_server, reviewer_user, ids[0])
    assert not page.is_visible('[data-testid="keys-help"]')
    page.keyboard.press("?")
    page.wait_for_selector('[data-testid="keys-help"]', state="visible")
    text = page.inner_text('[data-testid="keys-help"]')
    for key in ("0", "1", "2", "3", "u", "d", "c", "r", "z", "s", "j", "k", "q", "?", "Esc"):
        assert re.search(rf"(^|\s){re.escape(key)}(\s|$)", text), key
    assert_blind(text, where="keys list")
    page.keyboard.press("2")  # keys do nothing while the list is open
    assert _checked(page, "section") is None
    page.keyboard.press("Escape")
    page.wait_for_selector('[data-testid="keys-help"]', state="hidden")


def test_complete_advances_skip_moves_to_the_end_and_j_on_the_last_item_finds_the_open_one(
        page, live_server, reviewer_user, reviewer2_user):
    make_pool(reviewers=[reviewer_user, reviewer2_user], items=make_items(n_queries=1, per_query=3))
    ids = _queue(reviewer_user)
    _start(page, live_server, reviewer_user, ids[0])
    page.keyboard.press("s")  # skip for later: on to the next item; this one goes to the end
    page.wait_for_url(re.compile(rf"/review/workspace/items/{re.escape(ids[1])}/$"))
    assert _queue(reviewer_user) == [ids[1], ids[2], ids[0]]
    for following in (ids[2], ids[0]):
        _ready(page)
        page.keyboard.press("2")
        page.keyboard.press("u")
        page.keyboard.press("c")
        page.wait_for_url(re.compile(rf"/review/workspace/items/{re.escape(following)}/$"))
    page.wait_for_selector('[data-testid="skipped"]')
    # The skipped item is now last; completing it ends at the queue, which says so.
    _ready(page)
    page.keyboard.press("0")
    page.keyboard.press("0")
    page.keyboard.press("c")
    page.wait_for_url(re.compile(r"/review/workspace/\?end=1$"))
    assert "every item in your queue is complete" in page.inner_text('[data-testid="end"]')
    # Reopen the first, then j on the last item goes to that open item.
    page.goto(_item_url(live_server, ids[1]))
    _ready(page)
    page.keyboard.press("r")
    page.wait_for_selector('[data-testid="status"]:has-text("(draft)")')
    page.goto(_item_url(live_server, ids[0]))
    page.keyboard.press("j")
    page.wait_for_url(re.compile(rf"/review/workspace/items/{re.escape(ids[1])}/$"))


def test_the_queue_filters_by_status_and_searches_the_query_text(page, live_server, reviewer_user, reviewer2_user):
    items = make_items(n_queries=2, per_query=3)
    for n, item in enumerate(items):
        item["query_text"] = f"Question {n}: " + ("security deposit" if n % 2 else "eviction notice")
    make_pool(reviewers=[reviewer_user, reviewer2_user], items=items)
    ids = _queue(reviewer_user)
    _start(page, live_server, reviewer_user, ids[0])
    page.keyboard.press("1")
    page.keyboard.press("q")  # back to the queue, saving the draft first
    page.wait_for_url(re.compile(r"/review/workspace/$"))
    rows = page.locator('[data-testid="queue-row"]')
    assert rows.count() == 6
    assert "Question" in page.inner_text('[data-testid="queue-item"] >> nth=0')
    assert page.get_attribute('[data-testid="progress"]', "max") == "6"

    page.click('[data-filter="draft"]')
    page.wait_for_url(re.compile(r"status=draft"))
    assert page.eval_on_selector_all('[data-testid="queue-item"]', "els => els.map(e => e.href)") == [
        _item_url(live_server, ids[0])]
    page.click('[data-filter="todo"]')
    assert page.locator('[data-testid="queue-row"]').count() == 5

    page.click('[data-filter="all"]')
    page.fill('[data-testid="queue-search"] input[name="q"]', "deposit")
    page.press('[data-testid="queue-search"] input[name="q"]', "Enter")
    page.wait_for_url(re.compile(r"q=deposit"))
    texts = page.eval_on_selector_all('[data-testid="queue-item"]', "els => els.map(e => e.textContent)")
    assert len(texts) == 3 and all("deposit" in t for t in texts)
    assert_blind(page.content(), where="filtered queue")


def _real_item_pool(reviewers):
    """One item on a real NRS section (child-abuse reporting), with its provision reference for the header."""
    from django.conf import settings

    from benchmarks.corpus.models import Provision
    from benchmarks.corpus.passages import passage_extract
    from benchmarks.corpus.services import statutes_import

    statutes_import(fmt="nrs-html", paths=[Path(settings.DATA_DIR) / "statutes" / "nrs"])
    provision = Provision.objects.filter(citation="NRS 432B.220").order_by("-id").first()
    passage = passage_extract(citation=provision.citation, heading=provision.heading, body=provision.body)
    heading = f"{provision.citation}. {provision.heading}"
    item = {"query_id": "q-real", "doc_id": "d-real",
            "query_text": "Must a physician who suspects a child is being abused report it, and how soon?",
            "source_heading": heading, "source_text": provision.body, "passage_caption": passage.caption,
            "passage_text": passage.text, "external_ref": {"provision": provision.pk}}
    return make_pool(reviewers=reviewers, items=[item, *make_items(n_queries=1, per_query=2)]), provision


def test_the_grading_panel_stays_in_view_at_1440_and_the_page_stacks_at_390(page, live_server, reviewer_user,
                                                                            reviewer2_user):
    pool, provision = _real_item_pool([reviewer_user, reviewer2_user])
    item_id = pool.items.get(doc_id="d-real").public_id
    shots = os.environ.get("SCREENSHOT_DIR")
    page.set_viewport_size({"width": 1440, "height": 900})
    _start(page, live_server, reviewer_user, item_id)
    assert "Nevada Revised Statutes" in page.inner_text('[data-testid="citation"]')
    assert page.get_attribute('[data-testid="official-url"]', "href").startswith("http")
    mark = page.inner_text('[data-testid="passage-mark"]')
    assert mark and provision.body.startswith(mark[:40])
    page.keyboard.press("2")
    page.keyboard.press("3")
    page.wait_for_selector('[data-testid="status"]:has-text("revision 1 (draft)")')

    def in_view(selector: str) -> bool:
        box = page.locator(selector).bounding_box()
        return box is not None and box["y"] >= 0 and box["y"] + box["height"] <= 900

    assert in_view('#judgment button[data-action="complete"]') and in_view('[data-testid="status"]')
    if shots:
        page.screenshot(path=str(Path(shots) / "review-workspace-1440.png"))
    page.mouse.wheel(0, 1500)  # read down the section: the grades stay where they are
    page.wait_for_function("() => window.scrollY > 0")
    assert in_view('#judgment button[data-action="complete"]') and in_view('[data-testid="status"]')

    page.set_viewport_size({"width": 390, "height": 844})
    page.goto(_item_url(live_server, item_id))
    _ready(page)
    width = page.evaluate("() => document.documentElement.scrollWidth")
    assert width <= 390, f"the page is {width} px wide at 390"
    query = page.locator('[data-testid="query"]').bounding_box()
    document = page.locator("article.document").bounding_box()
    grades = page.locator("#judgment").bounding_box()
    assert max(query["width"], document["width"], grades["width"]) <= 390
    # Stacked in reading order: the query, the section, then the grades.
    assert query["y"] + query["height"] <= document["y"] and document["y"] + document["height"] <= grades["y"]
    if shots:
        page.screenshot(path=str(Path(shots) / "review-workspace-390.png"))
