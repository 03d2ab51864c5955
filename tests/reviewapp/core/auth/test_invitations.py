"""Credentials an admin held are disclosed, not trusted: an invitation link is single-use, expiring, revocable,
ended by a later one and by deactivation, refused once the reviewer signed in or chose a password; whatever is
saved after signing in with such credentials says so."""

from __future__ import annotations

import json

import pytest
from django.contrib.auth import get_user_model
from django.test import Client, RequestFactory
from django.utils import timezone

from reviewapp.core.auth import accounts
from reviewapp.core.auth.signin import SESSION_KEY, SigninMethodMiddleware, signin_method_of
from reviewapp.core.models import AccountAudit, SigninMethod
from reviewapp.review.agreement import exports
from reviewapp.review.judgments.models import JudgmentRevision
from reviewapp.review.workspace.services import judgment_submit
from tests.helpers import shown_hashes
from tests.reviewapp.review.conftest import make_pool

pytestmark = pytest.mark.django_db
PASSWORD = "a-Long-reviewer-pass-91"


def _invited(admin, username: str = "newcomer"):
    made = accounts.reviewer_account_create(username=username, by=admin, invite=True)
    return made.user, made.invitation


def test_an_invitation_is_refused_for_a_reviewer_who_has_signed_in(admin_user_):
    user, _ = _invited(admin_user_)
    get_user_model().objects.filter(pk=user.pk).update(last_login=timezone.now())
    user.refresh_from_db()
    with pytest.raises(accounts.AccountError, match="has signed in already"):
        accounts.reviewer_invitation_make(user=user, by=admin_user_)


def test_an_invitation_is_refused_for_a_reviewer_with_their_own_password(admin_user_, reviewer_user):
    with pytest.raises(accounts.AccountError, match="password its owner chose"):
        accounts.reviewer_invitation_make(user=reviewer_user, by=admin_user_)


def test_a_link_works_once_and_its_password_is_recorded_with_the_admin_as_actor(admin_user_):
    user, link = _invited(admin_user_)
    invitation = accounts.invitation_find(uidb64=link.uidb64, token=link.token)
    accounts.reviewer_invitation_accept(invitation=invitation, password=PASSWORD)
    assert accounts.invitation_find(uidb64=link.uidb64, token=link.token) is None
    with pytest.raises(accounts.AccountError, match="no longer valid"):
        accounts.reviewer_invitation_accept(invitation=invitation, password="another-Long-pass-92")
    change = AccountAudit.objects.filter(target_id=str(user.pk), action="user.change").last()
    assert change.detail["password"] == "changed" and change.actor == admin_user_.username
    assert signin_method_of(user) == SigninMethod.INVITATION
    # A password set through a link is not the owner's own: no second link over it either.
    with pytest.raises(accounts.AccountError, match="password its owner chose"):
        accounts.reviewer_invitation_make(user=user, by=admin_user_)


def test_a_link_dies_with_a_later_link_a_revoke_a_deactivation_or_its_expiry(admin_user_, settings):
    user, first = _invited(admin_user_)
    second = accounts.reviewer_invitation_make(user=user, by=admin_user_)
    assert accounts.invitation_find(uidb64=first.uidb64, token=first.token) is None
    assert accounts.invitation_find(uidb64=second.uidb64, token=second.token) is not None

    assert accounts.reviewer_invitation_revoke(user=user, by=admin_user_) == 1
    assert accounts.invitation_find(uidb64=second.uidb64, token=second.token) is None
    assert AccountAudit.objects.filter(action="user.invitation.revoke", actor=admin_user_.username).exists()

    third = accounts.reviewer_invitation_make(user=user, by=admin_user_)
    accounts.reviewer_account_set_active(user=user, active=False, by=admin_user_)
    accounts.reviewer_account_set_active(user=user, active=True, by=admin_user_)
    assert accounts.invitation_find(uidb64=third.uidb64, token=third.token) is None

    settings.INVITATION_TTL_SECONDS = 0
    expired = accounts.reviewer_invitation_make(user=user, by=admin_user_)
    assert accounts.invitation_find(uidb64=expired.uidb64, token=expired.token) is None


def test_the_admin_revokes_open_links_from_the_reviewers_page(admin_client_, admin_user_):
    user, link = _invited(admin_user_)
    page = admin_client_.get(f"/review/people/reviewers/{user.pk}/").content.decode()
    assert 'data-testid="revoke-invitation"' in page
    admin_client_.post(f"/review/people/reviewers/{user.pk}/invitation/revoke/")
    dead = Client().get(f"/review/people/invitation/{link.uidb64}/{link.token}/").content.decode()
    assert 'data-testid="invalid-link"' in dead


def _saved_through(request, item, reviewer) -> JudgmentRevision:
    def view(_request):
        judgment_submit(item=item, reviewer=reviewer, grades={"section": 2, "passage": 1}, complete=True,
                                 shown=shown_hashes(item.public_id))
        return None

    SigninMethodMiddleware(view)(request)
    return JudgmentRevision.objects.filter(judgment__item=item, judgment__reviewer=reviewer).last()


