"""A review pool of several rerank runs: depth-k pooling, contributors, work order, judge once, the form."""

from __future__ import annotations

import random
import threading
from concurrent.futures import ThreadPoolExecutor

import pytest
from django.db import connection, connections

from benchmarks.labels.pooling import SystemRanking, depth_k_pool, figure_needs, judgments_needed, order_cost
from benchmarks.labels.pools import (
    KEYWORD,
    ReviewPoolError,
    review_pool_declare,
    review_pool_declare_runs,
    review_pool_plan_runs,
    run_rankings,
    system_key,
)
from benchmarks.labels.selectors import run_pools
from benchmarks.rerank.models import RerankGrade, RerankRun
from reviewapp.review.agreement.judgments import pool_completed_judgments
from reviewapp.review.agreement.selectors import pool_labels
from reviewapp.review.assignment.models import Assignment
from reviewapp.review.pools.models import ReviewPool
from reviewapp.review.pools.refs import pool_model
from tests.benchmarks.labels.fixtures import judge, rerank_world


def another_rerank(run: RerankRun, *, seed: int) -> RerankRun:
    """A second finished rerank run of the same retrieval run: the same candidates, other random P(useful)."""
    from reviewapp.providers.models import Ledger

    rng = random.Random(seed)
    ledger = Ledger.objects.create(purpose="tests", provider="local", model_id=f"other-{seed}", max_requests=400,
                                   max_input_tokens=2_000_000)
    other = RerankRun.objects.create(
        suite=run.suite, retrieval_run=run.retrieval_run, ledger=ledger, provider="local",
        model_id=f"other-{seed}", method="local", question_version=run.question_version,
        question_sha256=run.question_sha256, status="done")
    grades = []
    for g in RerankGrade.objects.filter(run=run).order_by("id"):
        p = [rng.random() for _ in range(4)]
        total = sum(p)
        p = [x / total for x in p]
        grades.append(RerankGrade(run=other, query=g.query, candidate=g.candidate, request_index=g.request_index,
                                  position_in_request=g.position_in_request, request_key=g.request_key,
                                  status="graded", p0=p[0], p1=p[1], p2=p[2], p3=p[3], p_useful=p[2] + p[3],
                                  confidence=0.5))
    RerankGrade.objects.bulk_create(grades)
    return other


@pytest.fixture
def runs(db):
    first = rerank_world(seed=7, queries=6)
    return [first, another_rerank(first, seed=1), another_rerank(first, seed=2)]


def _systems(runs) -> list[SystemRanking]:
    """Keyword order and each run's reranked order, from the report's adapter, per query."""
    base = run_rankings(rerank_run=runs[0])
    out = [SystemRanking(KEYWORD, r.qid, r.split, r.keyword) for r in base]
    for run in runs:
        out += [SystemRanking(system_key(run), r.qid, r.split, r.reranked) for r in run_rankings(rerank_run=run)]
    return out


def test_the_pool_is_the_union_of_every_systems_top_k_and_records_who_contributed_each_item(runs):
    pool = review_pool_declare_runs(rerank_runs=runs[::-1], k=5).pool
    systems = _systems(runs)
    expected = {(r.qid, d) for r in systems for d in r.ranked[:5]}
    items = {(i.query_id, i.doc_id): i for i in pool_model(pool).items.all()}
    assert set(items) == expected
    for (qid, docid), item in items.items():
        assert set(item.external_ref["contributed_by"]) == {
            r.system for r in systems if r.qid == qid and docid in r.ranked[:5]}
        assert item.priority >= 1
    params = pool.declared_params
    assert params["rule"] == "depth-k-pool" and params["rerank_runs"] == sorted(r.pk for r in runs)
    assert params["systems"] == [KEYWORD, *(system_key(r) for r in sorted(runs, key=lambda r: r.pk))]
    assert "Depth-5 pooling" in pool.declared_rule and "4 systems" in pool.declared_rule
    # every run finds the pool among its own, so its human-label pages can read it
    for run in runs:
        assert pool.pk in {p.pk for p in run_pools(rerank_run=run)}


