"""Who may hold a blind-review assignment (every path), the admin's reviewer pages, frozen pools and their new
versions, synthetic demo accounts, and completed judgments that only change after a reopen."""

from __future__ import annotations

import json

import pytest
from django.contrib.auth.models import Group
from django.core.exceptions import ValidationError

from reviewapp.core.auth.roles import ensure_role_groups
from reviewapp.core.models import AccountAudit
from reviewapp.review.assignment.models import Assignment
from reviewapp.review.assignment.selectors import reviewer_candidates
from reviewapp.review.assignment.services import assignment_reassign, pool_assign
from reviewapp.review.errors import PoolFrozen, ReviewError
from reviewapp.review.judgments.models import Judgment, JudgmentRevision, ReviewItem
from reviewapp.review.people.selectors import reviewer_accounts
from reviewapp.review.pools.models import ReviewPool
from reviewapp.review.pools.services import pool_create_model, pool_settings_change
from reviewapp.review.workspace.services import item_shown_hashes, judgment_reopen, judgment_submit
from tests.factories import client_for, make_user
from tests.reviewapp.review.conftest import make_items, make_pool

# ---------------------------------------------------------------------------------------------- who may grade


@pytest.fixture
def superuser(django_user_model, db):
    return django_user_model.objects.create_superuser(username="root", password="pw-root-long-enough")


@pytest.fixture
def reviewer_turned_stakeholder(django_user_model, db):
    """In the reviewer group and the stakeholder group: sees reports, so may never grade."""
    user = make_user(django_user_model, "two_hats", "reviewer")
    user.groups.add(Group.objects.get(name="stakeholder"))
    return user


def _bare_pool(per_item: int = 1) -> ReviewPool:
    return pool_create_model(name="p", kind="passage", items=make_items(1, 2), declared_rule="x",
                                reviewers_per_item=per_item)


@pytest.mark.parametrize("who", ["admin_user_", "stakeholder_user", "superuser", "reviewer_turned_stakeholder"])
def test_the_service_refuses_to_assign_anyone_who_sees_model_output(request, who, reviewer_user):
    person = request.getfixturevalue(who)
    pool = _bare_pool()
    with pytest.raises(ReviewError, match="can see model output"):
        pool_assign(pool=pool, reviewers=[person], per_item=1)
    assert not Assignment.objects.filter(pool=pool).exists()


def test_the_assign_page_refuses_an_admin_even_by_forged_id(admin_client_, admin_user_, reviewer_user):
    pool = _bare_pool()
    page = admin_client_.get(f"/review/pools/{pool.public_id}/").content.decode()
    assert f'value="{reviewer_user.pk}"' in page and f'name="reviewers" value="{admin_user_.pk}"' not in page
    admin_client_.post(f"/review/assignment/{pool.public_id}/assign/", {"reviewers": [admin_user_.pk],
                                                                         "per_item": 1})
    assert not Assignment.objects.filter(reviewer=admin_user_).exists()


def test_the_assign_api_refuses_an_admin_or_stakeholder(admin_client_, admin_user_, stakeholder_user):
    pool = _bare_pool()
    for name in (admin_user_.username, stakeholder_user.username):
        response = admin_client_.post(f"/api/v1/review/pools/{pool.public_id}/assign/",
                                      json.dumps({"reviewers": [name], "per_item": 1}),
                                      content_type="application/json")
        assert response.status_code == 400
        assert "can see model output" in response.json()["detail"]
    assert not Assignment.objects.filter(pool=pool).exists()


def test_the_django_admin_cannot_add_an_assignment(superuser, admin_user_):
    pool = _bare_pool()
    for who in (superuser, admin_user_):
        response = client_for(who).post("/admin/reviewapp/assignment/add/", {
            "item": pool.items.first().pk, "reviewer": admin_user_.pk, "pool": pool.pk, "sort_key": "x"})
        assert response.status_code == 403
    assert not Assignment.objects.exists()


