"""A reviewer's day: time spent from their saves (idle capped), the time left at their pace, the queue grouped
by pool, and the end-of-queue message only when every pool is done."""

from __future__ import annotations

import random
from datetime import UTC, datetime, timedelta
from unittest import mock

from reviewapp.review.day.timing import MIN_ITEMS_FOR_PACE, duration_words, estimate_left, seconds_spent
from reviewapp.review.workspace.services import judgment_submit
from tests.factories import client_for
from tests.helpers import shown_hashes
from tests.reviewapp.review.conftest import make_items, make_pool

START = datetime(2026, 3, 2, 9, 0, tzinfo=UTC)


def _reference(saves, cap, opens=()):
    """Brute force: for each save, the latest opening or save of its item strictly before it (an opening at the
    same instant counts), else the latest save of its pool strictly before it; the gap capped."""
    spent = {pool: 0.0 for _, pool, _ in saves}
    ordered = sorted(saves, key=lambda s: s[0])
    for index, (when, pool, item) in enumerate(ordered):
        earlier = [w for w, _, i in ordered[:index] if i == item] + [w for w, i in opens if i == item and w <= when]
        if not earlier:
            earlier = [w for w, p, _ in ordered[:index] if p == pool]
        if earlier:
            spent[pool] += min((when - max(earlier)).total_seconds(), cap)
    return spent


def test_time_spent_matches_a_brute_force_reference_on_random_days():
    rng = random.Random(4040)
    for _ in range(300):
        def moment():
            return START + timedelta(seconds=rng.choice([rng.randint(0, 900), rng.randint(0, 86400)]))

        # Distinct instants: two saves of one reviewer never share a timestamp.
        instants = sorted({moment() for _ in range(rng.randint(0, 25))})
        items = {f"{pool}{n}": pool for pool in "abc" for n in range(3)}
        saves = [(at, *reversed(rng.choice(list(items.items())))) for at in instants]
        opens = [(moment(), rng.choice(list(items))) for _ in range(rng.randint(0, 10))]
        opens = [o for o in opens if o[0] not in instants]
        rng.shuffle(saves)
        cap = rng.choice([60, 600, 1800])
        assert seconds_spent(saves, idle_cap_seconds=cap, opens=opens) == _reference(saves, cap, opens)


def test_a_break_counts_as_the_cap_and_the_first_save_as_nothing():
    saves = [(START, "a", "a1"), (START + timedelta(minutes=4), "a", "a2"), (START + timedelta(hours=3), "b", "b1")]
    assert seconds_spent(saves, idle_cap_seconds=600) == {"a": 240.0, "b": 0.0}
    opened = [(START + timedelta(hours=2, minutes=58), "b1")]
    assert seconds_spent(saves, idle_cap_seconds=600, opens=opened) == {"a": 240.0, "b": 120.0}


def test_a_save_in_another_pool_never_counts_toward_an_item():
    """The billing case: a save in pool A, 391 s later pool B's item opened, completed 12 s after: 12 s, not 403."""
    saves = [(START, "A", "a1"), (START + timedelta(seconds=403), "B", "b1")]
    opens = [(START - timedelta(seconds=30), "a1"), (START + timedelta(seconds=391), "b1")]
    assert seconds_spent(saves, idle_cap_seconds=1800, opens=opens) == {"A": 30.0, "B": 12.0}


def test_the_estimate_uses_the_pools_pace_then_all_pools_then_none():
    spent = {"a": 3000.0, "b": 600.0}
    pooled = estimate_left(pool="a", left=10, spent=spent, completed={"a": 5, "b": 1})
    assert (pooled.seconds_left, pooled.pace_from, pooled.items_timed) == (6000.0, "this pool", 5)
    overall = estimate_left(pool="b", left=4, spent=spent, completed={"a": 5, "b": 1})
    assert (overall.seconds_left, overall.pace_from) == (4 * 3600 / 6, "all your pools")
    none = estimate_left(pool="a", left=4, spent=spent, completed={"a": MIN_ITEMS_FOR_PACE - 1, "b": 0})
    assert none.seconds_left is None and none.pace_from == ""
    assert [duration_words(s) for s in (None, 20, 12 * 60, 3900)] == ["", "under a minute", "12 min", "1 h 05 min"]


def _open(client, item, at):
    with mock.patch("django.utils.timezone.now", return_value=at):
        assert client.get(f"/review/workspace/items/{item.public_id}/").status_code == 200


def _complete(item, reviewer, at):
    with mock.patch("django.utils.timezone.now", return_value=at):
        judgment_submit(item=item, reviewer=reviewer, grades={"section": 2, "passage": 1}, complete=True,
                                 shown=shown_hashes(item.public_id))