def test_the_tiers_are_whole_queries_in_a_keyed_order_and_beat_one_shuffled_tier(runs):
    plan = review_pool_plan_runs(rerank_runs=runs, k=5)
    work = plan.work
    systems = _systems(runs)
    pool = depth_k_pool(systems, 5)
    cost = dict.fromkeys(pool, 2)  # nothing judged yet: two judgments per item
    needs = figure_needs(systems, pool)
    assert work.needed == judgments_needed(needs, cost) and work.needed["total"] == 2 * len(pool)
    assert work.needed_p5[KEYWORD] == 2 * len({(r.qid, d) for r in systems if r.system == KEYWORD
                                               for d in r.ranked[:5]})
    tiers: dict[int, list] = {}
    for item in plan.items:
        tiers.setdefault(item["priority"], []).append((item["query_id"], item["doc_id"]))
    ordered = [tuple(tiers[n]) for n in sorted(tiers)]
    # One tier per query, every query in it whole: no tier says which passages a system ranked first.
    assert [{qid for qid, _ in tier} for tier in ordered] == [{qid} for qid in dict.fromkeys(
        qid for tier in ordered for qid, _ in tier)]
    assert len(ordered) == work.tiers == len({qid for qid, _ in pool})
    assert work.mean_judgments == pytest.approx(order_cost(ordered, needs, cost) / len(needs))
    assert work.mean_judgments < work.mean_judgments_shuffled
    # The same declaration keeps its order; another k is another key.
    assert [i["priority"] for i in review_pool_plan_runs(rerank_runs=runs, k=5).items] == [
        i["priority"] for i in plan.items]


def test_runs_of_another_candidate_set_or_unfinished_runs_are_refused_with_a_reason(runs):
    from benchmarks.retrieval.services import retrieval_run_create

    # another retrieval run of the same suite: another candidate set, whatever its contents
    elsewhere = another_rerank(runs[0], seed=4)
    RerankRun.objects.filter(pk=elsewhere.pk).update(
        retrieval_run=retrieval_run_create(suite=runs[0].suite, k=20))
    elsewhere.refresh_from_db()
    with pytest.raises(ReviewPoolError, match="different candidate sets"):
        review_pool_plan_runs(rerank_runs=[runs[0], elsewhere])
    RerankRun.objects.filter(pk=runs[1].pk).update(status="running")
    runs[1].refresh_from_db()
    with pytest.raises(ReviewPoolError, match=f"rerank run #{runs[1].pk} is running"):
        review_pool_plan_runs(rerank_runs=runs)
    with pytest.raises(ReviewPoolError, match="k must be"):
        review_pool_plan_runs(rerank_runs=[runs[0]], k=0)


def test_a_second_declaration_reuses_each_reviewers_judgments_and_says_how_many(runs, reviewer_user, reviewer2_user):
    people = [reviewer_user, reviewer2_user]
    single = review_pool_declare(rerank_run=runs[0], reviewers=people).pool
    graded = {(i.query_id, i.doc_id): 2 for i in pool_model(single).items.order_by("query_id", "doc_id")[:7]}
    judge(single, people, graded)

    plan = review_pool_plan_runs(rerank_runs=runs, reviewer_ids=[u.pk for u in people])
    result = review_pool_declare_runs(rerank_runs=runs, reviewers=people)

    shared = pool_model(single).items.count()
    new = pool_model(result.pool).items.count() - shared
    assert (result.assigned, result.reused, result.reused_complete) == (2 * new, 2 * shared, 2 * len(graded))
    assert f"{2 * shared} reused" in result.message
    assert plan.work.items_judged_enough == len(graded)
    assert plan.work.needed["total"] == 2 * (pool_model(result.pool).items.count() - len(graded))
    # the reused judgments label the new pool at once, counted once per reviewer
    labelled = {(x.query_id, x.doc_id) for x in pool_labels(pool=result.pool, grade_type="passage") if x.is_grade}
    assert labelled == set(graded)
    assert len(pool_completed_judgments(pool=result.pool)) == 2 * len(graded)
    # each reviewer's queue of the new pool holds only items they did not already hold
    held = set(Assignment.objects.filter(pool_id=single.pk).values_list("item__query_id", "item__doc_id"))
    for reviewer in people:
        queue = set(Assignment.objects.filter(pool_id=result.pool.pk, reviewer=reviewer)
                    .values_list("item__query_id", "item__doc_id"))
        assert not queue & held
    # judged items keep their query's tier: what was judged before (most often some system's top) is not told
    # by the order either
    tier_of = dict(pool_model(result.pool).items.values_list("query_id", "priority"))
    for query_id, priority in pool_model(result.pool).items.values_list("query_id", "priority"):
        assert tier_of[query_id] == priority


