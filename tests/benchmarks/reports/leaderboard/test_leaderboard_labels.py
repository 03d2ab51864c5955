"""Human-label columns of the leaderboard: shown only where labels are complete, counted where they are not."""

from __future__ import annotations

import pytest

from benchmarks.labels.metrics import human_inputs_load, human_metrics_compute
from benchmarks.labels.pools import review_pool_declare
from benchmarks.reports.leaderboard import KEYWORD
from benchmarks.reports.selectors import leaderboard_build
from tests.benchmarks.labels.fixtures import judge, random_grades, rerank_world
from tests.benchmarks.reports.leaderboard.test_leaderboard import _rerank, _reverse_keyword


@pytest.fixture
def world(db, reviewer_user, reviewer2_user):
    run = rerank_world(seed=11, queries=12)
    pool = review_pool_declare(rerank_run=run, reviewers=[reviewer_user, reviewer2_user]).pool
    return run, pool, [reviewer_user, reviewer2_user]


def test_a_fully_judged_pool_gives_the_label_metrics_page_figures_and_an_unpooled_run_says_what_is_missing(world):
    run, pool, reviewers = world
    judge(pool, reviewers, random_grades(pool, seed=9))
    other = _rerank(run.retrieval_run, _reverse_keyword, model="reverse")
    board = leaderboard_build(run=run.retrieval_run, reranks=[run, other], replicates=1000, seed=5)
    human = human_metrics_compute(human_inputs_load(rerank_run=run, pool=pool), replicates=1000, seed=5)
    for split in board.splits:
        rows = {r.system.key: r for r in split.rows}
        for metric_split in (s for s in human.splits if s.split == split.split):
            # Keyword order and the run the pool was declared from: the label-metrics page's own intervals.
            assert rows[KEYWORD].human[metric_split.metric] == metric_split.keyword.interval
            assert rows[f"rerank-{run.pk}"].human[metric_split.metric] == metric_split.reranked.interval
        reverse = rows[f"rerank-{other.pk}"]
        assert reverse.human == {}
        assert 0 < reverse.labels_judged < reverse.labels_needed
        assert reverse.labels_note == f"labels incomplete: {reverse.labels_judged} of {reverse.labels_needed} judged"


def test_one_unjudged_item_withdraws_the_columns_instead_of_filling_the_gap(world):
    run, pool, reviewers = world
    grades = random_grades(pool, seed=3)
    skipped = next(iter(grades))
    judge(pool, reviewers, {k: g for k, g in grades.items() if k != skipped})
    board = leaderboard_build(run=run.retrieval_run, reranks=[run], replicates=1000, seed=5)
    split = next(s for s in board.splits if any(q.qid == skipped[0] and q.split == s.split for q in board.queries))
    for row in split.rows:
        assert row.human == {}
        assert row.labels_judged == row.labels_needed - 1
    other = next(s for s in board.splits if s is not split)
    assert all(row.human for row in other.rows)
