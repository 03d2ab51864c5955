"""A whole item graded from the keyboard alone, as a keyboard-only or screen-reader user does it.

At each step the test checks where focus is and what the live regions say (what a screen reader announces):
both grades, the note, Save draft, the "?" dialog, Mark complete and the move on to the next item. No mouse event
is sent after signing in.
"""

from __future__ import annotations

import re

import pytest

from reviewapp.core.auth.accounts import user_shortcuts_set
from tests.browser.review.test_review_workspace import _checked, _queue, _ready, _revisions, _start
from tests.reviewapp.review.conftest import make_items, make_pool

pytestmark = pytest.mark.browser

# What has focus, described: tag, name/value of a field, data-action of a button, and whether it is in the dialog.
_FOCUS = """() => { const el = document.activeElement;
  if (!el || el === document.body) return {tag: 'body'};
  return {tag: el.tagName.toLowerCase(), name: el.name || '', value: el.value || '', key: el.dataset.key || '',
          action: el.dataset.action || '', testid: el.dataset.testid || '', inDialog: !!el.closest('dialog'),
          text: (el.textContent || '').trim().slice(0, 40)}; }"""


def _focus(page) -> dict:
    return page.evaluate(_FOCUS)


def _announced(page, text: str, *, region: str = "announce") -> None:
    page.wait_for_function(
        "([id, text]) => (document.getElementById(id).textContent || '').includes(text)", arg=[region, text])


def _tab_to(page, predicate, limit: int = 40) -> dict:
    for _ in range(limit):
        page.keyboard.press("Tab")
        focus = _focus(page)
        if predicate(focus):
            return focus
    raise AssertionError(f"Tab never reached the control; last focus {focus}")


def test_a_reviewer_grades_a_whole_item_with_the_keyboard_alone(page, live_server, reviewer_user, reviewer2_user):
    make_pool(reviewers=[reviewer_user, reviewer2_user], items=make_items(n_queries=1, per_query=2))
    ids = _queue(reviewer_user)
    _start(page, live_server, reviewer_user, ids[0])
    keys = page.eval_on_selector_all('#judgment input[name="passage"]', "els => els.map(e => e.dataset.key)")

    # The first Tab stop skips the navigation; Tab then reaches the section grade's first choice.
    page.keyboard.press("Tab")
    assert _focus(page)["text"] == "Skip to the content"
    focus = _tab_to(page, lambda f: f.get("name") == "section")
    assert focus["tag"] == "input"

    # A grade key grades the group that has focus, and focus follows on to the next group.
    page.keyboard.press("3")
    assert _checked(page, "section") == "3"
    assert _focus(page)["name"] == "passage"
    _announced(page, "Section grade: 3")

    # On a focused radio the arrow keys are the radio group's: they move the choice, they never leave the item.
    page.keyboard.press("ArrowDown")
    assert _checked(page, "passage") == keys[1] and _focus(page)["key"] == keys[1]
    _announced(page, f"Passage grade: {keys[1]}")
    page.keyboard.press("ArrowRight")
    assert _checked(page, "passage") == keys[2] and page.url.endswith(f"/review/workspace/items/{ids[0]}/")
    _announced(page, f"Passage grade: {keys[2]}")
    assert _checked(page, "section") == "3"  # the other group is untouched

    # A grade key on the focused Passage radio changes the Passage grade, not the Section grade.
    page.keyboard.press("2")
    assert (_checked(page, "section"), _checked(page, "passage")) == ("3", "2")
    _announced(page, "Passage grade: 2")
    assert _focus(page) == {**_focus(page), "name": "passage", "key": "2"}

    # Tab on to the note; letters typed there are text, not shortcuts; Escape goes back to the grades.
    focus = _tab_to(page, lambda f: f.get("name") == "note")
    page.keyboard.type("read it twice; d and c are letters here")
    assert page.url.endswith(f"/review/workspace/items/{ids[0]}/")
    page.keyboard.press("Escape")
    assert _focus(page)["name"] == "passage" and _focus(page)["key"] == "2"

    # Save draft (d): the polite live region outside the form says so, and focus is back on the control used.
    page.keyboard.press("d")
    _announced(page, "Draft saved (revision 1).")
    _ready(page)
    assert _focus(page)["name"] == "passage" and _focus(page)["key"] == "2"
    assert [(r.status, r.grades, r.note) for r in _revisions(reviewer_user, ids[0])] == [
        ("draft", {"section": 3, "passage": 2}, "read it twice; d and c are letters here")]

    # "?" opens a real modal dialog: focus inside it, the page behind inert, Tab never leaves it, Escape
    # closes it and gives focus back.
    page.keyboard.press("?")
    page.wait_for_selector('[data-testid="keys-help"]', state="visible")
    assert page.evaluate("() => document.getElementById('keys-help').matches(':modal')")
    assert _focus(page)["inDialog"] and _focus(page)["text"] == "Close"
    for _ in range(4):
        page.keyboard.press("Tab")
        focus = _focus(page)
        assert focus["tag"] == "body" or focus["inDialog"], focus  # the browser's own controls, or the dialog
    page.keyboard.press("Escape")
    page.wait_for_selector('[data-testid="keys-help"]', state="hidden")
    assert _focus(page)["name"] == "passage" and _focus(page)["key"] == "2"

    # Mark complete, reached with Tab and pressed with Enter: on to the next item, which announces it.
    focus = _tab_to(page, lambda f: f.get("action") == "complete")
    page.keyboard.press("Enter")
    page.wait_for_url(re.compile(rf"/review/workspace/items/{re.escape(ids[1])}/$"))
    _announced(page, "Marked complete (revision 2).")
    assert [(r.status, r.grades) for r in _revisions(reviewer_user, ids[0])][-1] == (
        "complete", {"section": 3, "passage": 2})

    # The next item starts from the top: the skip link, then its first grade; an error is said assertively.
    _ready(page)
    page.keyboard.press("Tab")
    page.keyboard.press("Enter")  # skip to the content
    _tab_to(page, lambda f: f.get("name") == "section")
    page.keyboard.press("c")  # complete with nothing graded: refused
    page.wait_for_function("() => document.getElementById('announce-error').textContent.trim().length > 0")
    assert _focus(page)["name"] == "section"  # focus stays on the control used
    assert not _revisions(reviewer_user, ids[1])