def test_declaring_twice_returns_the_same_pool_whatever_the_run_order(runs, reviewer_user, reviewer2_user):
    first = review_pool_declare_runs(rerank_runs=runs, reviewers=[reviewer_user, reviewer2_user])
    again = review_pool_declare_runs(rerank_runs=[runs[2], runs[0], runs[1], runs[0]],
                                     reviewers=[reviewer_user, reviewer2_user])
    assert first.created and not again.created and again.pool.pk == first.pool.pk
    assert (again.assigned, again.reused) == (0, 0)
    assert ReviewPool.objects.filter(declared_params__rule="depth-k-pool").count() == 1
    other_k = review_pool_declare_runs(rerank_runs=runs, k=6)
    assert other_k.created and other_k.pool.pk != first.pool.pk


_sqlite_lock = threading.Lock()


@pytest.mark.django_db(transaction=True)
def test_two_declarations_at_once_make_one_pool_and_never_double_its_items(reviewer_user, reviewer2_user):
    first = rerank_world(seed=9, queries=4)
    runs = [first, another_rerank(first, seed=3)]
    barrier = threading.Barrier(2) if connection.vendor != "sqlite" else None

    def declare(_n):
        try:
            if barrier is not None:
                barrier.wait()
            if connection.vendor == "sqlite":  # one writer at a time: the test then checks the bookkeeping
                with _sqlite_lock:
                    return review_pool_declare_runs(rerank_runs=runs, reviewers=[reviewer_user, reviewer2_user])
            return review_pool_declare_runs(rerank_runs=runs, reviewers=[reviewer_user, reviewer2_user])
        finally:
            connections.close_all()

    with ThreadPoolExecutor(max_workers=2) as pool_runner:
        results = list(pool_runner.map(declare, range(2)))
    pools = ReviewPool.objects.filter(declared_params__rule="depth-k-pool")
    assert pools.count() == 1 and sorted(r.created for r in results) == [False, True]
    pool = pools.get()
    assert pool_model(pool).assignments.count() == 2 * pool_model(pool).items.count()
    assert pool_model(pool).items.count() == len({(i.query_id, i.doc_id) for i in pool_model(pool).items.all()})


def test_the_form_previews_what_each_systems_figures_need_then_declares(runs, admin_client_, reviewer_user,
                                                                       reviewer2_user):
    url = f"/benchmarks/labels/rerank/{runs[0].pk}/review-pool/"
    page = admin_client_.get(url).content.decode()
    assert f"#{runs[1].pk} local:other-1" in page and 'id="needs-table"' in page
    form = {"k": 5, "reviewers_per_item": 2, "reviewers": [reviewer_user.pk, reviewer2_user.pk],
            "other_runs": [runs[1].pk, runs[2].pk]}
    preview = admin_client_.post(url, {**form, "preview": "1"})
    html = preview.content.decode()
    plan = review_pool_plan_runs(rerank_runs=runs, reviewer_ids=[reviewer_user.pk, reviewer2_user.pk])
    assert preview.status_code == 200 and not ReviewPool.objects.exists()
    for key, _label, p5, needed in plan.work.rows():
        assert f'id="needs-{key}"' in html
        assert f'<td class="num">{p5:.0f}</td><td class="num">{needed:.0f}</td>' in html
    assert f'id="needs-total">{plan.work.needed["total"]:.0f}<' in html
    htmx = admin_client_.post(f"{url}?preview=1", form, headers={"HX-Request": "true"})
    assert htmx.status_code == 200 and 'id="needs-table"' in htmx.content.decode()
    declared = admin_client_.post(url, form)
    pool = ReviewPool.objects.get()
    assert declared.status_code == 302 and pool.declared_params["rule"] == "depth-k-pool"
    assert pool_model(pool).assignments.count() == 2 * pool_model(pool).items.count()
    mixed = admin_client_.post(url, {**form, "explicit": "q00 NRS_x"})
    assert mixed.status_code == 400 and "explicit list belongs to one run" in mixed.content.decode()


def test_the_command_declares_a_pool_of_several_runs_and_says_what_it_reused(runs, reviewer_user, reviewer2_user,
                                                                              capsys):
    from django.core.management import call_command
    from django.core.management.base import CommandError

    single = review_pool_declare(rerank_run=runs[0], reviewers=[reviewer_user, reviewer2_user]).pool
    names = f"{reviewer_user.username},{reviewer2_user.username}"
    call_command("declare_review_pool", "--rerank-run", str(runs[0].pk), "--with-run", str(runs[1].pk),
                 "--assign", names)
    out = capsys.readouterr().out
    pool = ReviewPool.objects.get(declared_params__rule="depth-k-pool")
    assert pool.declared_params["rerank_runs"] == [runs[0].pk, runs[1].pk]
    assert f"{2 * pool_model(single).items.count()} reused" in out
    with pytest.raises(CommandError, match="--with-run: no rerank run"):
        call_command("declare_review_pool", "--rerank-run", str(runs[0].pk), "--with-run", "999999")


