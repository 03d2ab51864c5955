"""The queue order carries no model signal: permutation tests, on the demo pool and on
100 random multi-run worlds, that a reviewer's position is independent of every system's ranks and top k.

The statistic of one queue is the largest absolute value, over the systems, of Spearman's correlation between
position and the system's rank of the item and of the mean-position gap between the items in its top k and the
others, over the whole queue, the mean over queries of the squared correlation of position with rank and with top-k
membership within the query, and the same for how many systems hold the item in their top k. Its null distribution
draws positions the way the design does (``scoring.stats.permutation``, design "blocks": whole queries in a
random order, items shuffled within), so no position, within a query or across queries, may follow a rank.

Every key is pinned (pool and item ids, reviewer ids, the seeds), so the p-values are fixed numbers, not a coin
tossed at each run. Over 100 worlds a few p-values below 0.01 happen by chance under independence: the worlds
are combined (Fisher's method) and the count below 0.01 is checked against the binomial, each at 0.01. The old
order (the fewest-judgment tiers, reconstructed) must fail the same tests, or the tests would have no power.
"""

from __future__ import annotations

import random

import pytest

from benchmarks.labels.pooling import SystemRanking, depth_k_pool, figure_needs, query_tiers, work_order
from benchmarks.labels.pools import KEYWORD, review_pool_declare, run_rankings, system_key
from reviewapp.review.assignment.services import assignment_sort_key, pool_assign_detail
from reviewapp.review.errors import ReviewError
from reviewapp.review.judgments.models import ReviewItem
from reviewapp.review.pools.models import ReviewPool
from reviewapp.review.pools.services import pool_create_model
from reviewapp.review.workspace.queue import reviewer_queues
from reviewapp.review.workspace.selectors import reviewer_item
from scoring.stats.permutation import (
    BLOCKS,
    binomial_excess,
    fisher_combined,
    max_abs_statistic,
    mean_difference_statistic,
    permutation_test,
    spearman_statistic,
    within_groups_statistic,
)
from tests.benchmarks.labels.fixtures import rerank_world
from tests.factories import client_for

K = 5
WORLDS = 100
LEVEL = 0.01
OLD_MIN_TIER = 5  # the old work order merged neighbouring tiers until each held five items


def _queue_p_value(order: list[tuple[str, str]], rankings: list[SystemRanking], *, seed: int,
                   n_resamples: int = 1999) -> float:
    """P-value of "position independent of every system's rank and top k" for one queue (items in order)."""
    rank = {(r.system, r.qid, d): n for r in rankings for n, d in enumerate(r.ranked)}
    systems = list(dict.fromkeys(r.system for r in rankings))
    queries = [qid for qid, _ in order]
    statistics = []
    for system in systems:
        ranks = [rank[(system, qid, doc)] for qid, doc in order]
        top = [r < K for r in ranks]
        statistics += [spearman_statistic(ranks), mean_difference_statistic(top),
                       within_groups_statistic(ranks, queries), within_groups_statistic(top, queries)]
    held = [sum(rank[(s, qid, doc)] < K for s in systems) for qid, doc in order]
    statistics += [spearman_statistic(held), within_groups_statistic(held, queries)]
    return permutation_test(max_abs_statistic(*statistics), list(range(len(order))), design=BLOCKS,
                            groups=queries, n_resamples=n_resamples, seed=seed).p_value


def _queue(items, priority: dict, *, pool_id: str, reviewer_id: int, public_id) -> list[tuple[str, str]]:
    """One reviewer's queue as the review core orders it: tier, then the reviewer's keyed shuffle."""
    return sorted(items, key=lambda i: (priority[i], assignment_sort_key(
        pool_public_id=pool_id, reviewer_id=reviewer_id, item_public_id=public_id(i))))


def _old_priority(rankings: list[SystemRanking], pool) -> dict:
    """The fewest-judgment tiers the queue followed before (nothing judged yet: two judgments an item)."""
    return work_order(figure_needs(rankings, pool), dict.fromkeys(pool, 2)).priority_of(min_size=OLD_MIN_TIER)


def _new_priority(pool, seed: str) -> dict:
    tier_of = query_tiers((qid for qid, _ in pool), seed=seed)
    return {item: tier_of[item[0]] for item in pool}


