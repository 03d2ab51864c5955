"""The calibration demo: an honest unjudged pool by default, and a synthetic pool marked as demo data everywhere."""

from __future__ import annotations

import io

import pytest
from django.contrib.auth import get_user_model

from benchmarks.labels.demo import SYNTHETIC_ACCOUNTS, load_demo_review
from benchmarks.labels.selectors import is_synthetic, run_pools
from reviewapp.review.judgments.models import Judgment
from reviewapp.review.pools.refs import pool_model
from tests.benchmarks.labels.fixtures import rerank_world


@pytest.fixture
def demo_reviewers(django_user_model, db):
    from django.contrib.auth.models import Group

    from reviewapp.core.auth.roles import ensure_role_groups

    ensure_role_groups()
    for name in ("reviewer", "reviewer2"):
        django_user_model.objects.create_user(username=name).groups.add(Group.objects.get(name="reviewer"))


def test_the_demo_declares_an_honest_pool_and_a_marked_synthetic_one_idempotently(demo_reviewers,
                                                                                   stakeholder_client):
    run = rerank_world(seed=31, queries=6)
    out = io.StringIO()
    load_demo_review(retrieval_run=run.retrieval_run, stdout=out)
    load_demo_review(retrieval_run=run.retrieval_run, stdout=out)
    pools = run_pools(rerank_run=run)
    assert len(pools) == 2
    honest = next(p for p in pools if not is_synthetic(p))
    fake = next(p for p in pools if is_synthetic(p))
    assert not Judgment.objects.filter(item__pool_id=honest.pk).exists()
    assert pool_model(honest).assignments.count() == 2 * pool_model(honest).items.count()
    judges = set(Judgment.objects.filter(item__pool_id=fake.pk).values_list("reviewer__username", flat=True))
    assert judges == set(SYNTHETIC_ACCOUNTS)
    # The second load added none.
    assert Judgment.objects.filter(item__pool_id=fake.pk).count() == 2 * pool_model(fake).items.count()
    assert all(not u.has_usable_password() for u in get_user_model().objects.filter(username__in=SYNTHETIC_ACCOUNTS))
    assert "DEMO SYNTHETIC LABELS" in fake.name and fake.declared_params["label_source"] == "demo-synthetic-labels"
    page = stakeholder_client.get(f"/benchmarks/labels/rerank/{run.pk}/calibration/").content.decode()
    assert "No completed labels yet" in page
    synthetic = stakeholder_client.get(f"/benchmarks/labels/rerank/{run.pk}/calibration/?pool={fake.public_id}")
    html = synthetic.content.decode()
    assert "DEMO DATA, NOT HUMAN LABELS" in html and 'id="brier-heldout">n/a<' not in html
    run_page = stakeholder_client.get(f"/benchmarks/rerank/{run.pk}/").content.decode()
    assert f"/benchmarks/labels/rerank/{run.pk}/calibration/" in run_page
    assert f"/benchmarks/labels/rerank/{run.pk}/human-metrics/" in run_page


def test_the_synthetic_pool_can_be_switched_off(demo_reviewers, monkeypatch):
    monkeypatch.setenv("DEMO_SYNTHETIC_LABELS", "0")
    run = rerank_world(seed=32, queries=3)
    load_demo_review(retrieval_run=run.retrieval_run, stdout=io.StringIO())
    assert [is_synthetic(p) for p in run_pools(rerank_run=run)] == [False]