def test_judging_the_pool_in_its_order_completes_every_systems_figures_on_the_leaderboard(
        runs, reviewer_user, reviewer2_user):
    from benchmarks.reports.selectors import leaderboard_build

    people = [reviewer_user, reviewer2_user]
    pool = review_pool_declare_runs(rerank_runs=runs, reviewers=people).pool
    board = leaderboard_build(run=runs[0].retrieval_run, reranks=runs, replicates=1000)
    assert all(not row.human for split in board.splits for row in split.rows)
    # the first tier (one whole query) alone completes some figure (the order is worth following) ...
    first = min(pool_model(pool).items.values_list("priority", flat=True))
    judge(pool, people, {(i.query_id, i.doc_id): 2 for i in pool_model(pool).items.filter(priority=first)})
    systems = _systems(runs)
    labelled = {(i.query_id, i.doc_id) for i in pool_model(pool).items.filter(priority=first)}
    needs = figure_needs(systems, depth_k_pool(systems, 5))
    assert any(items <= labelled for items in needs.values())
    # ... and the whole pool completes every system's judged P@5 and pooled nDCG@5, in every split
    rest = pool_model(pool).items.exclude(priority=first)
    judge(pool, people, {(i.query_id, i.doc_id): 1 + n % 3 for n, i in enumerate(rest)})
    board = leaderboard_build(run=runs[0].retrieval_run, reranks=runs, replicates=1000)
    rows = [row for split in board.splits for row in split.rows]
    assert len(rows) == 2 * 4 and all(set(row.human) == {"P@5", "nDCG@5"} for row in rows)


def test_the_plan_api_answers_admins_what_each_system_needs_and_refuses_bad_runs(
        runs, admin_client_, stakeholder_client):
    url = f"/api/v1/benchmarks/rerank-runs/{runs[0].pk}/review-pool-plan/"
    assert stakeholder_client.get(url).status_code == 403
    body = admin_client_.get(f"{url}?with={runs[1].pk}&with={runs[2].pk}&k=5").json()
    plan = review_pool_plan_runs(rerank_runs=runs, k=5)
    assert body["items"] == len(plan.items) and body["total_judgments"] == plan.work.needed["total"]
    assert [(s["system"], s["p5_judgments"], s["judgments"]) for s in body["systems"]] == [
        (key, p5, needed) for key, _label, p5, needed in plan.work.rows()]
    assert admin_client_.get(f"{url}?with=999999").status_code == 400
    assert "k must be" in admin_client_.get(f"{url}?k=0").json()["error"]


def test_a_depth_three_pool_is_declared_through_the_form_and_names_the_figures_it_cannot_complete(
        runs, admin_client_, reviewer_user, reviewer2_user):
    """k = 3 answered a 500 ("the tiers leave figures incomplete")."""
    url = f"/benchmarks/labels/rerank/{runs[0].pk}/review-pool/"
    form = {"k": 3, "reviewers_per_item": 2, "reviewers": [reviewer_user.pk, reviewer2_user.pk]}
    preview = admin_client_.post(url, {**form, "preview": "1"})
    html = preview.content.decode()
    assert preview.status_code == 200 and 'id="out-of-reach"' in html and "With k = 3" in html
    declared = admin_client_.post(url, form)
    pool = ReviewPool.objects.get()
    assert declared.status_code == 302 and pool.declared_params["k"] == 3
    assert pool_model(pool).assignments.count() == 2 * pool_model(pool).items.count()
    # Several runs too: a figure is out of reach when the union of the systems' top three misses part of what it
    # needs (a system's top five; for nDCG@5 the query's pool as well).
    plan = review_pool_plan_runs(rerank_runs=runs, k=3)
    systems = _systems(runs)
    pool = depth_k_pool(systems, 3)
    missing = [key for key, items in figure_needs(systems, pool).items() if not items <= set(pool)]
    assert plan.work.figures_out_of_reach == len(missing) > 0
    assert review_pool_plan_runs(rerank_runs=runs, k=5).work.figures_out_of_reach == 0
