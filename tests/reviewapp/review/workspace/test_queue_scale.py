"""The queue page and the item page cost the same number of SQL queries at 100 items as at 10k.

The 10k-item world is written with ``bulk_create`` (no service per item): one pool, two query tiers, keyed sort
keys, a draft, a completed item and a skipped one, so every state the queue counts is present at both sizes.
"""

from __future__ import annotations

import hashlib

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from reviewapp.review.assignment.models import Assignment
from reviewapp.review.assignment.queue_order import queue_rebuild
from reviewapp.review.judgments.hashes import item_hashes
from reviewapp.review.judgments.models import ReviewItem
from reviewapp.review.pools.models import ReviewPool
from reviewapp.review.workspace.queue import QUEUE_PAGE_SIZE, REVIEWER_ORDER, SEARCH_COUNT_CAP, reviewer_queue_pages
from reviewapp.review.workspace.selectors import reviewer_item
from reviewapp.review.workspace.services import assignment_skip_set, item_shown_hashes, judgment_submit
from tests.factories import client_for

# session, user, permissions; the tallies (with each pool's first open item); the skipped items' places; the page's
# rows; the day (saves). A search adds its count of matches.
QUEUE_PAGE_QUERIES = 7
ITEM_PAGE_QUERIES_GET = 9  # the place: one query of index lookups (and the tally); the opening recorded


def _world(*, reviewer, items: int) -> list[str]:
    """A pool of ``items`` items assigned to ``reviewer``; returns their public ids in the reviewer's order."""
    pool = ReviewPool.objects.create(name=f"scale {items}", kind="passage", declared_rule="scale test",
                                     reviewer_title=f"Scale {items}", reviewers_per_item=1)
    texts = {"source_heading": "Sec. 1 Deposits", "source_text": "A deposit is returned within thirty days.",
             "passage_caption": "Sec. 1 Deposits", "passage_text": "returned within thirty days"}
    rows = []
    for n in range(items):
        query_text = f"Question {n // 10}: when must a deposit be returned?"
        rows.append(ReviewItem(pool=pool, query_id=f"q{n // 10:05d}", doc_id=f"d{n:06d}", query_text=query_text,
                               priority=0 if n < items // 2 else 1, **texts,
                               **item_hashes(query_text=query_text, **texts)))
    ReviewItem.objects.bulk_create(rows, batch_size=2000)
    pks = list(pool.items.values_list("pk", flat=True))
    Assignment.objects.bulk_create(
        [Assignment(item_id=pk, reviewer=reviewer, pool=pool,
                    sort_key=hashlib.sha256(f"{reviewer.pk}:{pk}".encode()).hexdigest()) for pk in pks],
        batch_size=2000,
    )
    queue_rebuild(reviewer_id=reviewer.pk, pool_id=pool.pk)  # what the placing service does after its bulk_create
    order = _order(reviewer)
    by_id = {i.public_id: i for i in ReviewItem.objects.filter(public_id__in=order[:3])}
    for n, complete in ((0, False), (1, True)):
        item = by_id[order[n]]
        judgment_submit(item=item, reviewer=reviewer, grades={"section": 1, "passage": 1},
                                 complete=complete, shown=item_shown_hashes(item))
    assignment_skip_set(reviewer=reviewer, item=by_id[order[2]], skipped=True)
    return _order(reviewer)


def _order(reviewer) -> list[str]:
    return list(Assignment.objects.filter(reviewer=reviewer).order_by(*REVIEWER_ORDER)
                .values_list("item__public_id", flat=True))


def _count(client, path: str) -> tuple[int, bytes]:
    client.get(path)  # warm the per-process caches
    with CaptureQueriesContext(connection) as captured:
        response = client.get(path)
    assert response.status_code == 200
    return len(captured), response.content


@pytest.mark.parametrize("items", [100, 10_000])
def test_the_queue_page_and_the_item_page_cost_a_fixed_number_of_queries_whatever_the_queue_length(
        items, reviewer_user):
    order = _world(reviewer=reviewer_user, items=items)
    client = client_for(reviewer_user)

    queries, body = _count(client, "/review/workspace/")
    assert queries == QUEUE_PAGE_QUERIES
    html = body.decode()
    assert html.count('data-testid="queue-row"') == QUEUE_PAGE_SIZE
    assert f"<strong>1</strong> of {items} complete" in html
    assert f"{items - 3} to do · 1 draft · 1 skipped" in html
    assert len(body) < 100 * 1024
    # Filters and search count the whole queue, not the page.
    queries, body = _count(client, "/review/workspace/?status=todo&q=question")
    assert queries == QUEUE_PAGE_QUERIES + 1
    assert (f"{items - 3} of {items} items match." if items - 3 <= SEARCH_COUNT_CAP
            else f"More than {SEARCH_COUNT_CAP} of {items} items match.") in body.decode()

    middle = order[len(order) // 2]
    queries, body = _count(client, f"/review/workspace/items/{middle}/")
    assert queries == ITEM_PAGE_QUERIES_GET
    view = reviewer_item(reviewer=reviewer_user, item_id=middle)
    index = order.index(middle)
    assert (view.position, view.total, view.previous_id, view.next_id) == (
        index + 1, items, order[index - 1], order[index + 1])


def test_the_last_page_of_the_queue_lists_the_rest_in_order_with_whole_queue_positions(reviewer_user):
    order = _world(reviewer=reviewer_user, items=120)
    pool_id = ReviewPool.objects.get(name="scale 120").public_id
    (last,) = reviewer_queue_pages(reviewer=reviewer_user, page=3, page_pool=pool_id)
    assert (last.page, last.pages) == (3, 3)
    assert [e.item_id for e in last.entries] == order[100:]
    assert [e.position for e in last.entries] == list(range(101, 121))
    assert last.entries[-1].skipped  # skipped for later: the end of the queue
    assert last.next_open is not None and last.next_open.item_id == order[0]  # the draft is still open
    (beyond,) = reviewer_queue_pages(reviewer=reviewer_user, page=99, page_pool=pool_id)
    assert beyond.page == 3


def test_next_open_on_the_item_page_wraps_round_past_complete_items(reviewer_user):
    order = _world(reviewer=reviewer_user, items=100)
    # order[0] is a draft, order[1] complete, order[-1] skipped (open): after the last item, the first open one.
    assert reviewer_item(reviewer=reviewer_user, item_id=order[-1]).next_open_id == order[0]
    assert reviewer_item(reviewer=reviewer_user, item_id=order[0]).next_open_id == order[2]
    first = reviewer_item(reviewer=reviewer_user, item_id=order[0])
    assert first.previous_id is None and first.position == 1


def test_the_queue_api_answers_a_page_of_a_long_queue_and_the_next_on_request(reviewer_user):
    order = _world(reviewer=reviewer_user, items=2_500)
    client = client_for(reviewer_user)
    (first,) = client.get("/api/v1/review/queue/").json()
    assert (first["page"], first["pages"], first["total"]) == (1, 3, 2_500)
    assert [e["item"] for e in first["items"]] == order[:1000]
    (last,) = client.get(f"/api/v1/review/queue/?pool={first['pool']}&page=3").json()
    assert [e["item"] for e in last["items"]] == order[2000:]
    assert [e["position"] for e in last["items"]][:2] == [2001, 2002]