def test_each_revision_records_how_its_author_signed_in(admin_user_, reviewer_user, reviewer2_user):
    user, link = _invited(admin_user_)
    accounts.reviewer_invitation_accept(invitation=accounts.invitation_find(uidb64=link.uidb64, token=link.token),
                                        password=PASSWORD)
    browser = Client()
    assert browser.login(username=user.username, password=PASSWORD)
    assert browser.session[SESSION_KEY] == SigninMethod.INVITATION

    pool = make_pool(reviewers=[reviewer_user, reviewer2_user, user], per_item=3)
    first, second = pool.items.order_by("id")[:2]
    request = RequestFactory().post("/")
    request.session = {SESSION_KEY: browser.session[SESSION_KEY]}
    assert _saved_through(request, first, user).signin_method == SigninMethod.INVITATION
    # Outside a request (commands, demo data) there was no sign-in.
    judgment_submit(item=second, reviewer=reviewer_user, grades={"section": 1, "passage": 1},
                             complete=True, shown=shown_hashes(second.public_id))
    assert JudgmentRevision.objects.filter(judgment__reviewer=reviewer_user).last().signin_method == ""
    # Disclosed where labels leave: the export lines and the count on the pool's agreement page.
    lines = [json.loads(line) for line in exports.pool_jsonl(pool=pool)]
    assert sorted((line["reviewer"], line["credentials_admin_held"]) for line in lines) == sorted([
        (reviewer_user.username, False), (user.username, True)])
    assert exports.pool_admin_held_complete(pool=pool) == 1
    admin = Client()
    admin.force_login(admin_user_)
    page = admin.get(f"/review/pools/{pool.public_id}/").content.decode()
    assert "1 complete judgment came from credentials an admin once held" in page

    # The owner changes the password themself: later sign-ins are their own again.
    browser.post("/accounts/password/", {"old_password": PASSWORD, "new_password1": "mine-Now-and-long-93",
                                         "new_password2": "mine-Now-and-long-93"})
    assert signin_method_of(user) == SigninMethod.PASSWORD
    again = Client()
    assert again.login(username=user.username, password="mine-Now-and-long-93")
    assert again.session[SESSION_KEY] == SigninMethod.PASSWORD


def test_an_admin_typed_password_signs_in_as_admin_held(admin_user_):
    made = accounts.reviewer_account_create(username="typed", by=admin_user_, password="Typed-by-admin-2026")
    browser = Client()
    assert browser.login(username="typed", password="Typed-by-admin-2026")
    assert browser.session[SESSION_KEY] == SigninMethod.ADMIN_PASSWORD
    assert signin_method_of(made.user) == SigninMethod.ADMIN_PASSWORD


def test_a_token_made_after_an_admin_typed_password_saves_judgments_as_admin_held(admin_user_, reviewer_user):
    # An admin who typed a reviewer's password signs in as them and makes a token: what is saved through the
    # token is disclosed as made with credentials an admin once held, never as the reviewer's own sign-in.
    made = accounts.reviewer_account_create(username="laundered", by=admin_user_, password="Typed-by-admin-2026")
    browser = Client()
    assert browser.login(username="laundered", password="Typed-by-admin-2026")
    page = browser.post("/accounts/tokens/", {"name": "script"}).content.decode()
    key = page.split('data-testid="token-key">')[1].split("<")[0]
    pool = make_pool(reviewers=[made.user, reviewer_user], per_item=2)
    item = pool.items.order_by("id").first()
    shown = Client().get(f"/api/v1/review/items/{item.public_id}/", HTTP_AUTHORIZATION=f"Token {key}").json()
    saved = Client().post(
        f"/api/v1/review/items/{item.public_id}/judgment/", content_type="application/json",
        HTTP_AUTHORIZATION=f"Token {key}",
        data={"grades": {"section": 1, "passage": 1}, "complete": True, "query_hash": shown["query_hash"],
              "source_hash": shown["source_hash"], "passage_hash": shown["passage_hash"]})
    assert saved.status_code == 201, saved.content
    revision = JudgmentRevision.objects.filter(judgment__reviewer=made.user).last()
    assert revision.signin_method == SigninMethod.ADMIN_PASSWORD
    lines = [json.loads(line) for line in exports.pool_jsonl(pool=pool)]
    assert [(line["signin_method"], line["credentials_admin_held"]) for line in lines] == [
        (SigninMethod.ADMIN_PASSWORD, True)]
    assert exports.pool_admin_held_complete(pool=pool) == 1


def test_a_token_made_outside_a_sign_in_counts_as_a_token(reviewer_user):
    from reviewapp.core.auth.credentials import api_token_create

    assert api_token_create(user=reviewer_user).token.signin_method == SigninMethod.TOKEN