def test_the_queue_shows_each_pools_day_and_ends_only_when_every_pool_is_done(reviewer_user, reviewer2_user):
    small = make_pool(reviewers=[reviewer_user, reviewer2_user], items=make_items(n_queries=1, per_query=3),
                      name="small pool")
    other_texts = [{**item, "query_id": f"OTHER-{item['query_id']}", "query_text": "Other question " + item["query_id"],
                    "source_text": item["source_text"] + " (another statute)"}
                   for item in make_items(n_queries=2, per_query=5)]
    big = make_pool(reviewers=[reviewer_user, reviewer2_user], items=other_texts, name="big pool")
    small.reviewer_title, big.reviewer_title = "Small set", "Big set"
    small.save(update_fields=["reviewer_title"])
    big.save(update_fields=["reviewer_title"])
    # The small pool's three items: the second two hours after the first (a break: 10 min counted), the third
    # five minutes later.
    for minutes, item in zip((0, 120, 125), small.items.order_by("id"), strict=True):
        _complete(item, reviewer_user, START + timedelta(minutes=minutes))
    client = client_for(reviewer_user)

    page = client.get("/review/workspace/?end=1").content.decode()
    # The small pool is done but the big one is not: no "every item is complete".
    assert 'data-testid="end"' not in page and 'data-testid="end-of-set"' in page
    assert "10 items are still open in your other sets" in page
    assert page.index("Small set") < page.index("Big set")
    rows = page.split('data-testid="day-row"')[1:]
    small_row = next(r for r in rows if "Small set" in r)
    big_row = next(r for r in rows if "Big set" in r)
    # Spent: 10 min (capped) + 5 = 15 min; that pace (5 min an item over 3 items) gives the big pool's 10 items 50 min.
    assert ">0 of 3<" in small_row and ">15 min<" in small_row and ">done<" in small_row
    assert ">10 of 10<" in big_row and ">none yet<" in big_row and "about 50 min" in big_row

    only = client.get(f"/review/workspace/?only={big.public_id}").content.decode()
    assert only.count('data-testid="queue"') == 1 and f'id="pool-{big.public_id}"' in only

    for index, item in enumerate(big.items.order_by("id")):
        _complete(item, reviewer_user, START + timedelta(minutes=140 + index))
    done = client.get("/review/workspace/?end=1").content.decode()
    assert 'data-testid="end"' in done and 'data-testid="end-of-set"' not in done


def test_admins_see_time_per_reviewer_and_pool_and_export_it_as_csv(admin_user_, reviewer_user, reviewer2_user):
    import csv
    import io

    first = make_pool(reviewers=[reviewer_user, reviewer2_user], items=make_items(n_queries=1, per_query=3),
                      name="first pool")
    # Three completions, 4 then 6 minutes apart: 10 minutes spent.
    for minutes, item in zip((0, 4, 10), first.items.order_by("id"), strict=True):
        _complete(item, reviewer_user, START + timedelta(minutes=minutes))
    admin = client_for(admin_user_)
    page = admin.get("/review/people/workload/").content.decode()
    mark = f'data-reviewer="{reviewer_user.username}"'
    row = next(r for r in page.split('data-testid="workload-row"')[1:] if mark in r)
    assert ">10 min<" in row and ">done<" in row  # 4 + 6 minutes; nothing left
    response = admin.get(f"/review/people/workload/time.csv?pool={first.public_id}")
    assert response["Content-Type"].startswith("text/csv")
    rows = list(csv.DictReader(io.StringIO(response.content.decode())))
    mine = next(r for r in rows if r["reviewer"] == reviewer_user.username)
    assert (mine["pool"], mine["complete"], mine["open"], mine["seconds_spent"], mine["hours_spent"]) == (
        first.public_id, "3", "0", "600", "0.17")
    other = next(r for r in rows if r["reviewer"] == reviewer2_user.username)
    assert (other["seconds_spent"], other["estimated_seconds_left"], other["pace_from"]) == ("0", "", "")
    assert client_for(reviewer_user).get("/review/people/workload/time.csv").status_code == 403


def test_the_billing_csv_measures_each_item_from_its_opening_never_across_pools(admin_user_, reviewer_user):
    import csv
    import io

    first = make_pool(reviewers=[reviewer_user], items=make_items(n_queries=1, per_query=1), name="first pool",
                      per_item=1)
    other_texts = [{**item, "query_id": f"OTHER-{item['query_id']}", "query_text": "Other question",
                    "source_text": item["source_text"] + " (another statute)"}
                   for item in make_items(n_queries=1, per_query=1)]
    second = make_pool(reviewers=[reviewer_user], items=other_texts, name="second pool", per_item=1)
    reviewer = client_for(reviewer_user)
    a, b = first.items.get(), second.items.get()
    _open(reviewer, a, START)
    _complete(a, reviewer_user, START + timedelta(seconds=30))
    # 391 s later the reviewer opens the other pool's item, and completes it 12 s after opening it
    _open(reviewer, b, START + timedelta(seconds=421))
    _complete(b, reviewer_user, START + timedelta(seconds=433))
    rows = list(csv.DictReader(io.StringIO(client_for(admin_user_).get("/review/people/workload/time.csv")
                                           .content.decode())))
    spent = {r["pool"]: r["seconds_spent"] for r in rows if r["reviewer"] == reviewer_user.username}
    assert spent == {first.public_id: "30", second.public_id: "12"}
    # The API's fetch of an item opens it too
    with mock.patch("django.utils.timezone.now", return_value=START + timedelta(seconds=500)):
        assert reviewer.get(f"/api/v1/review/items/{b.public_id}/").status_code == 200
    from reviewapp.review.day.models import ItemOpening
    assert ItemOpening.objects.filter(item=b, reviewer=reviewer_user).count() == 2