def _world(rng: random.Random) -> list[SystemRanking]:
    """2-3 systems ranking 3-6 queries of 8-15 candidates: a shared relevance plus each system's own noise."""
    systems = [f"s{n}" for n in range(rng.randint(2, 3))]
    rankings = []
    for q in range(rng.randint(3, 6)):
        docs = [f"d{n}" for n in range(rng.randint(8, 15))]
        relevance = {d: rng.gauss(0, 1) for d in docs}
        split = rng.choice(["dev", "heldout"])
        for system in systems:
            noise = rng.uniform(0.3, 1.5)
            score = {d: relevance[d] + rng.gauss(0, noise) for d in docs}
            rankings.append(SystemRanking(system, f"q{q}", split, tuple(sorted(docs, key=lambda d: -score[d]))))
    return rankings


def _random_world_p_values(*, old: bool) -> list[float]:
    rng = random.Random(20261231)
    out = []
    for n in range(WORLDS):
        rankings = _world(rng)
        pool = depth_k_pool(rankings, K)
        priority = _old_priority(rankings, pool) if old else _new_priority(pool, seed=f"world-{n}")
        order = _queue(list(pool), priority, pool_id=f"pool-{n}", reviewer_id=7,
                       public_id=lambda item: f"{item[0]}/{item[1]}")
        out.append(_queue_p_value(order, rankings, seed=n, n_resamples=999))
    return out


def test_on_100_random_worlds_the_queue_position_is_independent_of_every_systems_ranks_and_top_k():
    p = _random_world_p_values(old=False)
    below = sum(x < LEVEL for x in p)
    print(f"new order, {WORLDS} worlds: Fisher p = {fisher_combined(p):.3f}, {below} below {LEVEL}, "
          f"binomial p = {binomial_excess(below, WORLDS, LEVEL):.3f}, min p = {min(p):.4f}")
    assert fisher_combined(p) >= LEVEL
    assert binomial_excess(below, WORLDS, LEVEL) >= LEVEL


def test_on_100_random_worlds_the_old_fewest_judgment_order_is_detected():
    p = _random_world_p_values(old=True)
    below = sum(x < LEVEL for x in p)
    print(f"old order, {WORLDS} worlds: Fisher p = {fisher_combined(p):.3g}, {below} below {LEVEL}, "
          f"median p = {sorted(p)[WORLDS // 2]:.4f}")
    assert fisher_combined(p) < 1e-6
    assert binomial_excess(below, WORLDS, LEVEL) < 1e-6


# --------------------------------------------------------------------------- the demo pool


@pytest.fixture
def demo_pool(db, django_user_model):
    """The demo's pool rule (top five keyword ∪ top five reranked of one rerank run, two reviewers) on a small
    synthetic world, with every key pinned: pool and item ids, reviewer ids."""
    from django.contrib.auth.models import Group

    from reviewapp.core.auth.roles import ensure_role_groups

    run = rerank_world(seed=11, queries=12)
    pool = review_pool_declare(rerank_run=run).pool
    ReviewPool.objects.filter(pk=pool.pk).update(public_id="demo-pool-pinned")
    for item in ReviewItem.objects.filter(pool_id=pool.pk):
        ReviewItem.objects.filter(pk=item.pk).update(public_id=f"pin-{item.query_id}-{item.doc_id}"[:32])
    ensure_role_groups()
    people = []
    for pk, name in ((910_001, "pinned_reviewer"), (910_002, "pinned_reviewer2")):
        user = django_user_model.objects.create(pk=pk, username=name)
        user.groups.add(Group.objects.get(name="reviewer"))
        people.append(django_user_model.objects.get(pk=pk))
    pool = ReviewPool.objects.get(pk=pool.pk)
    pool_assign_detail(pool=pool, reviewers=people)
    rankings = run_rankings(rerank_run=run)
    systems = [SystemRanking(KEYWORD, r.qid, r.split, r.keyword) for r in rankings]
    systems += [SystemRanking(system_key(run), r.qid, r.split, r.reranked) for r in rankings]
    return pool, people, systems


