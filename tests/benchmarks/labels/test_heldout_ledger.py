"""Human-label figures of held-out queries are held-out figures: every page, export and API read is recorded."""

from __future__ import annotations

import pytest

from benchmarks.reports.models import HeldoutExposure
from benchmarks.rerank.models import RerankRun
from benchmarks.suites.models import SuiteQuery
from tests.benchmarks.labels.fixtures import declared_world, judge, random_grades
from tests.helpers import only_savepoint_tests, rows_for_the_module

pytestmark = pytest.mark.django_db

READS = [
    ("/benchmarks/labels/rerank/{pk}/human-metrics/", HeldoutExposure.Purpose.PAGE),
    ("/benchmarks/labels/rerank/{pk}/human-metrics/human-metrics.json", HeldoutExposure.Purpose.EXPORT),
    ("/api/v1/benchmarks/rerank-runs/{pk}/human-metrics/", HeldoutExposure.Purpose.API),
    ("/benchmarks/labels/rerank/{pk}/calibration/", HeldoutExposure.Purpose.PAGE),
    ("/benchmarks/labels/rerank/{pk}/calibration/calibration.json", HeldoutExposure.Purpose.EXPORT),
    ("/api/v1/benchmarks/rerank-runs/{pk}/calibration/", HeldoutExposure.Purpose.API),
]


@pytest.fixture(scope="module")
def _judged_runs(django_db_setup, django_db_blocker):
    """Two judged runs built once for the module (each test reads one, in its own savepoint): every split judged,
    and the dev split only. Two chapters and two pairs of reviewers: one database holds both."""
    def build() -> dict[str, int]:
        return {"all": _judged(seed=31, chapter=998, names=("hl_a1", "hl_a2"), splits={"dev", "heldout"}),
                "dev": _judged(seed=32, chapter=997, names=("hl_d1", "hl_d2"), splits={"dev"})}

    with rows_for_the_module(django_db_blocker, build) as keys:
        yield keys


@pytest.fixture
def judged_runs(_judged_runs, request, db):
    only_savepoint_tests(request)
    return {name: RerankRun.objects.get(pk=pk) for name, pk in _judged_runs.items()}


def _judged(*, seed: int, chapter: int, names: tuple[str, str], splits: set[str]) -> int:
    run, pool, reviewers = declared_world(seed=seed, reviewer_names=names, chapter=chapter, queries=6)
    split_of = dict(SuiteQuery.objects.filter(suite=run.suite).values_list("qid", "split"))
    judge(pool, reviewers, {key: grade for key, grade in random_grades(pool, seed=5).items()
                            if split_of[key[0]] in splits})
    return run.pk


@pytest.mark.parametrize(("path", "purpose"), READS)
def test_reading_held_out_human_figures_appends_a_ledger_row(path, purpose, judged_runs, stakeholder_user,
                                                             stakeholder_client):
    run = judged_runs["all"]
    before = HeldoutExposure.objects.count()
    response = stakeholder_client.get(path.format(pk=run.pk))
    assert response.status_code == 200
    rows = list(HeldoutExposure.objects.order_by("id"))[before:]
    assert len(rows) == 1
    assert (rows[0].suite_id, rows[0].split, rows[0].purpose, rows[0].rerank_run_id, rows[0].scored_by_id) == (
        run.suite_id, "heldout", purpose, run.pk, stakeholder_user.pk)


@pytest.mark.parametrize(("path", "purpose"), READS[::3])
def test_dev_only_human_figures_append_nothing(path, purpose, judged_runs, stakeholder_client):
    assert stakeholder_client.get(path.format(pk=judged_runs["dev"].pk)).status_code == 200
    assert not HeldoutExposure.objects.exists()
