"""Admin pages for people: reviewer accounts (create with an invitation, a typed or random password; revoke a
token; every change audited), the workload view and reassignment from it. Only the admin role gets in, and no
admin action writes a reviewer's label."""

from __future__ import annotations

import re

import pytest
from django.contrib.auth import get_user_model
from django.test import Client

from reviewapp.core.auth.credentials import api_token_create
from reviewapp.core.models import AccountAudit, ApiToken
from reviewapp.review.assignment.models import Assignment
from reviewapp.review.judgments.models import Judgment, JudgmentRevision
from reviewapp.review.people import workload
from reviewapp.review.workspace.services import judgment_submit
from tests.factories import make_user
from tests.helpers import shown_hashes
from tests.reviewapp.review.conftest import make_items, make_pool

pytestmark = pytest.mark.django_db


@pytest.fixture
def reviewer3_user(django_user_model):
    return make_user(django_user_model, "reviewer3", "reviewer")


def _new_urls(pool_id: str, user_id: int, token_id: int = 1) -> list[str]:
    return [
        "/review/people/workload/", "/review/people/workload/reassign/", f"/review/people/reviewers/{user_id}/",
        f"/review/people/reviewers/{user_id}/invite/", f"/review/people/reviewers/{user_id}/tokens/{token_id}/revoke/",
        f"/review/people/reviewers/{user_id}/invitation/revoke/",
        f"/review/agreement/{pool_id}/disagreements/next/", f"/review/pools/{pool_id}/guidelines/",
        f"/review/pools/{pool_id}/known-answers/", f"/review/assignment/{pool_id}/known-answers/mix/",
    ]


def test_reviewers_and_stakeholders_are_refused_every_new_admin_page(reviewer_client, stakeholder_client, pool,
                                                                     reviewer_user):
    token = api_token_create(user=reviewer_user).token
    for client in (reviewer_client, stakeholder_client):
        for url in _new_urls(pool.public_id, reviewer_user.pk, token.pk):
            assert client.get(url).status_code == 403, url
            assert client.post(url, {"action": "mix", "share": "10", "text": "x", "pool": pool.public_id,
                                     "from_reviewer": reviewer_user.pk, "to_reviewer": reviewer_user.pk}
                               ).status_code == 403, url
    assert ApiToken.objects.filter(pk=token.pk).exists()


# --- accounts ------------------------------------------------------------------------------------------------


def test_an_invited_reviewer_sets_their_own_password_once_and_the_audit_log_names_the_admin(admin_client_,
                                                                                            admin_user_):
    response = admin_client_.post("/review/people/reviewers/", {
        "username": "newcomer", "first_name": "Ada", "last_name": "Byron", "email": "ada@example.org",
        "password_mode": "invite"})
    assert response.status_code == 200 and response["Cache-Control"] == "no-store"
    page = response.content.decode()
    link = re.search(r'data-testid="invitation-url">(http://testserver(/review/people/invitation/[^<]+/))<', page)
    assert link, page
    user = get_user_model().objects.get(username="newcomer")
    assert user.email == "ada@example.org" and not user.has_usable_password()
    assert list(user.groups.values_list("name", flat=True)) == ["reviewer"]
    actions = list(AccountAudit.objects.filter(target_id=str(user.pk)).order_by("id").values_list("action", "actor"))
    assert ("user.create", admin_user_.username) in actions
    assert ("user.invitation", admin_user_.username) in actions
    assert link.group(1) not in str(list(AccountAudit.objects.values_list("detail", flat=True)))

    anonymous = Client()
    form = anonymous.get(link.group(2))
    assert form.status_code == 200 and 'name="new_password1"' in form.content.decode()
    done = anonymous.post(link.group(2), {"new_password1": "a-Long-reviewer-pass-91",
                                          "new_password2": "a-Long-reviewer-pass-91"})
    assert done.status_code == 302
    assert anonymous.login(username="newcomer", password="a-Long-reviewer-pass-91")
    # Whoever held the link may have chosen it: the admin who issued the link is the actor of record.
    changed = AccountAudit.objects.filter(target_id=str(user.pk), action="user.change").last()
    assert changed.detail.get("password") == "changed" and changed.actor == admin_user_.username
    # The link works once.
    again = Client().get(link.group(2)).content.decode()
    assert 'data-testid="invalid-link"' in again


def test_a_typed_initial_password_is_validated_and_never_shown_back(admin_client_):
    weak = admin_client_.post("/review/people/reviewers/", {"username": "weakling", "password_mode": "typed",
                                                           "password": "123"})
    assert weak.status_code == 400 and "password:" in weak.content.decode()
    assert not get_user_model().objects.filter(username="weakling").exists()
    good = admin_client_.post("/review/people/reviewers/", {"username": "typed", "password_mode": "typed",
                                                           "password": "Typed-by-admin-2026"})
    assert good.status_code == 200 and "Typed-by-admin-2026" not in good.content.decode()
    assert Client().login(username="typed", password="Typed-by-admin-2026")


def test_a_bad_email_or_mode_is_refused_naming_the_field(admin_client_):
    response = admin_client_.post("/review/people/reviewers/", {"username": "x1", "email": "not-an-address"})
    assert response.status_code == 400 and "email:" in response.content.decode()
    response = admin_client_.post("/review/people/reviewers/", {"username": "x2", "password_mode": "sudo"})
    assert response.status_code == 400 and "password_mode:" in response.content.decode()
    assert not get_user_model().objects.filter(username__in=["x1", "x2"]).exists()