def test_on_the_demo_pool_the_queue_position_is_independent_of_both_systems_ranks_and_top_five(demo_pool):
    pool, people, systems = demo_pool
    items = {i.public_id: i for i in pool.items.all()}
    members = {(i.query_id, i.doc_id): i for i in items.values()}
    old_priority = _old_priority(systems, depth_k_pool(systems, K))
    assert set(old_priority) == set(members)
    for seed, reviewer in enumerate(people):
        queue = [(items[e.item_id].query_id, items[e.item_id].doc_id)
                 for e in reviewer_queues(reviewer=reviewer)[0].entries]
        # what the review core shows is the rule the random worlds test
        new_priority = {key: item.priority for key, item in members.items()}
        assert queue == _queue(list(members), new_priority, pool_id=pool.public_id, reviewer_id=reviewer.pk,
                               public_id=lambda key: members[key].public_id)
        p_new = _queue_p_value(queue, systems, seed=seed)
        old = _queue(list(members), old_priority, pool_id=pool.public_id, reviewer_id=reviewer.pk,
                     public_id=lambda key: members[key].public_id)
        p_old = _queue_p_value(old, systems, seed=seed)
        print(f"demo pool, reviewer {reviewer.pk}: p = {p_new:.4f} (old order: p = {p_old:.4f})")
        assert p_new >= LEVEL
        assert p_old < LEVEL


def test_the_queue_page_the_api_and_next_on_the_item_page_follow_one_order(demo_pool):
    pool, people, _systems = demo_pool
    reviewer = people[0]
    client = client_for(reviewer)
    api = [e["item"] for e in client.get("/api/v1/review/queue/").json()[0]["items"]]
    # The page lists the queue a page at a time: read every page, in turn.
    html, page = "", 1
    while True:
        body = client.get(f"/review/workspace/?page={page}").content.decode()
        html += body.split('<ol class="queue">')[1].split("</ol>")[0]
        if 'data-testid="next-page"' not in body:
            break
        page += 1
    assert page > 1
    places = [html.index(f"/review/workspace/items/{i}/") for i in api]
    assert places == sorted(places)
    walked = [api[0]]
    while (following := reviewer_item(reviewer=reviewer, item_id=walked[-1]).next_id) is not None:
        walked.append(following)
    assert walked == api == [e.item_id for e in reviewer_queues(reviewer=reviewer)[0].entries]
    # whole queries, one after another
    queries = [pool.items.get(public_id=i).query_id for i in api]
    assert len({q for n, q in enumerate(queries) if n == 0 or queries[n - 1] != q}) == len(set(queries))


def test_a_pool_whose_tiers_split_a_query_is_refused(db):
    def item(qid: str, doc: str, priority: int) -> dict:
        return {"query_id": qid, "doc_id": doc, "query_text": f"question {qid}", "passage_text": f"passage {doc}",
                "priority": priority}

    with pytest.raises(ReviewError, match=r"items\[1\]\.priority: 2 differs from items\[0\]\.priority 1 .*'q1'"):
        pool_create_model(name="split tiers", kind="passage", declared_rule="test", items=[
            item("q1", "a", 1), item("q1", "b", 2), item("q2", "c", 1)])
    whole = pool_create_model(name="whole tiers", kind="passage", declared_rule="test", items=[
        item("q1", "a", 2), item("q1", "b", 2), item("q2", "c", 1)])
    assert whole.items.count() == 3


def test_the_migration_gives_pools_declared_under_the_old_order_whole_query_tiers(db):
    import importlib

    from django.apps import apps

    migration = importlib.import_module("reviewapp.review.migrations.0010_queue_tiers_whole_queries")
    items = [{"query_id": q, "doc_id": d, "query_text": f"question {q}", "passage_text": f"passage {d}"}
             for q in ("q1", "q2", "q3") for d in "abcd"]
    old = pool_create_model(name="old tiers", kind="passage", declared_rule="test", items=items)
    plain = pool_create_model(name="one tier", kind="passage", declared_rule="test", items=items)
    for n, item in enumerate(old.items.order_by("query_id", "doc_id")):
        ReviewItem.objects.filter(pk=item.pk).update(priority=1 + n % 3)  # tiers across queries, as before
    migration.whole_query_tiers(apps, None)
    tiers = dict(old.items.values_list("query_id", "priority"))
    assert sorted(tiers.values()) == [1, 2, 3]
    for query_id, priority in old.items.values_list("query_id", "priority"):
        assert tiers[query_id] == priority
    assert set(plain.items.values_list("priority", flat=True)) == {0}
