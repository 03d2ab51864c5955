"""Nothing about the model reaches a reviewer; reviewers reach only their own items; admins see the pool."""

from __future__ import annotations

import json

import pytest
from django.test import Client

from reviewapp.review.workspace.selectors import reviewer_history
from reviewapp.review.workspace.services import judgment_submit
from tests.helpers import shown_hashes
from tests.reviewapp.review.conftest import assert_blind


def _queue_ids(client) -> list[str]:
    body = client.get("/api/v1/review/queue/").json()
    return [entry["item"] for entry in body[0]["items"]]


def test_reviewer_pages_and_api_carry_no_model_information(pool, reviewer_client, reviewer_user):
    pages = {"/review/workspace/": reviewer_client.get("/review/workspace/")}
    ids = _queue_ids(reviewer_client)
    judgment_submit(item=pool.items.get(public_id=ids[0]), reviewer=reviewer_user,
                             grades={"section": 2, "passage": 1}, complete=False)
    for item_id in ids:
        pages[f"/review/workspace/items/{item_id}/"] = reviewer_client.get(f"/review/workspace/items/{item_id}/")
        pages[f"/api/v1/review/items/{item_id}/"] = reviewer_client.get(f"/api/v1/review/items/{item_id}/")
        history_url = f"/api/v1/review/items/{item_id}/history/"
        pages[history_url] = reviewer_client.get(history_url)
    pages["/api/v1/review/queue/"] = reviewer_client.get("/api/v1/review/queue/")
    pages["save"] = reviewer_client.post(f"/review/workspace/items/{ids[0]}/", {"section": "3", "passage": "u",
                                                                     "action": "save", **shown_hashes(ids[0])},
                                         HTTP_HX_REQUEST="true")
    pages["api save"] = reviewer_client.post(f"/api/v1/review/items/{ids[1]}/judgment/",
                                             {"grades": {"section": 1, "passage": 0}, "complete": True,
                                              **shown_hashes(ids[1])},
                                             content_type="application/json")
    history = f"/review/workspace/items/{ids[0]}/history/"
    pages[history] = reviewer_client.get(history)
    for where, response in pages.items():
        assert response.status_code in (200, 201), where
        assert_blind(response.content.decode(), where=where)


def test_the_item_api_lists_exactly_the_blind_fields(pool, reviewer_client):
    item_id = _queue_ids(reviewer_client)[0]
    body = reviewer_client.get(f"/api/v1/review/items/{item_id}/").json()
    assert set(body) == {
        "item", "pool", "position", "total", "previous", "next", "query_text", "source_heading", "source_text",
        "passage_caption", "passage_text", "grade_types", "scale", "current", "needs_regrade",
        # hashes of the texts above (computable from them): sent back with a grade
        "query_hash", "source_hash", "passage_hash",
        # a kind answered with spans (false here) and where offsets fall in the original (null here)
        "answers_spans", "span_locations",
    }
    assert (body["answers_spans"], body["span_locations"]) == (False, None)


def test_the_page_shows_the_query_and_the_whole_section_with_the_passage_highlighted_in_it_once(pool,
                                                                                                 reviewer_client):
    item_id = _queue_ids(reviewer_client)[0]
    item = pool.items.get(public_id=item_id)
    html = reviewer_client.get(f"/review/workspace/items/{item_id}/").content.decode()
    before = item.source_text[: item.source_text.index(item.passage_text)]
    mark = (f'<mark class="passage-mark" id="passage-mark" data-testid="passage-mark" '
            f'data-cue-start="Start of the highlighted text." data-cue-end="End of the highlighted text.">'
            f"{item.passage_text}</mark>")
    assert before + mark in html
    assert html.count(item.passage_text) == 1  # the passage is not printed a second time
    assert item.query_text in html
    assert html.count('class="grade-group"') == 2


def test_the_queue_is_not_in_rank_order(pool, reviewer_client):
    ids = _queue_ids(reviewer_client)
    by_id = {i.public_id: (i.query_id, i.external_ref["rank"]) for i in pool.items.all()}
    assert [by_id[i] for i in ids] != sorted(by_id[i] for i in ids)


def test_a_reviewer_cannot_read_another_reviewers_items_or_judgments(pool, reviewer_user, reviewer2_user,
                                                                    reviewer_client, django_user_model):
    from django.contrib.auth.models import Group

    third = django_user_model.objects.create_user(username="tina", password="x-long-password")
    third.groups.add(Group.objects.get(name="reviewer"))
    item = pool.items.first()
    judgment_submit(item=item, reviewer=reviewer2_user, grades={"section": 3, "passage": 3},
                             complete=True)
    client = Client()
    client.force_login(third)
    for url in (f"/review/workspace/items/{item.public_id}/", f"/review/workspace/items/{item.public_id}/history/",
                f"/api/v1/review/items/{item.public_id}/", f"/api/v1/review/items/{item.public_id}/history/"):
        assert client.get(url).status_code == 404, url
    response = client.post(f"/api/v1/review/items/{item.public_id}/judgment/", {"grades": {"section": 1}},
                           content_type="application/json")
    assert response.status_code == 404
    assert client.get("/api/v1/review/queue/").json() == []
    # the assigned reviewer sees only their own judgment, never reviewer2's grade
    own = reviewer_client.get(f"/api/v1/review/items/{item.public_id}/").json()
    assert own["current"] is None
    assert reviewer_client.get(f"/api/v1/review/items/{item.public_id}/history/").json() == []