def test_reassigning_to_a_model_output_account_is_refused(reviewer_user, admin_user_):
    pool = make_pool(reviewers=[reviewer_user], per_item=1)
    with pytest.raises(ReviewError, match="can see model output"):
        assignment_reassign(pool=pool, from_reviewer=reviewer_user, to_reviewer=admin_user_)
    assert not Assignment.objects.filter(reviewer=admin_user_).exists()


@pytest.fixture
def planted(reviewer_user, admin_user_):
    """An assignment row for an admin, as a forged insert or an old database would have it."""
    pool = make_pool(reviewers=[reviewer_user], per_item=1)
    item = pool.items.first()
    Assignment.objects.create(item=item, pool=pool, reviewer=admin_user_, sort_key="0")
    return item


def test_grading_refuses_a_model_output_account_even_with_an_assignment_row(planted, admin_user_):
    with pytest.raises(ReviewError, match=r"cannot grade: .*can see model output"):
        judgment_submit(item=planted, reviewer=admin_user_, grades={"section": 3, "passage": 3},
                                 complete=True)
    assert not Judgment.objects.filter(reviewer=admin_user_).exists()


def test_grading_refuses_a_reviewer_who_became_a_stakeholder(django_user_model, db):
    user = make_user(django_user_model, "later_promoted", "reviewer")
    pool = make_pool(reviewers=[user], per_item=1)
    user.groups.add(Group.objects.get(name="stakeholder"))
    user = django_user_model.objects.get(pk=user.pk)
    with pytest.raises(ReviewError, match="can see model output"):
        judgment_submit(item=pool.items.first(), reviewer=user, grades={"section": 1}, complete=False)


def test_the_grading_api_refuses_a_model_output_account_with_an_assignment_row(planted, admin_user_):
    ensure_role_groups()
    admin_user_.groups.add(Group.objects.get(name="reviewer"))  # what the red team did, through the old admin
    client = client_for(admin_user_)
    shown = item_shown_hashes(planted)
    response = client.post(f"/api/v1/review/items/{planted.public_id}/judgment/",
                           json.dumps({"grades": {"section": 3, "passage": 3}, "complete": True, **shown}),
                           content_type="application/json")
    assert response.status_code == 400
    assert "can see model output" in response.json()["detail"]
    page = client.post(f"/review/workspace/items/{planted.public_id}/",
                       {"section": "3", "passage": "3", "action": "complete", **shown})
    assert page.status_code == 400
    assert not Judgment.objects.filter(reviewer=admin_user_).exists()


# ---------------------------------------------------------------------------------------------- reviewer pages


def test_an_admin_creates_a_reviewer_account_with_a_one_time_password(admin_client_, admin_user_):
    response = admin_client_.post("/review/people/reviewers/", {"username": "new_reviewer", "first_name": "Nia"})
    assert response.status_code == 200
    password = response.context["created"].password
    assert password in response.content.decode() and response["Cache-Control"] == "no-store"
    from django.contrib.auth import get_user_model

    user = get_user_model().objects.get(username="new_reviewer")
    assert list(user.groups.values_list("name", flat=True)) == ["reviewer"]
    assert not user.is_staff and not user.is_superuser and user.check_password(password)
    assert password not in admin_client_.get("/review/people/reviewers/").content.decode()
    assert AccountAudit.objects.filter(action="user.create", target="new_reviewer", actor=admin_user_.username).exists()
    assert AccountAudit.objects.filter(action="user.groups.add", target="new_reviewer",
                                       actor=admin_user_.username).exists()


def test_a_taken_or_lookalike_username_is_refused(admin_client_, reviewer_user):
    response = admin_client_.post("/review/people/reviewers/", {"username": "ｒｉｔａ_reviewer"})
    assert response.status_code == 400
    assert "username: " in response.content.decode() and "taken" in response.content.decode()