def test_an_admin_revokes_a_reviewers_token_audited_but_cannot_touch_other_accounts(admin_client_, admin_user_,
                                                                                   reviewer_user, stakeholder_user):
    token = api_token_create(user=reviewer_user).token
    page = admin_client_.get(f"/review/people/reviewers/{reviewer_user.pk}/").content.decode()
    assert token.prefix in page and token.key_digest not in page
    response = admin_client_.post(f"/review/people/reviewers/{reviewer_user.pk}/tokens/{token.pk}/revoke/")
    assert response.status_code == 302 and not ApiToken.objects.filter(pk=token.pk).exists()
    row = AccountAudit.objects.filter(action="token.delete").last()
    assert row.actor == admin_user_.username and row.target_id == str(token.pk)
    # Someone who is not a plain reviewer: not this page's business.
    theirs = api_token_create(user=stakeholder_user).token
    assert admin_client_.post(
        f"/review/people/reviewers/{stakeholder_user.pk}/tokens/{theirs.pk}/revoke/").status_code == 404
    assert admin_client_.get(f"/review/people/reviewers/{admin_user_.pk}/").status_code == 404
    assert ApiToken.objects.filter(pk=theirs.pk).exists()


def test_no_admin_page_makes_a_token_for_a_reviewer(admin_client_, reviewer_user):
    admin_client_.post(f"/review/people/reviewers/{reviewer_user.pk}/invite/")
    admin_client_.post(f"/review/people/reviewers/{reviewer_user.pk}/", {"name": "x"})
    assert not ApiToken.objects.filter(user=reviewer_user).exists()


def test_an_invitation_is_refused_for_a_reviewer_with_their_own_password(admin_client_, reviewer_user):
    page = admin_client_.post(f"/review/people/reviewers/{reviewer_user.pk}/invite/", follow=True).content.decode()
    assert 'data-testid="invitation-url"' not in page and "has a password its owner chose" in page
    assert Client().login(username=reviewer_user.username, password="pw-" + reviewer_user.username)


# --- workload and reassignment --------------------------------------------------------------------------------


def _grade(item, reviewer, *, complete: bool):
    return judgment_submit(item=item, reviewer=reviewer, grades={"section": 2, "passage": 1},
                                    complete=complete, shown=shown_hashes(item.public_id))


def test_the_workload_counts_each_reviewers_items_by_state_per_pool(admin_client_, reviewer_user, reviewer2_user):
    pool = make_pool(reviewers=[reviewer_user, reviewer2_user], items=make_items(2, 3))
    mine = list(Assignment.objects.filter(pool=pool, reviewer=reviewer_user).select_related("item"))
    _grade(mine[0].item, reviewer_user, complete=True)
    _grade(mine[1].item, reviewer_user, complete=False)
    rows = {r.username: r for r in workload.reviewer_workload(pool=pool)}
    counts = rows[reviewer_user.username].pools[0]
    assert (counts.assigned, counts.complete, counts.draft, counts.not_started) == (6, 1, 1, 4)
    assert counts.last_activity is not None and rows[reviewer2_user.username].pools[0].last_activity is None
    page = admin_client_.get(f"/review/people/workload/?pool={pool.public_id}").content.decode()
    assert f'data-reviewer="{reviewer_user.username}"' in page and "Reassign" in page


def test_reassigning_from_the_workload_moves_only_open_items_and_writes_no_label(admin_client_, reviewer_user,
                                                                                 reviewer2_user, reviewer3_user):
    pool = make_pool(reviewers=[reviewer_user, reviewer2_user], items=make_items(1, 4))
    mine = list(Assignment.objects.filter(pool=pool, reviewer=reviewer_user).select_related("item"))
    _grade(mine[0].item, reviewer_user, complete=True)
    _grade(mine[1].item, reviewer_user, complete=False)
    revisions_before = list(JudgmentRevision.objects.order_by("id").values_list("id", "grades", "status"))
    response = admin_client_.post("/review/people/workload/reassign/", {
        "pool": pool.public_id, "from_reviewer": reviewer_user.pk, "to_reviewer": reviewer3_user.pk})
    assert response.status_code == 302 and response["Location"] == "/review/people/workload/"
    # The completed item stays; the draft and the untouched ones move (a draft is open work, not a label).
    assert set(Assignment.objects.filter(pool=pool, reviewer=reviewer_user).values_list("item_id", flat=True)) == {
        mine[0].item_id, mine[1].item_id}
    assert Assignment.objects.filter(pool=pool, reviewer=reviewer3_user).count() == 2
    assert list(JudgmentRevision.objects.order_by("id").values_list("id", "grades", "status")) == revisions_before
    assert not Judgment.objects.filter(reviewer=reviewer3_user).exists()


def test_reassigning_to_someone_who_sees_model_output_is_refused(admin_client_, reviewer_user, reviewer2_user,
                                                                 stakeholder_user):
    pool = make_pool(reviewers=[reviewer_user, reviewer2_user])
    before = Assignment.objects.filter(pool=pool).count()
    response = admin_client_.post("/review/people/workload/reassign/", {
        "pool": pool.public_id, "from_reviewer": reviewer_user.pk, "to_reviewer": stakeholder_user.pk},
        follow=True)
    assert "to_reviewer:" in response.content.decode()
    assert not Assignment.objects.filter(reviewer=stakeholder_user).exists()
    assert Assignment.objects.filter(pool=pool).count() == before


def test_an_unknown_pool_or_reviewer_is_a_404(admin_client_, pool, reviewer_user):
    assert admin_client_.get("/review/people/workload/?pool=nope").status_code == 404
    assert admin_client_.post("/review/people/workload/reassign/", {
        "pool": pool.public_id, "from_reviewer": "x", "to_reviewer": reviewer_user.pk}).status_code == 404
