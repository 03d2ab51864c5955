"""The reviewer's workspace on the server: passage location, skip for later, undo, queue filters and search,
refused submits that keep every field, auto-advance, and the citation header."""

from __future__ import annotations

import re

import pytest

from reviewapp.review.assignment.models import AssignmentSkip
from reviewapp.review.errors import NotAssigned, ReviewError
from reviewapp.review.workspace.passage_location import passage_locate
from reviewapp.review.workspace.queue import reviewer_queues
from reviewapp.review.workspace.selectors import reviewer_history, reviewer_item
from reviewapp.review.workspace.services import assignment_skip_set, item_shown_hashes, judgment_submit, judgment_undo
from tests.helpers import shown_hashes
from tests.reviewapp.review.conftest import assert_blind, make_items, make_pool

pytestmark = pytest.mark.django_db


def _queue_ids(client) -> list[str]:
    return [entry["item"] for entry in client.get("/api/v1/review/queue/").json()[0]["items"]]


# --- passage location (pure) ---------------------------------------------------------------------------------


def test_a_truncated_statute_passage_is_found_at_the_start_of_its_section_despite_squeezed_white_space():
    body = "(1) A landlord  shall return\nthe deposit within 30 days.\n\n(2) The tenant may sue for it."
    passage = "(1) A landlord shall return\nthe deposit within …"
    found = passage_locate(source_text=body, passage_text=passage)
    assert found is not None
    assert found.before == "" and found.passage == "(1) A landlord  shall return\nthe deposit within"
    assert found.before + found.passage + found.after == body


def test_a_quote_in_the_middle_of_an_excerpt_is_found_with_its_offsets():
    excerpt = "… the parties agree. This Agreement shall be governed by the laws of Nevada. Notices …"
    found = passage_locate(source_text=excerpt, passage_text="this agreement shall be governed by the laws of Nevada.")
    assert found is not None
    assert found.passage == "This Agreement shall be governed by the laws of Nevada."
    assert found.before == "… the parties agree. "


def test_a_passage_that_is_not_one_contiguous_part_of_the_source_is_not_located():
    assert passage_locate(source_text="alpha beta gamma delta", passage_text="alpha gamma") is None
    assert passage_locate(source_text="alpha beta", passage_text="") is None
    assert passage_locate(source_text="", passage_text="alpha") is None


# --- skip for later --------------------------------------------------------------------------------------------


def test_skipping_moves_the_item_to_the_end_of_the_reviewers_own_order_only(pool, reviewer_user, reviewer2_user,
                                                                           reviewer_client):
    before = _queue_ids(reviewer_client)
    other_before = [e.item_id for e in reviewer_queues(reviewer=reviewer2_user)[0].entries]
    response = reviewer_client.post(f"/review/workspace/items/{before[0]}/", {"action": "skip"})
    assert response.status_code == 302 and response["Location"].endswith(f"/review/workspace/items/{before[1]}/")
    after = _queue_ids(reviewer_client)
    assert after == before[1:] + before[:1]
    assert [e.item_id for e in reviewer_queues(reviewer=reviewer2_user)[0].entries] == other_before
    queue = reviewer_queues(reviewer=reviewer_user)[0]
    assert queue.entries[-1].skipped and queue.entries[-1].state == "skipped"
    view = reviewer_item(reviewer=reviewer_user, item_id=before[0])
    assert view.skipped and view.position == len(before) and view.next_id is None
    # Putting it back restores the keyed shuffle.
    reviewer_client.post(f"/review/workspace/items/{before[0]}/", {"action": "unskip"})
    assert _queue_ids(reviewer_client) == before
    assert not AssignmentSkip.objects.exists()


def test_a_reviewer_cannot_skip_an_item_that_is_not_theirs(pool, reviewer_user, django_user_model):
    from django.contrib.auth.models import Group

    outsider = django_user_model.objects.create_user(username="oscar", password="a-long-pass-phrase")
    outsider.groups.add(Group.objects.get(name="reviewer"))
    item = pool.items.first()
    with pytest.raises(NotAssigned):
        assignment_skip_set(reviewer=outsider, item=item, skipped=True)
    assert not AssignmentSkip.objects.exists()