def test_an_admin_deactivates_and_reactivates_a_reviewer_but_not_another_admin(admin_client_, reviewer_user,
                                                                                 django_user_model):
    admin_client_.post(f"/review/people/reviewers/{reviewer_user.pk}/active/", {"active": "0"})
    reviewer_user.refresh_from_db()
    assert not reviewer_user.is_active
    assert reviewer_user not in reviewer_candidates()
    assert "rita_reviewer" in admin_client_.get("/review/people/reviewers/").content.decode()
    admin_client_.post(f"/review/people/reviewers/{reviewer_user.pk}/active/", {"active": "1"})
    reviewer_user.refresh_from_db()
    assert reviewer_user.is_active
    other = make_user(django_user_model, "other_admin", "admin", staff=True)
    admin_client_.post(f"/review/people/reviewers/{other.pk}/active/", {"active": "0"})
    other.refresh_from_db()
    assert other.is_active


def test_a_reviewer_or_stakeholder_cannot_use_the_reviewer_pages(reviewer_client, stakeholder_client):
    for client in (reviewer_client, stakeholder_client):
        assert client.get("/review/people/reviewers/").status_code == 403
        assert client.post("/review/people/reviewers/", {"username": "sneaky"}).status_code == 403


def test_unassign_removes_open_items_and_keeps_judged_ones(admin_client_, reviewer_user):
    pool = make_pool(reviewers=[reviewer_user], per_item=1)
    judged = pool.items.order_by("id").first()
    judgment_submit(item=judged, reviewer=reviewer_user, grades={"section": 1}, complete=False)
    admin_client_.post(f"/review/assignment/{pool.public_id}/unassign/", {"reviewer": reviewer_user.pk})
    left = list(Assignment.objects.filter(pool=pool, reviewer=reviewer_user).values_list("item_id", flat=True))
    assert left == [judged.pk]


def test_reassign_moves_open_items_to_another_reviewer(admin_client_, reviewer_user, reviewer2_user):
    pool = make_pool(reviewers=[reviewer_user], per_item=1)
    judged = pool.items.order_by("id").first()
    judgment_submit(item=judged, reviewer=reviewer_user, grades={"section": 1}, complete=False)
    total = pool.items.count()
    admin_client_.post(f"/review/assignment/{pool.public_id}/reassign/",
                       {"from_reviewer": reviewer_user.pk, "to_reviewer": reviewer2_user.pk})
    assert Assignment.objects.filter(pool=pool, reviewer=reviewer_user).count() == 1
    assert Assignment.objects.filter(pool=pool, reviewer=reviewer2_user).count() == total - 1
    assert not Assignment.objects.filter(pool=pool, reviewer=reviewer2_user, item=judged).exists()


# ---------------------------------------------------------------------------------------------- frozen pools


@pytest.fixture
def judged_pool(reviewer_user):
    pool = make_pool(reviewers=[reviewer_user], per_item=1)
    judgment_submit(item=pool.items.first(), reviewer=reviewer_user, grades={"section": 3, "passage": 3},
                             complete=True)
    return ReviewPool.objects.get(pk=pool.pk)


def test_a_judged_pools_label_settings_are_frozen_in_the_model(judged_pool):
    judged_pool.reviewers_per_item = 2
    with pytest.raises(ValidationError, match="new version"):
        judged_pool.full_clean()
    with pytest.raises(PoolFrozen):
        judged_pool.save()
    judged_pool.refresh_from_db()
    judged_pool.kind = "clause"
    with pytest.raises(PoolFrozen):
        judged_pool.save()
    with pytest.raises(PoolFrozen, match="items cannot be added"):
        ReviewItem.objects.create(pool=judged_pool, query_id="q", doc_id="d", query_text="q", query_hash="h",
                                  source_hash="h", passage_text="p", passage_hash="h")
    assert ReviewPool.objects.get(pk=judged_pool.pk).reviewers_per_item == 1


