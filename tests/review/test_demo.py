"""The review core's demo pool loads once, is assigned to the demo reviewers, and a second load changes nothing."""

from __future__ import annotations

import io

from django.contrib.auth.models import Group

from reviewapp import selectors
from reviewapp.demo import DEMO_POOL_NAME, load_demo
from reviewapp.models import Assignment, ReviewPool
from reviewapp.roles import ensure_role_groups


def test_the_demo_pool_is_idempotent_and_assigned(django_user_model, db, tmp_path):
    ensure_role_groups()
    for name in ("reviewer", "reviewer2"):
        django_user_model.objects.create_user(username=name, password="x-long-password").groups.add(
            Group.objects.get(name="reviewer")
        )
    load_demo(data_dir=tmp_path, stdout=io.StringIO())
    load_demo(data_dir=tmp_path, stdout=io.StringIO())
    pool = ReviewPool.objects.get(name=DEMO_POOL_NAME)
    assert ReviewPool.objects.count() == 1
    assert Assignment.objects.filter(pool=pool).count() == 2 * pool.items.count()
    assert selectors.pool_find(external_ref={}, kind="passage") == [pool]


def test_a_job_finds_its_pools_by_external_ref(db):
    from reviewapp import services
    from tests.review.conftest import make_items

    mine = services.pool_create(name="a", kind="passage", items=make_items(1, 1), declared_rule="x",
                                external_ref={"app": "benchmarks", "run": 7})
    services.pool_create(name="b", kind="passage", items=make_items(1, 1), declared_rule="x",
                         external_ref={"app": "benchmarks", "run": 8})
    assert selectors.pool_find(external_ref={"app": "benchmarks", "run": 7}) == [mine]