# --- undo --------------------------------------------------------------------------------------------------------


def test_undo_appends_a_revision_restoring_the_state_before_the_last_change(pool, reviewer_user, reviewer_client):
    item_id = _queue_ids(reviewer_client)[0]
    post = {**shown_hashes(item_id)}
    reviewer_client.post(f"/review/workspace/items/{item_id}/",
                         {**post, "section": "2", "passage": "1", "note": "first", "action": "save"})
    reviewer_client.post(f"/review/workspace/items/{item_id}/",
                         {**post, "section": "3", "passage": "1", "note": "second", "action": "complete"})
    response = reviewer_client.post(f"/review/workspace/items/{item_id}/", {"action": "undo"}, HTTP_HX_REQUEST="true")
    assert response.status_code == 200 and "Undone" in response.content.decode()
    history = reviewer_history(reviewer=reviewer_user, item_id=item_id)
    assert [(r.number, r.status, r.grades, r.note) for r in history] == [
        (1, "draft", {"section": 2, "passage": 1}, "first"),
        (2, "complete", {"section": 3, "passage": 1}, "second"),
        (3, "draft", {"section": 2, "passage": 1}, "first"),
    ]
    # Undoing the undo returns to the completed state, again as a new revision.
    reviewer_client.post(f"/review/workspace/items/{item_id}/", {"action": "undo"})
    latest = reviewer_history(reviewer=reviewer_user, item_id=item_id)[-1]
    assert (latest.number, latest.status, latest.grades) == (4, "complete", {"section": 3, "passage": 1})


def test_undoing_the_first_revision_restores_the_empty_draft_and_nothing_to_undo_is_refused(pool, reviewer_user):
    item = pool.items.first()
    with pytest.raises(ReviewError, match="nothing to undo"):
        judgment_undo(item=item, reviewer=reviewer_user)
    judgment_submit(item=item, reviewer=reviewer_user, grades={"section": 1}, complete=False, note="x",
                             shown=item_shown_hashes(item))
    result = judgment_undo(item=item, reviewer=reviewer_user)
    assert (result.revision.number, result.revision.status, result.revision.grades, result.revision.note) == (
        2, "draft", {}, "")
    assert result.revision.passage_hash == item.passage_hash


# --- queue filters and search -----------------------------------------------------------------------------------


def test_the_queue_filters_by_status_and_searches_the_query_text_keeping_positions(reviewer_user, reviewer2_user,
                                                                                  reviewer_client):
    items = make_items(n_queries=3, per_query=2)
    for n, item in enumerate(items):
        item["query_text"] = f"Question {n}: " + ("security deposit" if n % 2 else "eviction notice")
    pool = make_pool(reviewers=[reviewer_user, reviewer2_user], items=items)
    ids = _queue_ids(reviewer_client)
    by_id = {i.public_id: i for i in pool.items.all()}
    judgment_submit(item=by_id[ids[0]], reviewer=reviewer_user, grades={"section": 1}, complete=False,
                             shown=item_shown_hashes(by_id[ids[0]]))
    judgment_submit(item=by_id[ids[1]], reviewer=reviewer_user, grades={"section": 1, "passage": 2},
                             complete=True, shown=item_shown_hashes(by_id[ids[1]]))
    assignment_skip_set(reviewer=reviewer_user, item=by_id[ids[2]], skipped=True)

    def listed(query: str) -> list[str]:
        html = reviewer_client.get(f"/review/workspace/{query}").content.decode()
        assert_blind(html, where=f"queue {query}")
        listing = html.split('<ol class="queue">')[1].split("</ol>")[0]
        return [i for i in ids if f"/review/workspace/items/{i}/" in listing]

    assert listed("?status=draft") == [ids[0]]
    assert listed("?status=complete") == [ids[1]]
    assert listed("?status=skipped") == [ids[2]]
    assert listed("?status=todo") == ids[3:]
    deposit = [i for i in ids if "deposit" in by_id[i].query_text]
    assert listed("?q=DEPOSIT") == deposit and 0 < len(deposit) < len(ids)
    assert listed("?q=deposit&status=todo") == [i for i in deposit if i in ids[3:]]
    assert listed("?status=bogus") == ids  # an unknown filter shows everything
    queue = reviewer_queues(reviewer=reviewer_user, state="todo")[0]
    # Positions stay those of the whole queue (the skipped item is last, at 6).
    assert [e.position for e in queue.shown] == [3, 4, 5]
    assert queue.counts == {"todo": 3, "draft": 1, "complete": 1, "skipped": 1} and queue.percent == 17
    html = reviewer_client.get("/review/workspace/").content.decode()
    assert by_id[ids[0]].query_text in html and 'value="1"' in html and 'max="6"' in html