def test_an_unjudged_pool_may_still_change(reviewer_user):
    pool = make_pool(reviewers=[reviewer_user], per_item=1)
    pool_settings_change(pool=pool, reviewers_per_item=2)
    assert ReviewPool.objects.get(pk=pool.pk).reviewers_per_item == 2


def test_the_service_refuses_and_says_how_to_make_a_new_version(judged_pool):
    with pytest.raises(ReviewError, match="make a new version of the pool"):
        pool_settings_change(pool=judged_pool, reviewers_per_item=2)


def test_the_django_admin_shows_frozen_fields_read_only_and_cannot_change_them(superuser, admin_client_,
                                                                               judged_pool):
    url = f"/admin/reviewapp/reviewpool/{judged_pool.pk}/change/"
    page = admin_client_.get(url).content.decode()
    assert 'name="reviewers_per_item"' not in page
    admin_client_.post(url, {"name": judged_pool.name, "reviewers_per_item": 5,
                             "reviewer_title": "", "instructions": ""})
    assert ReviewPool.objects.get(pk=judged_pool.pk).reviewers_per_item == 1
    assert admin_client_.get(f"/admin/reviewapp/reviewpool/{judged_pool.pk}/delete/").status_code == 403


def test_a_new_version_copies_the_items_and_leaves_the_judged_pool_alone(admin_client_, judged_pool):
    response = admin_client_.post(f"/review/pools/{judged_pool.public_id}/new-version/",
                                  {"reviewers_per_item": "2"})
    assert response.status_code == 302
    new = ReviewPool.objects.exclude(pk=judged_pool.pk).get()
    assert new.reviewers_per_item == 2 and judged_pool.reviewers_per_item == 1
    assert new.declared_params["previous_version"] == judged_pool.public_id
    assert new.declared_params["pool_version"] == 2
    assert sorted(new.items.values_list("query_id", "doc_id")) == sorted(judged_pool.items.values_list("query_id",
                                                                                                       "doc_id"))
    assert not Judgment.objects.filter(item__pool=new).exists()


# ---------------------------------------------------------------------------------------------- synthetic accounts


@pytest.fixture
def synthetic_account(django_user_model, db):
    return make_user(django_user_model, "demo-synthetic-labels-1", "synthetic")


def test_a_synthetic_account_is_no_reviewer_and_never_offered(synthetic_account, reviewer_user, admin_client_):
    assert synthetic_account not in reviewer_candidates()
    assert "demo-synthetic-labels-1" not in [r.username for r in reviewer_accounts()]
    pool = _bare_pool()
    assert "demo-synthetic-labels" not in admin_client_.get(f"/review/pools/{pool.public_id}/").content.decode()
    assert "demo-synthetic-labels" not in admin_client_.get("/review/people/reviewers/").content.decode()
    with pytest.raises(ReviewError, match="synthetic demo account"):
        pool_assign(pool=pool, reviewers=[synthetic_account], per_item=1)


def test_a_synthetic_pool_takes_only_synthetic_accounts(synthetic_account, reviewer_user):
    pool = pool_create_model(name="DEMO", kind="passage", items=make_items(1, 2), declared_rule="x",
                                declared_params={"synthetic": True}, reviewers_per_item=1)
    with pytest.raises(ReviewError, match="synthetic demo pool"):
        pool_assign(pool=pool, reviewers=[reviewer_user], per_item=1)
    assert pool_assign(pool=pool, reviewers=[synthetic_account], per_item=1) == 2
    result = judgment_submit(item=pool.items.first(), reviewer=synthetic_account,
                                      grades={"section": 3, "passage": 3}, complete=True)
    assert result.created and pool.synthetic


