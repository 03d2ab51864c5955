"""The queue page's search and its per-pool figures: indexed, capped, and a fixed number of queries.

The search reads the query-text index (pg_trgm on PostgreSQL, an FTS5 trigram table on SQLite) within the
reviewer's own pools, counts its matches up to ``SEARCH_COUNT_CAP``, and the page costs the same number of SQL
queries with one pool as with six.
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
from reviewapp.review.workspace import queue as queue_module
from reviewapp.review.workspace.queue import (
    QUEUE_PAGE_SIZE,
    REVIEWER_ORDER,
    SEARCH_COUNT_CAP,
    reviewer_queue_pages,
    reviewer_queues,
)
from tests.factories import client_for

TEXTS = {"source_heading": "Sec. 1 Deposits", "source_text": "A deposit is returned within thirty days.",
         "passage_caption": "Sec. 1 Deposits", "passage_text": "returned within thirty days"}


def _pool(*, reviewer, items: int, name: str, query_text=lambda n: f"Question {n}: is a Deposit returned?") -> None:
    """A pool of ``items`` items assigned to ``reviewer`` alone, placed as the placing service does."""
    pool = ReviewPool.objects.create(name=name, kind="passage", declared_rule="search test", reviewer_title=name,
                                     reviewers_per_item=1)
    ReviewItem.objects.bulk_create(
        [ReviewItem(pool=pool, query_id=f"q{n:05d}", doc_id=f"d{n:06d}", query_text=query_text(n), **TEXTS,
                    **item_hashes(query_text=query_text(n), **TEXTS)) for n in range(items)],
        batch_size=2000,
    )
    Assignment.objects.bulk_create(
        [Assignment(item_id=pk, reviewer=reviewer, pool=pool,
                    sort_key=hashlib.sha256(f"{reviewer.pk}:{pk}".encode()).hexdigest())
         for pk in pool.items.values_list("pk", flat=True)],
        batch_size=2000,
    )
    queue_rebuild(reviewer_id=reviewer.pk, pool_id=pool.pk)


def _queries(client, path: str) -> tuple[int, str]:
    client.get(path)  # warm the per-process caches
    with CaptureQueriesContext(connection) as captured:
        response = client.get(path)
    assert response.status_code == 200
    return len(captured), response.content.decode()


@pytest.mark.parametrize("path", ["/review/workspace/", "/review/workspace/?status=todo",
                                  "/review/workspace/?q=deposit+returned",
                                  "/review/workspace/?q=question+3&status=todo"])
def test_the_queue_page_costs_the_same_queries_with_one_pool_as_with_six(path, reviewer_user, reviewer2_user):
    _pool(reviewer=reviewer_user, items=60, name="Only pool")
    for n in range(6):
        _pool(reviewer=reviewer2_user, items=60, name=f"Pool {n}")
    one, one_html = _queries(client_for(reviewer_user), path)
    six, six_html = _queries(client_for(reviewer2_user), path)
    assert one == six
    assert one_html.count("<section") + 5 == six_html.count("<section")  # every pool is on the page
    assert six_html.count('data-testid="queue-row"') == 6 * one_html.count('data-testid="queue-row"')


def test_every_pool_shows_its_own_page_of_matches_in_the_reviewer_order(reviewer_user):
    for n in range(3):
        _pool(reviewer=reviewer_user, items=200, name=f"Pool {n}")
    wanted = {q.pool_id: [e for e in q.entries if "question" in e.query_text.lower() and "1" in e.query_text]
              for q in reviewer_queues(reviewer=reviewer_user)}
    pages = reviewer_queue_pages(reviewer=reviewer_user, search="QUESTION 1")
    assert [p.pool_id for p in pages] == list(wanted)
    for page in pages:
        assert page.entries == wanted[page.pool_id][:QUEUE_PAGE_SIZE]  # positions, states and order too
        assert (page.shown_total, page.shown_capped) == (len(wanted[page.pool_id]), False)
    second = pages[1].pool_id
    again = reviewer_queue_pages(reviewer=reviewer_user, search="QUESTION 1", page=2, page_pool=second)
    assert again[1].entries == wanted[second][QUEUE_PAGE_SIZE:2 * QUEUE_PAGE_SIZE]
    assert again[0].entries == wanted[again[0].pool_id][:QUEUE_PAGE_SIZE]  # the other pools stay on page 1


@pytest.mark.parametrize("rare_below", [queue_module.RARE_WORD_ITEMS, 5])
@pytest.mark.parametrize("search", ["deposit", "Is a", "7", "question 12", "nothing-like-this", "\"quoted\" 3"])
def test_the_indexed_search_finds_what_reading_every_query_text_finds(search, rare_below, reviewer_user,
                                                                      reviewer2_user, monkeypatch):
    # With a low bar every word but the rarest is common: checked on the queue's rows rather than found by index.
    monkeypatch.setattr(queue_module, "RARE_WORD_ITEMS", rare_below)
    def text(n: int) -> str:
        quoted = '"quoted" ' if n % 7 == 0 else ""
        return f"Question {n}: is a {quoted}Deposit returned?"

    _pool(reviewer=reviewer_user, items=130, name="Mine", query_text=text)
    _pool(reviewer=reviewer2_user, items=130, name="Theirs", query_text=text)  # same texts, someone else's
    (queue,) = reviewer_queues(reviewer=reviewer_user, search=search)
    (page,) = reviewer_queue_pages(reviewer=reviewer_user, search=search, page_size=1000)
    assert page.entries == queue.shown
    assert page.shown_total == len(queue.shown or [])


def test_a_search_matching_more_than_the_cap_says_more_than_and_still_pages_on(reviewer_user):
    _pool(reviewer=reviewer_user, items=SEARCH_COUNT_CAP + 80, name="Long")
    client = client_for(reviewer_user)
    html = client.get("/review/workspace/?q=deposit").content.decode()
    assert f"More than {SEARCH_COUNT_CAP} of {SEARCH_COUNT_CAP + 80} items match." in html
    last_counted = SEARCH_COUNT_CAP // QUEUE_PAGE_SIZE
    (page,) = reviewer_queue_pages(reviewer=reviewer_user, search="deposit", page=last_counted)
    assert page.page == last_counted and page.shown_capped
    pool = page.pool_id
    html = client.get(f"/review/workspace/?q=deposit&pool={pool}&page={last_counted}").content.decode()
    assert 'data-testid="next-page"' in html  # more matches than counted: the next page is offered
    order = list(Assignment.objects.filter(reviewer=reviewer_user).order_by(*REVIEWER_ORDER)
                 .values_list("item__public_id", flat=True))
    (beyond,) = reviewer_queue_pages(reviewer=reviewer_user, search="deposit", page=last_counted + 1,
                                               page_pool=pool)
    assert beyond.page == last_counted + 1  # counted past the cap, as far as the page asked for
    assert [e.item_id for e in beyond.entries] == order[SEARCH_COUNT_CAP:SEARCH_COUNT_CAP + QUEUE_PAGE_SIZE]
    assert (beyond.shown_total, beyond.shown_capped) == (SEARCH_COUNT_CAP + QUEUE_PAGE_SIZE, True)
    (last,) = reviewer_queue_pages(reviewer=reviewer_user, search="deposit", page=last_counted + 2,
                                             page_pool=pool)
    assert (last.shown_total, last.shown_capped) == (SEARCH_COUNT_CAP + 80, False)  # the end reached: exact
    assert [e.item_id for e in last.entries] == order[SEARCH_COUNT_CAP + QUEUE_PAGE_SIZE:]


def test_the_search_reads_the_query_text_index(reviewer_user, monkeypatch):
    _pool(reviewer=reviewer_user, items=50, name="Indexed")
    with CaptureQueriesContext(connection) as captured:
        reviewer_queue_pages(reviewer=reviewer_user, search="deposit")
    (count_sql,) = [q["sql"] for q in captured if "COUNT(*) FROM (" in q["sql"]]
    with connection.cursor() as cursor:
        if connection.vendor == "postgresql":
            # The comparison the search makes (Django's icontains: UPPER(query_text) LIKE) is the expression the
            # trigram index holds: told to avoid whole-table reads, the planner finds the items through it.
            items_sql, params = ReviewItem.objects.filter(query_text__icontains="deposit").query.sql_with_params()
            assert 'UPPER("reviewapp_reviewitem"."query_text"' in items_sql
            assert "reviewapp_reviewitem" in count_sql and "UPPER(" in count_sql
            cursor.execute("SET LOCAL enable_seqscan = off")
            cursor.execute("EXPLAIN " + items_sql, params)
            assert "reviewapp_reviewitem_query_trgm" in " ".join(row[0] for row in cursor.fetchall())
        else:
            assert "reviewapp_reviewitem_trgm" in count_sql
            cursor.execute("EXPLAIN QUERY PLAN " + count_sql)
            assert "VIRTUAL TABLE INDEX" in " ".join(str(row) for row in cursor.fetchall())
            # A word more items hold than the bar is checked along the reviewer's own queue index instead.
            monkeypatch.setattr(queue_module, "RARE_WORD_ITEMS", 10)
            with CaptureQueriesContext(connection) as captured:
                (page,) = reviewer_queue_pages(reviewer=reviewer_user, search="deposit")
            (count_sql,) = [q["sql"] for q in captured if "COUNT(*) FROM (" in q["sql"]]
            assert page.shown_total == 50 and "reviewapp_reviewitem_trgm" not in count_sql
            cursor.execute("EXPLAIN QUERY PLAN " + count_sql)
            assert "review_assign_queue_order" in " ".join(str(row) for row in cursor.fetchall())


def test_the_trigram_table_follows_new_and_deleted_items(reviewer_user):
    _pool(reviewer=reviewer_user, items=5, name="Followed", query_text=lambda n: f"Is a lease {n} void?")
    assert reviewer_queue_pages(reviewer=reviewer_user, search="lease")[0].shown_total == 5
    ReviewPool.objects.filter(name="Followed").delete()
    _pool(reviewer=reviewer_user, items=3, name="Next", query_text=lambda n: f"Is a lease {n} void?")
    assert reviewer_queue_pages(reviewer=reviewer_user, search="lease")[0].shown_total == 3
