"""Accounts: only a superuser touches users, groups and tokens; every change is audited; the login limit holds
against look-alike names on every login path; API tokens are hashed, shown once, expire and die with a password
change."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.contrib.auth.models import Group, Permission
from django.test import Client
from django.utils import timezone

from reviewapp.core.auth.credentials import api_token_create, token_digest
from reviewapp.core.auth.roles import ensure_role_groups
from reviewapp.core.models import AccountAudit, ApiToken, AppendOnlyError
from tests.factories import client_for
from tests.helpers import cache_clear


@pytest.fixture(autouse=True)
def _clear_login_counts():
    cache_clear()
    yield
    cache_clear()


@pytest.fixture
def superuser(django_user_model, db):
    return django_user_model.objects.create_superuser(username="root", password="pw-root-long-enough")


# ---------------------------------------------------------------------------------------------- admin group


def test_the_admin_group_holds_no_account_or_token_permission(admin_user_):
    perms = Group.objects.get(name="admin").permissions.values_list("content_type__app_label", flat=True)
    assert not {"auth", "authtoken"} & set(perms)
    assert not admin_user_.has_perm("auth.change_user")
    assert not admin_user_.has_perm("auth.add_group")


def test_ensure_role_groups_takes_account_permissions_from_an_upgraded_admin_group(admin_user_):
    group = Group.objects.get(name="admin")
    group.permissions.add(*Permission.objects.filter(content_type__app_label="auth"))
    assert group.permissions.filter(content_type__app_label="auth").exists()
    ensure_role_groups()
    assert not group.permissions.filter(content_type__app_label="auth").exists()
    removed = AccountAudit.objects.filter(action="group.permissions.remove", target="admin").first()
    assert removed is not None and "auth.change_user" in removed.detail["remove"]


def test_an_admin_cannot_open_or_change_users_groups_or_tokens_in_django_admin(admin_user_, reviewer_user):
    client = client_for(admin_user_)
    for url in ("/admin/auth/user/", f"/admin/auth/user/{reviewer_user.pk}/change/", "/admin/auth/group/",
                "/admin/reviewapp/apitoken/", "/admin/reviewapp/accountaudit/"):
        assert client.get(url).status_code == 403, url
    # raising itself: superuser + reviewer group on its own account
    response = client.post(f"/admin/auth/user/{admin_user_.pk}/change/", {
        "username": admin_user_.username, "is_superuser": "on", "is_active": "on", "is_staff": "on",
        "groups": [g.pk for g in Group.objects.all()], "date_joined_0": "2026-01-01", "date_joined_1": "00:00:00"})
    assert response.status_code == 403
    admin_user_.refresh_from_db()
    assert not admin_user_.is_superuser
    assert not admin_user_.groups.filter(name="reviewer").exists()
    # minting a reviewer's token: the old authtoken admin is gone, and token admin has no add page for anyone
    assert client.post("/admin/authtoken/tokenproxy/add/", {"user": reviewer_user.pk}).status_code == 404
    assert not ApiToken.objects.exists()


def test_a_superuser_change_to_a_user_is_recorded_under_its_name(superuser, reviewer_user):
    client = client_for(superuser)
    assert client.get("/admin/auth/user/").status_code == 200
    stakeholder = Group.objects.get(name="stakeholder")
    before = AccountAudit.objects.count()
    response = client.post(f"/admin/auth/user/{reviewer_user.pk}/change/", {
        "username": reviewer_user.username, "is_active": "on", "groups": [stakeholder.pk],
        "date_joined_0": "2026-01-01", "date_joined_1": "00:00:00"})
    assert response.status_code == 302, response.content.decode()[-2000:]
    rows = list(AccountAudit.objects.order_by("id")[before:])
    actions = {row.action for row in rows}
    assert {"user.groups.add", "user.groups.remove"} <= actions
    assert all(row.actor == "root" and row.actor_id == superuser.pk for row in rows)
    added = next(row for row in rows if row.action == "user.groups.add")
    assert added.target == "rita_reviewer" and added.detail == {"add": ["stakeholder"]}


def test_user_and_group_create_change_delete_and_permissions_are_audited(django_user_model, db):
    start = AccountAudit.objects.order_by("-id").values_list("id", flat=True).first() or 0
    user = django_user_model.objects.create_user(username="newbie", password="pw-newbie-long")
    user.is_staff = True
    user.set_password("another-password-1")
    user.save()
    group = Group.objects.create(name="custom")
    group.permissions.add(Permission.objects.get(codename="view_reports"))
    user.groups.add(group)
    user.user_permissions.add(Permission.objects.get(codename="launch_runs"))
    user.groups.clear()
    group.delete()
    user.delete()
    new = AccountAudit.objects.filter(id__gt=start)
    rows = list(new.order_by("id").values_list("action", "target"))
    assert rows == [
        ("user.create", "newbie"), ("user.change", "newbie"), ("group.create", "custom"),
        ("group.permissions.add", "custom"), ("user.groups.add", "newbie"), ("user.user_permissions.add", "newbie"),
        ("user.groups.remove", "newbie"), ("group.delete", "custom"), ("user.delete", "newbie"),
    ]
    change = new.get(action="user.change")
    assert change.detail == {"is_staff": {"before": False, "after": True}, "password": "changed"}
    assert all(row.actor == "system (no signed-in actor)" for row in new)
    # secrets never in the log
    assert "pbkdf2" not in str(list(new.values_list("detail", flat=True)))


def test_the_audit_log_cannot_be_updated_or_deleted_through_the_orm(django_user_model, db):
    django_user_model.objects.create_user(username="someone", password="pw-someone-long")
    row = AccountAudit.objects.get(target="someone")
    row.action = "user.forged"
    with pytest.raises(AppendOnlyError):
        row.save()
    with pytest.raises(AppendOnlyError):
        row.delete()
    with pytest.raises(AppendOnlyError):
        AccountAudit.objects.filter(pk=row.pk).update(action="user.forged")
    with pytest.raises(AppendOnlyError):
        AccountAudit.objects.all().delete()
    assert AccountAudit.objects.get(pk=row.pk).action == "user.create"


def test_the_audit_log_is_shown_read_only_to_superusers_only(superuser, stakeholder_user, admin_user_):
    client = client_for(superuser)
    page = client.get("/admin/reviewapp/accountaudit/")
    assert page.status_code == 200
    assert "sam_stakeholder" in page.content.decode()
    entry = AccountAudit.objects.first()
    assert client.get(f"/admin/reviewapp/accountaudit/{entry.pk}/delete/").status_code == 403
    assert client.get("/admin/reviewapp/accountaudit/add/").status_code == 403
    client.post(f"/admin/reviewapp/accountaudit/{entry.pk}/change/", {"action": "x"})
    assert AccountAudit.objects.get(pk=entry.pk).action == entry.action
    assert client_for(admin_user_).get("/admin/reviewapp/accountaudit/").status_code == 403


def test_a_superuser_cannot_give_a_model_output_role_to_someone_holding_assignments(superuser, reviewer_user):
    from tests.reviewapp.review.conftest import make_pool

    make_pool(reviewers=[reviewer_user], per_item=1)
    admin_group = Group.objects.get(name="admin")
    response = client_for(superuser).post(f"/admin/auth/user/{reviewer_user.pk}/change/", {
        "username": reviewer_user.username, "is_active": "on", "groups": [admin_group.pk],
        "date_joined_0": "2026-01-01", "date_joined_1": "00:00:00"})
    assert response.status_code == 200
    assert "blind-review assignment" in response.content.decode()
    assert not reviewer_user.groups.filter(name="admin").exists()


# ---------------------------------------------------------------------------------------------- login limit

LOOKALIKES = ["ｖｉｃｔｉｍ", "𝐯𝐢𝐜𝐭𝐢𝐦", "vｉctim"]


@pytest.fixture
def victim(django_user_model, db, settings):
    settings.LOGIN_RATE_LIMIT = 3
    return django_user_model.objects.create_user(username="victim", password="right-password-123")


@pytest.mark.parametrize("lookalike", LOOKALIKES)
@pytest.mark.parametrize("login_url", ["/accounts/login/", "/admin/login/"])
def test_a_lookalike_name_does_not_get_past_the_limit(victim, lookalike, login_url):
    victim.is_staff = True  # so that the right password would pass /admin/login/ too
    victim.save()
    client = Client()
    for _ in range(3):
        client.post(login_url, {"username": "victim", "password": "wrong"})
    response = client.post(login_url, {"username": lookalike, "password": "right-password-123"})
    assert "_auth_user_id" not in client.session
    assert b"Too many failed sign-in attempts" in response.content


@pytest.mark.parametrize("lookalike", LOOKALIKES)
def test_failures_under_a_lookalike_name_count_against_the_real_one(victim, lookalike):
    client = Client()
    for _ in range(3):
        client.post("/accounts/login/", {"username": lookalike, "password": "wrong"})
    client.post("/accounts/login/", {"username": "victim", "password": "right-password-123"})
    assert "_auth_user_id" not in client.session


def test_the_admin_login_is_limited_like_the_site_login(victim):
    victim.is_staff = True
    victim.save()
    client = Client()
    for _ in range(15):
        client.post("/admin/login/", {"username": "victim", "password": "wrong"})
    client.post("/admin/login/", {"username": "victim", "password": "right-password-123"})
    assert "_auth_user_id" not in client.session


def test_the_limit_is_per_client_address(victim):
    for _ in range(3):
        Client(REMOTE_ADDR="10.0.0.1").post("/accounts/login/", {"username": "victim", "password": "wrong"})
    other = Client(REMOTE_ADDR="10.0.0.2")
    other.post("/accounts/login/", {"username": "victim", "password": "right-password-123"})
    assert other.session.get("_auth_user_id") == str(victim.pk)


def test_the_address_is_remote_addr_unless_proxies_are_trusted(settings):
    from django.test import RequestFactory

    from reviewapp.core.auth.credentials import client_address

    request = RequestFactory().get("/", REMOTE_ADDR="10.0.0.9", HTTP_X_FORWARDED_FOR="6.6.6.6, 192.0.2.4")
    settings.TRUSTED_PROXY_COUNT = 0
    assert client_address(request) == "10.0.0.9"  # a client's own header is never believed
    settings.TRUSTED_PROXY_COUNT = 1
    assert client_address(request) == "192.0.2.4"  # what the one trusted proxy appended; "6.6.6.6" is the client's
    settings.TRUSTED_PROXY_COUNT = 2
    assert client_address(request) == "6.6.6.6"
    settings.TRUSTED_PROXY_COUNT = 3
    assert client_address(request) == "10.0.0.9"  # fewer entries than proxies: only its own hop is known


def test_an_attempt_is_counted_before_its_password_is_checked(victim, monkeypatch):
    """The count a burst would race on is taken before the hash: the attempt over the limit is never checked."""
    from django.contrib.auth.forms import AuthenticationForm

    checked = []
    original = AuthenticationForm.clean
    monkeypatch.setattr(AuthenticationForm, "clean", lambda form: checked.append(1) or original(form))
    client = Client()
    for _ in range(5):
        client.post("/accounts/login/", {"username": "victim", "password": "wrong"})
    assert len(checked) == 3


def test_a_successful_sign_in_gives_its_count_back(victim):
    for _ in range(5):
        client = Client()
        client.post("/accounts/login/", {"username": "victim", "password": "right-password-123"})
        assert client.session.get("_auth_user_id") == str(victim.pk)


def test_wrong_passwords_from_many_addresses_are_capped_per_account(victim, settings):
    settings.LOGIN_ACCOUNT_RATE_LIMIT = 4
    for i in range(4):
        Client(REMOTE_ADDR=f"10.1.0.{i}").post("/accounts/login/", {"username": "victim", "password": "wrong"})
    owner = Client(REMOTE_ADDR="10.2.0.1")
    response = owner.post("/accounts/login/", {"username": "victim", "password": "right-password-123"})
    assert "_auth_user_id" not in owner.session
    assert b"Too many failed sign-in attempts" in response.content


def test_refused_attempts_from_one_address_do_not_lock_the_account_elsewhere(victim, settings):
    settings.LOGIN_ACCOUNT_RATE_LIMIT = 5
    for _ in range(20):
        Client(REMOTE_ADDR="10.3.0.1").post("/accounts/login/", {"username": "victim", "password": "wrong"})
    owner = Client(REMOTE_ADDR="10.3.0.2")
    owner.post("/accounts/login/", {"username": "victim", "password": "right-password-123"})
    assert owner.session.get("_auth_user_id") == str(victim.pk)


def test_repeated_bad_tokens_from_one_address_are_refused_even_with_a_good_token(victim, reviewer_user):
    good = api_token_create(user=reviewer_user).key
    for _ in range(3):
        assert Client().get("/api/v1/me/", HTTP_AUTHORIZATION="Token not-a-token").status_code in (401, 403)
    assert Client().get("/api/v1/me/", HTTP_AUTHORIZATION=f"Token {good}").status_code in (401, 403)
    assert Client(REMOTE_ADDR="10.9.9.9").get("/api/v1/me/", HTTP_AUTHORIZATION=f"Token {good}").status_code == 200


# ---------------------------------------------------------------------------------------------- API tokens


def test_a_reviewer_makes_its_own_token_shown_once_and_stored_as_a_digest(reviewer_user, reviewer_client):
    page = reviewer_client.post("/accounts/tokens/", {"name": "my script"})
    assert page.status_code == 200
    key = page.context["created"].key
    assert key in page.content.decode()
    token = ApiToken.objects.get(user=reviewer_user)
    assert token.key_digest == token_digest(key) and key not in token.key_digest
    assert key not in reviewer_client.get("/accounts/tokens/").content.decode()  # never shown again
    assert Client().get("/api/v1/me/", HTTP_AUTHORIZATION=f"Token {key}").json()["username"] == "rita_reviewer"
    assert AccountAudit.objects.filter(action="token.create", actor="rita_reviewer").exists()


def test_a_token_expires(reviewer_user, settings):
    key = api_token_create(user=reviewer_user).key
    ApiToken.objects.filter(user=reviewer_user).update(expires_at=timezone.now() - timedelta(seconds=1))
    response = Client().get("/api/v1/me/", HTTP_AUTHORIZATION=f"Token {key}")
    assert response.status_code in (401, 403)
    assert "expired" in response.json()["detail"]


def test_a_token_lives_for_the_configured_time(reviewer_user, settings):
    settings.API_TOKEN_TTL_SECONDS = 3600
    made = api_token_create(user=reviewer_user).token
    assert timedelta(minutes=59) < made.expires_at - timezone.now() <= timedelta(hours=1)


def test_a_password_change_kills_the_token(reviewer_user, reviewer_client):
    key = api_token_create(user=reviewer_user).key
    assert Client().get("/api/v1/me/", HTTP_AUTHORIZATION=f"Token {key}").status_code == 200
    response = reviewer_client.post("/accounts/password/", {
        "old_password": "pw-rita_reviewer", "new_password1": "a-brand-new-secret-42",
        "new_password2": "a-brand-new-secret-42"})
    assert response.status_code == 302
    dead = Client().get("/api/v1/me/", HTTP_AUTHORIZATION=f"Token {key}")
    assert dead.status_code in (401, 403)
    assert "password change" in dead.json()["detail"]
    change = AccountAudit.objects.filter(action="user.change", target="rita_reviewer").last()
    assert change.detail == {"password": "changed"} and change.actor == "rita_reviewer"


def test_a_user_revokes_only_its_own_tokens(reviewer_user, reviewer2_user):
    mine = api_token_create(user=reviewer_user).token
    theirs = api_token_create(user=reviewer2_user).token
    client = client_for(reviewer_user)
    client.post(f"/accounts/tokens/{theirs.pk}/revoke/")
    assert ApiToken.objects.filter(pk=theirs.pk).exists()
    client.post(f"/accounts/tokens/{mine.pk}/revoke/")
    assert not ApiToken.objects.filter(pk=mine.pk).exists()
