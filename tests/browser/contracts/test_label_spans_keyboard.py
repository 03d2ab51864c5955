"""A clause item labelled, highlighted, completed and undone with the keyboard alone, as a lawyer on a keyboard or a
screen reader does it: no mouse event after signing in, no caret browsing, no selection set by a script.

After each key the test reads the polite live region (what a screen reader says) and, where the key selects,
the text the page shows selected.
"""

from __future__ import annotations

import re

import pytest

from reviewapp.review.judgments.models import JudgmentRevision
from tests.browser.conftest import login
from tests.browser.site.test_content_security_policy import Watch
from tests.grading.contracts.labelling_support import item_of, labelling_pool, span_of

pytestmark = pytest.mark.browser

SENTENCE = "This Agreement is governed by the laws of the State of Nevada."


def _said(page, text: str, *, region: str = "announce") -> None:
    """Wait until the live region holds ``text`` (a screen reader says it)."""
    page.wait_for_function(
        "([id, text]) => (document.getElementById(id).textContent || '').includes(text)", arg=[region, text])


def _selected(page) -> str:
    return page.eval_on_selector_all("#contract-text .kbd-sel", "els => els.map((e) => e.textContent).join('')")


def _marked(page) -> str:
    return page.eval_on_selector_all("#contract-text mark.span-mark", "els => els.map((e) => e.textContent).join('')")


def _ready(page) -> None:
    page.wait_for_selector("body[data-spans-ready]", state="attached")


def _revisions(reviewer, item) -> list[JudgmentRevision]:
    return list(JudgmentRevision.objects.filter(judgment__reviewer=reviewer, judgment__item=item).order_by("number"))


def test_a_lawyer_labels_highlights_completes_and_undoes_a_clause_with_the_keyboard_alone(
        page, live_server, reviewer_user, reviewer2_user):
    pool = labelling_pool(reviewers=[reviewer_user, reviewer2_user])
    law, compete = item_of(pool, "Governing Law"), item_of(pool, "Non-Compete")
    watch = Watch(page, live_server.url)  # no script error, no refused request in the console
    login(page, live_server, reviewer_user.username, "pw-" + reviewer_user.username)
    page.wait_for_selector('[data-testid="roles"]')
    page.goto(f"{live_server.url}/review/workspace/items/{law.public_id}/")
    _ready(page)

    # Search, and Enter goes to the match and selects it.
    page.keyboard.press("/")
    page.keyboard.type("governed by")
    page.keyboard.press("Enter")
    _said(page, "Match 1 of 1")
    _said(page, "selected: 2. Governing Law.")
    assert _selected(page) == "governed by"

    # Back to the text, and x grows the selection to its sentence; Shift+x shrinks it back, x again.
    page.keyboard.press("Escape")
    assert page.evaluate("() => document.activeElement.id") == "contract-text"
    assert page.is_visible("#contract-text .caret")
    # Esc clears the selection; Enter on the current match selects it again, wherever the cursor went.
    page.keyboard.press("Escape")
    _said(page, "Selection cleared.")
    assert _selected(page) == ""
    # The cursor moves without selecting, and says where it is: the line, then the character after it.
    page.keyboard.press("Control+Home")
    _said(page, "SUPPLY AGREEMENT (line 1)")
    page.keyboard.press("ArrowRight")
    page.wait_for_function("() => document.getElementById('announce').textContent === 'U'")
    page.keyboard.press("Enter")
    _said(page, "Selected (line 5): governed by")
    assert _selected(page) == "governed by"
    page.keyboard.press("x")
    _said(page, f"Selected (line 5): {SENTENCE}")
    assert _selected(page) == SENTENCE
    page.keyboard.press("Shift+X")
    _said(page, "Selected (line 5): governed by")
    page.keyboard.press("x")
    _said(page, f"Selected (line 5): {SENTENCE}")

    # Shift+arrows by character, Shift+Ctrl+arrows by word.
    page.keyboard.press("Shift+ArrowLeft")
    _said(page, "Selected (line 5): This Agreement is governed by the laws of the State of Nevada")
    assert _selected(page) == SENTENCE[:-1]
    page.keyboard.press("Shift+Control+ArrowLeft")
    _said(page, "Selected (line 5): This Agreement is governed by the laws of the State of")
    page.keyboard.press("Shift+Control+ArrowRight")
    _said(page, "Selected (line 5): This Agreement is governed by the laws of the State of Nevada")
    page.keyboard.press("Shift+ArrowRight")
    _said(page, f"Selected (line 5): {SENTENCE}")

    # h highlights it: present, one highlight with start and end cues, and the draft saves itself.
    page.keyboard.press("h")
    _said(page, f"Highlighted (line 5): {SENTENCE}. 1 highlight, marked present.")
    assert _marked(page) == SENTENCE
    cues = page.evaluate("""() => { const m = Array.from(document.querySelectorAll('#contract-text mark.span-mark'));
        return [getComputedStyle(m[0], '::before').content, getComputedStyle(m[m.length - 1], '::after').content]; }""")
    assert cues == ['"Start of highlight 1. "', '" End of highlight 1."']
    _said(page, "Draft saved (revision 1).")
    assert [(r.grades, r.spans) for r in _revisions(reviewer_user, law)] == [
        ({"presence": 1}, [span_of(law, SENTENCE)])]

    # u with a highlight present: the highlight goes (the server would refuse spans with "unknown"), and says so.
    page.keyboard.press("u")
    _said(page, "Marked unknown: the highlights were removed (z brings them back).")
    assert _marked(page) == ""
    _said(page, "Draft saved (revision 2).")
    assert page.inner_text("#announce-error") == ""
    assert [(r.grades, r.spans) for r in _revisions(reviewer_user, law)][-1] == ({"presence": "unknown"}, [])

    # z undoes the saved change: the highlight is back, as a new revision.
    with page.expect_navigation():  # a saved change is undone by a post of the form, and the page comes back
        page.keyboard.press("z")
    _ready(page)
    _said(page, "Undone: the state before your last change is restored as revision 3.")
    assert _marked(page) == SENTENCE
    assert [(r.grades, r.spans) for r in _revisions(reviewer_user, law)][-1] == (
        {"presence": 1}, [span_of(law, SENTENCE)])

    # c completes it and moves on to the next open item, which says so.
    page.keyboard.press("c")
    page.wait_for_url(re.compile(rf"/review/workspace/items/{compete.public_id}/$"))
    _ready(page)
    _said(page, "Marked complete (revision 4).")
    assert _revisions(reviewer_user, law)[-1].status == "complete"

    # The next category is absent: a, then c.
    page.keyboard.press("a")
    _said(page, "Marked absent.")
    page.keyboard.press("c")
    page.wait_for_url(re.compile(r"/review/workspace/(\?end=1)?$"))  # the last item: back to the queue, which says so
    assert "Marked complete" in page.inner_text(".messages")
    assert [(r.status, r.grades, r.spans) for r in _revisions(reviewer_user, compete)][-1] == (
        "complete", {"presence": 0}, [])
    watch.check("the span workspace on the keyboard")
