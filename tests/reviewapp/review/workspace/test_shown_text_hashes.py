"""A grade is saved only against the texts it was given on: every submit carries the hashes of the texts shown.

The item is re-bound to new text between the reviewer opening it and submitting: the page answers 409 with
the new text and a message, the API 409 with the new item; nothing is stored. Sending the new hashes saves.
"""

from __future__ import annotations

import json
import re

import pytest

from reviewapp.review.assignment.services import item_rebind
from reviewapp.review.judgments.models import Judgment, JudgmentRevision, ReviewItem
from reviewapp.review.workspace.selectors import reviewer_history

NEW_PASSAGE = "A deposit must now be returned within 5 days (amended text)."
HIDDEN = re.compile(r'<input type="hidden" name="(query_hash|source_hash|passage_hash)" value="([0-9a-f]+)">')


def _first_item(client) -> str:
    return client.get("/api/v1/review/queue/").json()[0]["items"][0]["item"]


def _hidden_hashes(html: str) -> dict[str, str]:
    return dict(HIDDEN.findall(html))


def _rebind(item_id: str) -> ReviewItem:
    return item_rebind(item=ReviewItem.objects.get(public_id=item_id), passage_text=NEW_PASSAGE)


def _stored(reviewer, item_id: str) -> int:
    return JudgmentRevision.objects.filter(judgment__reviewer=reviewer, judgment__item__public_id=item_id).count()


def test_the_item_page_sends_the_hashes_of_the_texts_it_shows(pool, reviewer_client):
    item_id = _first_item(reviewer_client)
    html = reviewer_client.get(f"/review/workspace/items/{item_id}/").content.decode()
    item = ReviewItem.objects.get(public_id=item_id)
    form = html[html.index('<form id="judgment"'):]
    assert _hidden_hashes(form[: form.index("</form>")]) == {
        "query_hash": item.query_hash, "source_hash": item.source_hash, "passage_hash": item.passage_hash}


def test_a_page_submit_on_changed_text_stores_nothing_and_shows_the_new_text(pool, reviewer_client, reviewer_user):
    item_id = _first_item(reviewer_client)
    shown = _hidden_hashes(reviewer_client.get(f"/review/workspace/items/{item_id}/").content.decode())
    _rebind(item_id)  # the passage changes while the reviewer reads the old one

    response = reviewer_client.post(f"/review/workspace/items/{item_id}/",
                                    {"section": "3", "passage": "2", "action": "complete", **shown})
    html = response.content.decode()
    assert response.status_code == 409
    assert "passage text of this item changed" in html and "nothing was saved" in html.replace("\n", " ")
    assert NEW_PASSAGE in html
    assert _stored(reviewer_user, item_id) == 0
    assert not Judgment.objects.filter(reviewer=reviewer_user, item__public_id=item_id).exists()

    # The re-rendered page carries the new hashes: grading the new text is saved against it.
    fresh = _hidden_hashes(html)
    assert fresh["passage_hash"] != shown["passage_hash"]
    response = reviewer_client.post(f"/review/workspace/items/{item_id}/",
                                    {"section": "3", "passage": "2", "action": "save", **fresh})
    assert response.status_code == 302
    revision = reviewer_history(reviewer=reviewer_user, item_id=item_id)
    assert len(revision) == 1
    stored = JudgmentRevision.objects.get(judgment__reviewer=reviewer_user, judgment__item__public_id=item_id)
    assert stored.passage_hash == ReviewItem.objects.get(public_id=item_id).passage_hash == fresh["passage_hash"]


def test_an_htmx_submit_on_changed_text_reloads_the_page_and_stores_nothing(pool, reviewer_client, reviewer_user):
    item_id = _first_item(reviewer_client)
    shown = _hidden_hashes(reviewer_client.get(f"/review/workspace/items/{item_id}/").content.decode())
    _rebind(item_id)
    response = reviewer_client.post(f"/review/workspace/items/{item_id}/", {"section": "1", "action": "save", **shown},
                                    HTTP_HX_REQUEST="true")
    assert response["HX-Refresh"] == "true"
    assert _stored(reviewer_user, item_id) == 0
    page = reviewer_client.get(f"/review/workspace/items/{item_id}/").content.decode()
    assert NEW_PASSAGE in page and "changed since it was shown to you" in page


def test_a_page_submit_without_the_hashes_is_refused(pool, reviewer_client, reviewer_user):
    item_id = _first_item(reviewer_client)
    response = reviewer_client.post(f"/review/workspace/items/{item_id}/", {"section": "1", "action": "save"})
    assert response.status_code == 400 and b"query_hash: required" in response.content
    assert _stored(reviewer_user, item_id) == 0


def test_the_api_answers_409_with_the_new_text_when_it_changed(pool, reviewer_client, reviewer_user):
    item_id = _first_item(reviewer_client)
    shown_item = reviewer_client.get(f"/api/v1/review/items/{item_id}/").json()
    shown = {field: shown_item[field] for field in ("query_hash", "source_hash", "passage_hash")}
    _rebind(item_id)
    url = f"/api/v1/review/items/{item_id}/judgment/"
    body = {"grades": {"section": 2, "passage": 2}, "complete": True, **shown}

    response = reviewer_client.post(url, json.dumps(body), content_type="application/json")
    assert response.status_code == 409
    answer = response.json()
    assert answer["changed"] == ["passage"] and "nothing was saved" in answer["detail"]
    assert answer["item"]["passage_text"] == NEW_PASSAGE
    assert answer["item"]["passage_hash"] != shown["passage_hash"]
    assert _stored(reviewer_user, item_id) == 0

    again = {**body, "passage_hash": answer["item"]["passage_hash"]}
    response = reviewer_client.post(url, json.dumps(again), content_type="application/json")
    assert response.status_code == 201
    assert _stored(reviewer_user, item_id) == 1


@pytest.mark.parametrize("missing", ["query_hash", "source_hash", "passage_hash"])
def test_the_api_refuses_a_judgment_without_the_hashes_shown(pool, reviewer_client, reviewer_user, missing):
    item_id = _first_item(reviewer_client)
    shown_item = reviewer_client.get(f"/api/v1/review/items/{item_id}/").json()
    body = {"grades": {"section": 1}, **{f: shown_item[f] for f in ("query_hash", "source_hash", "passage_hash")}}
    del body[missing]
    response = reviewer_client.post(f"/api/v1/review/items/{item_id}/judgment/", json.dumps(body),
                                    content_type="application/json")
    assert response.status_code == 400 and missing in response.json()
    assert _stored(reviewer_user, item_id) == 0
