"""No account that sees model output, and no synthetic demo account, ever holds a real blind-review assignment,
whatever path assigns: the jobs' management command and the jobs' own "send to review" pages (the review pages,
API, service and Django admin are covered in tests/reviewapp/review/assignment/test_reviewers_and_pools.py)."""

from __future__ import annotations

import pytest
from django.core.management import CommandError, call_command

from reviewapp.review.assignment.models import Assignment
from reviewapp.review.pools.models import ReviewPool
from tests.factories import client_for, make_user


def test_the_declare_command_refuses_to_assign_an_admin_or_stakeholder(world):
    for role in ("admin", "stakeholder"):
        person = world.users[role]
        with pytest.raises(CommandError, match="can see model output"):
            call_command("declare_review_pool", rerank_run=world.rerank_pk, assign=person.get_username())
        assert not Assignment.objects.filter(reviewer=person).exists()


def test_the_audit_send_to_review_page_never_assigns_a_synthetic_account(world, django_user_model):
    synthetic = make_user(django_user_model, "demo-synthetic-labels-9", "synthetic")
    response = client_for(world.users["admin"]).post(f"/cuad/audits/{world.audit_pk}/review/")
    assert response.status_code == 302
    pool = ReviewPool.objects.get(public_id=world.audit_pool_id)
    assert Assignment.objects.filter(pool=pool).exists()
    assert not Assignment.objects.filter(reviewer=synthetic).exists()
    holders = set(Assignment.objects.filter(pool=pool).values_list("reviewer__username", flat=True))
    assert holders <= {world.users["reviewer"].username, world.users["reviewer2"].username}