@pytest.mark.parametrize(
    "url",
    ["/review/pools/", "/review/pools/new/", "/api/v1/review/pools/", "/api/v1/review/label-sources/",
     "/benchmarks/", "/cuad/", "/api/v1/me/"],
)
def test_a_reviewer_is_refused_admin_and_run_pages(pool, reviewer_client, url):
    status = reviewer_client.get(url).status_code
    if url == "/api/v1/me/":
        assert status == 200  # their own identity is fine
    else:
        assert status in (403, 404), url


def test_a_reviewer_is_refused_every_pool_admin_page(pool, reviewer_client):
    item = pool.items.first()
    base = f"/review/agreement/{pool.public_id}"
    for url in (f"/review/pools/{pool.public_id}/", f"{base}/qrels.txt", f"{base}/judgments.jsonl",
                f"{base}/items/{item.public_id}/adjudicate/",
                f"/api/v1/review/pools/{pool.public_id}/progress/", f"/api/v1/review/pools/{pool.public_id}/agreement/",
                f"/api/v1/review/pools/{pool.public_id}/qrels/", f"/api/v1/review/pools/{pool.public_id}/judgments/"):
        assert reviewer_client.get(url).status_code == 403, url
    assert reviewer_client.post(f"/review/assignment/{pool.public_id}/assign/", {}).status_code == 403
    assert reviewer_client.post("/api/v1/review/pools/", {}, content_type="application/json").status_code == 403


def test_an_admin_or_stakeholder_cannot_grade(pool, admin_client_, stakeholder_client):
    item = pool.items.first()
    for client in (admin_client_, stakeholder_client):
        assert client.get("/review/workspace/").status_code == 403
        assert client.get(f"/review/workspace/items/{item.public_id}/").status_code == 403
        assert client.get("/api/v1/review/queue/").status_code == 403


def test_anonymous_users_are_sent_to_login(pool):
    response = Client().get("/review/workspace/")
    assert response.status_code == 302 and "/accounts/login/" in response["Location"]
    assert Client().get("/api/v1/review/queue/").status_code in (401, 403)


def test_the_page_works_without_javascript(pool, reviewer_client, reviewer_user):
    ids = _queue_ids(reviewer_client)
    response = reviewer_client.post(f"/review/workspace/items/{ids[0]}/",
                                    {"section": "2", "passage": "3", "action": "save", **shown_hashes(ids[0])})
    assert response.status_code == 302 and response["Location"].endswith(f"/review/workspace/items/{ids[0]}/")
    response = reviewer_client.post(f"/review/workspace/items/{ids[0]}/", {"section": "2", "passage": "3",
                                                                "action": "complete", **shown_hashes(ids[0])})
    assert response.status_code == 302 and response["Location"].endswith(f"/review/workspace/items/{ids[1]}/")
    page = reviewer_client.get(f"/review/workspace/items/{ids[0]}/").content.decode()
    assert "Complete (revision 2, saved at" in page
    response = reviewer_client.post(f"/review/workspace/items/{ids[0]}/", {"action": "reopen"})
    assert response.status_code == 302
    history = reviewer_history(reviewer=reviewer_user, item_id=ids[0])
    assert [(r.number, r.status) for r in history] == [(1, "draft"), (2, "complete"), (3, "draft")]
    assert history[2].grades == {"section": 2, "passage": 3}
    # an incomplete "complete" is refused with a message and nothing saved
    response = reviewer_client.post(f"/review/workspace/items/{ids[1]}/", {"section": "2", "action": "complete",
                                                                **shown_hashes(ids[1])})
    assert response.status_code == 400 and b"cannot mark complete" in response.content
    assert reviewer_history(reviewer=reviewer_user, item_id=ids[1]) == []


def test_htmx_saves_swap_the_judgment_fragment(pool, reviewer_client):
    item_id = _queue_ids(reviewer_client)[0]
    response = reviewer_client.post(f"/review/workspace/items/{item_id}/",
                                    {"section": "1", "passage": "0", "action": "save", **shown_hashes(item_id)},
                                    HTTP_HX_REQUEST="true")
    html = response.content.decode()
    assert response.status_code == 200
    assert html.lstrip().startswith('<form id="judgment"') and "<html" not in html
    assert 'data-revision="1"' in html and "Draft saved (revision 1)" in html


def test_the_judgment_api_is_idempotent_for_a_double_submit(pool, reviewer_client):
    item_id = _queue_ids(reviewer_client)[0]
    payload = json.dumps({"grades": {"section": 2, "passage": "unknown"}, "complete": True, **shown_hashes(item_id)})
    first = reviewer_client.post(f"/api/v1/review/items/{item_id}/judgment/", payload, content_type="application/json")
    second = reviewer_client.post(f"/api/v1/review/items/{item_id}/judgment/", payload, content_type="application/json")
    assert (first.status_code, second.status_code) == (201, 200)
    assert first.json()["revision"]["number"] == second.json()["revision"]["number"] == 1
    assert second.json()["revision"]["grades"] == {"section": 2, "passage": "unknown"}
    bad = reviewer_client.post(f"/api/v1/review/items/{item_id}/judgment/", {"grades": {"passage": 9},
                                                                          **shown_hashes(item_id)},
                               content_type="application/json")
    assert bad.status_code == 400 and "grades.passage" in bad.json()["detail"]


def test_public_ids_are_opaque_urlsafe_and_never_begin_with_a_dash():
    # A leading "-" made a CSV export neutralise the id as a possible formula ("'-i6k..."), so the exported pool
    # id differed from the page's (1 id in 64). 3,000 draws of a generator that allowed it would show one.
    import re

    from reviewapp.review.ids import new_public_id

    ids = [new_public_id() for _ in range(3000)]
    assert len(set(ids)) == len(ids)
    assert all(re.fullmatch(r"[A-Za-z0-9_][A-Za-z0-9_-]{21}", value) for value in ids), ids[:5]
