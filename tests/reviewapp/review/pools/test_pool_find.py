"""Jobs find the pools they declared through the review core."""

from __future__ import annotations

from reviewapp.review.pools.selectors import pool_find


def test_a_job_finds_its_pools_by_external_ref(db):
    from reviewapp.review.pools.services import pool_create
    from tests.reviewapp.review.conftest import make_items

    mine = pool_create(name="a", kind="passage", items=make_items(1, 1), declared_rule="x",
                                external_ref={"app": "benchmarks", "run": 7})
    pool_create(name="b", kind="passage", items=make_items(1, 1), declared_rule="x",
                         external_ref={"app": "benchmarks", "run": 8})
    assert pool_find(external_ref={"app": "benchmarks", "run": 7}) == [mine]
