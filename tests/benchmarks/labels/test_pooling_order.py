"""Depth-k pooling and the work order, against definitions and an exhaustive search (pure, no database)."""

from __future__ import annotations

import itertools
import random

import pytest

from benchmarks.labels.pooling import (
    SystemRanking,
    depth_k_pool,
    figure_needs,
    judgments_needed,
    optimal_cost,
    order_cost,
    work_order,
)
from scoring.ir.ranking import judged_precision_at_5, pooled_ndcg_at_5

INSTANCES = 200
MAX_ITEMS = 12  # items still needing judgments: 2^12 states keep the exhaustive search quick


def _instance(rng: random.Random) -> tuple[list[SystemRanking], dict, dict]:
    """2-4 systems ranking 1-3 queries of 5-9 candidates, depth 5 or 6; each item needs 0-2 more judgments."""
    systems = [f"s{n}" for n in range(rng.randint(2, 4))]
    rankings = []
    for q in range(rng.randint(1, 3)):
        docs = [f"d{n}" for n in range(rng.randint(5, 9))]
        split = rng.choice(["dev", "heldout"])
        for system in systems:
            ranked = docs[:]
            rng.shuffle(ranked)
            rankings.append(SystemRanking(system, f"q{q}", split, tuple(ranked)))
    pool = depth_k_pool(rankings, rng.choice([5, 5, 6]))
    cost = {item: rng.choice([0, 1, 1, 2, 2, 2]) for item in pool}
    return rankings, pool, cost


def _instances(seed: int):
    rng = random.Random(seed)
    made = 0
    while made < INSTANCES:
        rankings, pool, cost = _instance(rng)
        if sum(1 for c in cost.values() if c > 0) > MAX_ITEMS:
            continue
        made += 1
        yield rankings, pool, cost


def test_the_order_completes_figures_within_ten_percent_of_the_exhaustive_optimum_on_200_random_instances():
    ratios = []
    for rankings, pool, cost in _instances(seed=20261201):
        needs = figure_needs(rankings, pool)
        order = work_order(needs, cost)
        best = optimal_cost(needs, cost)
        # The greedy is priced at the end of each tier (any shuffle inside it), the optimum item by item.
        assert order_cost(order.tiers, needs, cost) == pytest.approx(order.cost)
        assert order.cost <= 1.10 * best + 1e-9, (order.cost, best, order.tiers)
        ratios.append(order.cost / best if best else 1.0)
    assert len(ratios) == INSTANCES
    assert max(ratios) >= 1.0 - 1e-9  # the optimum is a lower bound, never beaten


def test_the_exhaustive_search_agrees_with_trying_every_order_on_tiny_instances():
    rng = random.Random(5)
    checked = 0
    while checked < 30:
        rankings, pool, cost = _instance(rng)
        todo = [item for item, c in cost.items() if c > 0]
        if len(todo) > 6:
            continue
        needs = figure_needs(rankings, pool)
        brute = min(order_cost([(item,) for item in perm], needs, cost) for perm in itertools.permutations(todo))
        assert optimal_cost(needs, cost) == pytest.approx(brute)
        checked += 1


def test_every_item_is_ordered_once_and_judged_items_need_no_work():
    for rankings, pool, cost in itertools.islice(_instances(seed=3), 40):
        order = work_order(figure_needs(rankings, pool), cost)
        ordered = [item for tier in order.tiers for item in tier]
        assert sorted(ordered) == sorted(item for item, c in cost.items() if c > 0)
        assert order.done == {item for item, c in cost.items() if c == 0}
        priority = order.priority_of(min_size=5)
        assert set(priority) == set(pool)
        merged = order.merged(5)
        assert [item for tier in merged for item in tier] == ordered  # merging keeps the order
        assert all(len(tier) >= 5 for tier in merged[:-1])


def test_depth_k_pool_is_the_union_of_every_systems_top_k_with_its_contributors():
    rng = random.Random(1)
    for _ in range(50):
        rankings, _pool, _cost = _instance(rng)
        k = rng.randint(1, 6)
        pool = depth_k_pool(rankings, k)
        expected = {(r.qid, d) for r in rankings for d in r.ranked[:k]}
        assert set(pool) == expected
        for (qid, docid), systems in pool.items():
            assert set(systems) == {r.system for r in rankings if r.qid == qid and docid in r.ranked[:k]}


def test_a_figure_is_complete_exactly_when_the_metrics_define_it():
    """The needs of a figure are what scoring refuses to fill: P@5 and pooled nDCG@5 are None until labelled."""
    rng = random.Random(9)
    for _ in range(200):
        rankings, pool, _cost = _instance(rng)
        needs = figure_needs(rankings, pool)
        labels = {item: rng.randint(0, 3) for item in pool if rng.random() < 0.8}
        for r in rankings:
            graded = {d: g for (q, d), g in labels.items() if q == r.qid}
            members = {d for (q, d) in pool if q == r.qid}
            complete_p5 = needs[(r.system, f"query:{r.qid}", "P@5")] <= set(labels)
            complete_ndcg = needs[(r.system, f"query:{r.qid}", "nDCG@5")] <= set(labels)
            assert (judged_precision_at_5(list(r.ranked), graded) is not None) == complete_p5
            assert (pooled_ndcg_at_5(list(r.ranked), members, graded) is not None) == complete_ndcg


def test_judgments_needed_count_each_item_once_per_system_and_in_total():
    rankings = [SystemRanking("a", "q1", "dev", ("x", "y", "z", "u", "v", "w")),
                SystemRanking("b", "q1", "dev", ("w", "x", "y", "z", "u", "v"))]
    pool = depth_k_pool(rankings, 5)  # a's top five + w from b
    cost = {("q1", d): 2 for d in "xyzuvw"} | {("q1", "x"): 0}
    needs = figure_needs(rankings, pool)
    assert judgments_needed(needs, cost, metric="P@5") == {"a": 8, "b": 8, "total": 10}
    assert judgments_needed(needs, cost) == {"a": 10, "b": 10, "total": 10}  # nDCG@5 needs the whole pool


def test_the_order_beats_a_single_shuffled_tier_when_figures_can_complete_early():
    rankings = [SystemRanking(s, f"q{q}", "dev", tuple(f"d{(n + q + i) % 8}" for n in range(8)))
                for q in range(4) for i, s in enumerate(("a", "b", "c"))]
    pool = depth_k_pool(rankings, 5)
    cost = dict.fromkeys(pool, 2)
    needs = figure_needs(rankings, pool)
    order = work_order(needs, cost)
    assert order.cost < order_cost([tuple(pool)], needs, cost)