def test_the_demo_moves_its_synthetic_accounts_out_of_the_reviewer_role_and_off_real_pools(django_user_model, db):
    from benchmarks.labels.demo import _synthetic_accounts

    ensure_role_groups()
    old = make_user(django_user_model, "demo-synthetic-labels-1", "reviewer")  # as an older demo made it
    real = make_pool(reviewers=[old], per_item=1)
    judged = real.items.first()
    judgment_submit(item=judged, reviewer=old, grades={"section": 0}, complete=False)
    accounts = _synthetic_accounts()
    assert {a.username for a in accounts} == {"demo-synthetic-labels-1", "demo-synthetic-labels-2"}
    for account in accounts:
        assert list(account.groups.values_list("name", flat=True)) == ["synthetic"]
        assert not account.has_perm("reviewapp.grade_passages")
    # unjudged assignments of the real pool are released; the judged one (history) stays
    assert list(Assignment.objects.filter(pool=real, reviewer=old).values_list("item_id", flat=True)) == [judged.pk]


# ---------------------------------------------------------------------------------------------- completed judgments


@pytest.fixture
def completed(pool, reviewer_user):
    item = pool.items.order_by("id").first()
    judgment_submit(item=item, reviewer=reviewer_user, grades={"section": 2, "passage": 2}, complete=True)
    return item


def test_the_service_refuses_to_change_a_completed_judgment_without_reopen(completed, reviewer_user):
    for grades, complete in (({"section": 0, "passage": 0}, True), ({"section": 2, "passage": 2}, False),
                             ({"section": 1}, False)):
        with pytest.raises(ReviewError, match="cannot change a completed judgment: reopen it first"):
            judgment_submit(item=completed, reviewer=reviewer_user, grades=grades, complete=complete)
    assert JudgmentRevision.objects.filter(judgment__item=completed).count() == 1
    judgment_reopen(item=completed, reviewer=reviewer_user)
    judgment_submit(item=completed, reviewer=reviewer_user, grades={"section": 0, "passage": 0},
                             complete=True)
    statuses = list(JudgmentRevision.objects.filter(judgment__item=completed).order_by("number")
                    .values_list("status", flat=True))
    assert statuses == ["complete", "draft", "complete"]


def test_the_page_refuses_a_save_on_a_completed_judgment_with_a_clear_error(completed, reviewer_client):
    for action in ("save", "complete"):
        response = reviewer_client.post(f"/review/workspace/items/{completed.public_id}/",
                                        {"section": "0", "passage": "0", "action": action,
                                         **item_shown_hashes(completed)})
        assert response.status_code == 400
        assert "reopen it first" in response.content.decode()
    assert JudgmentRevision.objects.filter(judgment__item=completed).count() == 1
    response = reviewer_client.post(f"/review/workspace/items/{completed.public_id}/", {"action": "reopen"})
    assert response.status_code == 302
    assert JudgmentRevision.objects.filter(judgment__item=completed).latest("number").status == "draft"


def test_the_api_refuses_a_save_on_a_completed_judgment_and_reopens_on_request(completed, reviewer_client):
    url = f"/api/v1/review/items/{completed.public_id}/judgment/"
    body = json.dumps({"grades": {"section": 0, "passage": 0}, "complete": True,
                       **item_shown_hashes(completed)})
    response = reviewer_client.post(url, body, content_type="application/json")
    assert response.status_code == 400
    assert "reopen it first" in response.json()["detail"]
    reopened = reviewer_client.post(url + "reopen/")
    assert reopened.status_code == 201 and reopened.json()["revision"]["status"] == "draft"
    again = reviewer_client.post(url, body, content_type="application/json")
    assert again.status_code == 201


def test_reopening_an_item_not_assigned_to_you_is_a_404(completed, reviewer2_user, pool):
    other = pool.items.exclude(assignments__reviewer=reviewer2_user).first()
    if other is None:  # both reviewers hold every item at two per item: use a fresh, unassigned pool
        other = _bare_pool().items.first()
    reopen_url = f"/api/v1/review/items/{other.public_id}/judgment/reopen/"
    assert client_for(reviewer2_user).post(reopen_url).status_code == 404
