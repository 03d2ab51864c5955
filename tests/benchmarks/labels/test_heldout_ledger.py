"""Human-label figures of held-out queries are held-out figures: every page, export and API read is recorded."""

from __future__ import annotations

import pytest

from benchmarks.labels.pools import review_pool_declare
from benchmarks.reports.models import HeldoutExposure
from benchmarks.suites.models import SuiteQuery
from tests.benchmarks.labels.fixtures import judge, random_grades, rerank_world

pytestmark = pytest.mark.django_db

READS = [
    ("/benchmarks/rerank/{pk}/human-metrics/", HeldoutExposure.Purpose.PAGE),
    ("/benchmarks/rerank/{pk}/human-metrics/human-metrics.json", HeldoutExposure.Purpose.EXPORT),
    ("/api/v1/benchmarks/rerank-runs/{pk}/human-metrics/", HeldoutExposure.Purpose.API),
    ("/benchmarks/rerank/{pk}/calibration/", HeldoutExposure.Purpose.PAGE),
    ("/benchmarks/rerank/{pk}/calibration/calibration.json", HeldoutExposure.Purpose.EXPORT),
    ("/api/v1/benchmarks/rerank-runs/{pk}/calibration/", HeldoutExposure.Purpose.API),
]


def _world(reviewer_user, reviewer2_user, *, splits: set[str]):
    run = rerank_world(seed=31, queries=12)
    pool = review_pool_declare(rerank_run=run, reviewers=[reviewer_user, reviewer2_user]).pool
    split_of = dict(SuiteQuery.objects.filter(suite=run.suite).values_list("qid", "split"))
    grades = {key: grade for key, grade in random_grades(pool, seed=5).items() if split_of[key[0]] in splits}
    judge(pool, [reviewer_user, reviewer2_user], grades)
    return run


@pytest.mark.parametrize(("path", "purpose"), READS)
def test_reading_held_out_human_figures_appends_a_ledger_row(path, purpose, reviewer_user, reviewer2_user,
                                                             stakeholder_user, stakeholder_client):
    run = _world(reviewer_user, reviewer2_user, splits={"dev", "heldout"})
    before = HeldoutExposure.objects.count()
    response = stakeholder_client.get(path.format(pk=run.pk))
    assert response.status_code == 200
    rows = list(HeldoutExposure.objects.order_by("id"))[before:]
    assert len(rows) == 1
    assert (rows[0].suite_id, rows[0].split, rows[0].purpose, rows[0].rerank_run_id, rows[0].scored_by_id) == (
        run.suite_id, "heldout", purpose, run.pk, stakeholder_user.pk)


@pytest.mark.parametrize(("path", "purpose"), READS[::3])
def test_dev_only_human_figures_append_nothing(path, purpose, reviewer_user, reviewer2_user, stakeholder_client):
    run = _world(reviewer_user, reviewer2_user, splits={"dev"})
    assert stakeholder_client.get(path.format(pk=run.pk)).status_code == 200
    assert not HeldoutExposure.objects.exists()