# --- refused submit, auto-advance, the end of the queue ----------------------------------------------------------


def test_a_refused_complete_keeps_every_field_including_the_note(pool, reviewer_client):
    item_id = _queue_ids(reviewer_client)[0]
    for extra in ({}, {"HTTP_HX_REQUEST": "true"}):
        response = reviewer_client.post(f"/review/workspace/items/{item_id}/", {
            **shown_hashes(item_id), "section": "2", "note": "half-way: check sub (3)", "action": "complete"},
            **extra)
        html = response.content.decode()
        assert "cannot mark complete" in html
        assert 'name="section" value="2" data-key="2" checked' in html
        assert ">half-way: check sub (3)</textarea>" in html


def test_complete_advances_to_the_next_open_item_and_after_the_last_to_the_queue(reviewer_user, reviewer2_user,
                                                                                 reviewer_client):
    make_pool(reviewers=[reviewer_user, reviewer2_user], items=make_items(n_queries=1, per_query=3))
    ids = _queue_ids(reviewer_client)
    grades = {"section": "1", "passage": "1", "action": "complete"}
    # Complete the second item first: completing the first one then skips over it to the third.
    response = reviewer_client.post(f"/review/workspace/items/{ids[1]}/", {**shown_hashes(ids[1]), **grades},
                                    HTTP_HX_REQUEST="true")
    assert response["HX-Redirect"].endswith(f"/review/workspace/items/{ids[2]}/")
    response = reviewer_client.post(f"/review/workspace/items/{ids[0]}/", {**shown_hashes(ids[0]), **grades})
    assert response["Location"].endswith(f"/review/workspace/items/{ids[2]}/")
    # The last item's "next" is the next open item (wrapping round) ...
    page = reviewer_client.get(f"/review/workspace/items/{ids[2]}/").content.decode()
    assert "Back to the queue (j)" in re.sub(r"<[^>]+>", "", page)  # the key hint is its own element (hidden on touch)
    response = reviewer_client.post(f"/review/workspace/items/{ids[2]}/", {**shown_hashes(ids[2]), **grades})
    assert response["Location"].endswith("/review/workspace/?end=1")
    assert "every item in your queue is complete" in reviewer_client.get(response["Location"]).content.decode()
    # ... and with an open item before it, "next" on the last item goes there.
    reviewer_client.post(f"/review/workspace/items/{ids[0]}/", {"action": "reopen"})
    page = reviewer_client.get(f"/review/workspace/items/{ids[2]}/").content.decode()
    assert f'href="/review/workspace/items/{ids[0]}/" rel="next"' in page


def test_the_status_line_says_when_and_which_revision_was_saved(pool, reviewer_client):
    item_id = _queue_ids(reviewer_client)[0]
    assert "Nothing saved yet" in reviewer_client.get(f"/review/workspace/items/{item_id}/").content.decode()
    reviewer_client.post(f"/review/workspace/items/{item_id}/",
                         {**shown_hashes(item_id), "section": "1", "action": "save"})
    html = reviewer_client.get(f"/review/workspace/items/{item_id}/").content.decode()
    assert "Saved at " in html and ", revision 1 (draft)" in html