def test_the_first_automatic_save_can_be_undone_with_z(page, live_server, reviewer_user, reviewer2_user):
    make_pool(reviewers=[reviewer_user, reviewer2_user], items=make_items(n_queries=1, per_query=2))
    ids = _queue(reviewer_user)
    _start(page, live_server, reviewer_user, ids[0])
    assert not page.is_visible('#judgment button[data-action="undo"]')  # nothing saved yet: nothing to undo

    page.keyboard.press("2")
    _announced(page, "Section grade: 2")
    _announced(page, "Draft saved (revision 1).")  # the automatic save, said
    assert page.is_visible('#judgment button[data-action="undo"]')
    page.keyboard.press("z")
    _announced(page, "Undone: the state before your last change is restored as revision 2.")
    assert [(r.status, r.grades) for r in _revisions(reviewer_user, ids[0])] == [
        ("draft", {"section": 2}), ("draft", {})]
    assert _checked(page, "section") is None


def test_single_key_shortcuts_can_require_alt_or_be_turned_off(page, live_server, reviewer_user, reviewer2_user):
    make_pool(reviewers=[reviewer_user, reviewer2_user], items=make_items(n_queries=1, per_query=2))
    ids = _queue(reviewer_user)
    user_shortcuts_set(user=reviewer_user, shortcuts="modifier")
    _start(page, live_server, reviewer_user, ids[0])
    page.keyboard.press("3")
    page.keyboard.press("j")
    assert _checked(page, "section") is None and page.url.endswith(f"/review/workspace/items/{ids[0]}/")
    page.keyboard.press("Alt+3")
    assert _checked(page, "section") == "3"

    user_shortcuts_set(user=reviewer_user, shortcuts="off")
    page.reload()
    _ready(page)
    for key in ("2", "Alt+2", "?", "j"):
        page.keyboard.press(key)
    assert _checked(page, "passage") is None and page.url.endswith(f"/review/workspace/items/{ids[0]}/")
    assert not page.is_visible('[data-testid="keys-help"]')
