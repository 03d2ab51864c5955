"""An admin sees a reviewer's sessions and tokens, ends one session, or signs the reviewer out everywhere."""

from __future__ import annotations

import pytest
from django.contrib.sessions.models import Session
from django.test import Client

from reviewapp.core.auth.accounts import AccountError
from reviewapp.core.auth.credentials import api_token_create
from reviewapp.core.models import AccountAudit, ApiToken
from reviewapp.sso.models import UserSession
from reviewapp.sso.sessions import user_sessions_active, user_sign_out_everywhere
from tests.factories import client_for

PASSWORD = "a-long-reviewer-passphrase-40"


@pytest.fixture
def signed_in_twice(reviewer_user):
    reviewer_user.set_password(PASSWORD)
    reviewer_user.save()
    browsers = []
    for agent in ("Laptop browser", "Phone browser"):
        browser = Client(HTTP_USER_AGENT=agent)
        assert browser.post("/accounts/login/", {"username": reviewer_user.username, "password": PASSWORD}
                            ).status_code == 302
        browsers.append(browser)
    return browsers


def test_the_admin_page_lists_sessions_and_ends_one(admin_user_, reviewer_user, signed_in_twice):
    laptop, phone = signed_in_twice
    sessions = user_sessions_active(user=reviewer_user)
    assert sorted(s.user_agent for s in sessions) == ["Laptop browser", "Phone browser"]
    assert {s.signin_method for s in sessions} == {"password"} and all(s.expires_at for s in sessions)
    admin = client_for(admin_user_)
    page = admin.get(f"/review/people/reviewers/{reviewer_user.pk}/").content.decode()
    assert "Phone browser" in page and "Laptop browser" in page and 'data-testid="sign-out-everywhere"' in page

    phone_row = UserSession.objects.get(user=reviewer_user, user_agent="Phone browser")
    ended = admin.post(f"/review/people/reviewers/{reviewer_user.pk}/sessions/{phone_row.pk}/end/")
    assert ended.status_code == 302
    assert phone.get("/review/workspace/").status_code == 302  # back to the sign-in page
    assert laptop.get("/review/workspace/").status_code == 200  # the other browser stays in
    assert [s.user_agent for s in user_sessions_active(user=reviewer_user)] == ["Laptop browser"]


def test_sign_out_everywhere_ends_sessions_and_revokes_tokens(admin_user_, reviewer_user, signed_in_twice):
    laptop, phone = signed_in_twice
    key = api_token_create(user=reviewer_user, name="script").key
    assert Client().get("/api/v1/me/", HTTP_AUTHORIZATION=f"Token {key}").status_code == 200
    # A session from before sessions were recorded is found too (database engine: decoded).
    UserSession.objects.filter(user_agent="Laptop browser").delete()

    admin = client_for(admin_user_)
    done = admin.post(f"/review/people/reviewers/{reviewer_user.pk}/sign-out-everywhere/")
    assert done.status_code == 302
    assert laptop.get("/review/workspace/").status_code == 302 and phone.get("/review/workspace/").status_code == 302
    refused = Client().get("/api/v1/me/", HTTP_AUTHORIZATION=f"Token {key}")
    assert refused.status_code == 403 and refused.json()["detail"] == "Invalid token."
    assert not ApiToken.objects.filter(user=reviewer_user).exists()
    assert not any(s.get_decoded().get("_auth_user_id") == str(reviewer_user.pk) for s in Session.objects.all())
    audit = AccountAudit.objects.get(action="user.sign_out_everywhere")
    assert (audit.actor, audit.detail) == (admin_user_.username, {"sessions": 2, "tokens": 1})
    # Signing in again works as before.
    assert Client().post("/accounts/login/", {"username": reviewer_user.username, "password": PASSWORD}
                         ).status_code == 302


def test_only_the_admin_role_or_the_account_itself_signs_it_out(reviewer_user, reviewer2_user, stakeholder_user,
                                                                 admin_user_):
    with pytest.raises(AccountError, match="only the account itself or the admin role"):
        user_sign_out_everywhere(user=reviewer_user, by=reviewer2_user)
    with pytest.raises(AccountError, match="not a plain reviewer"):
        user_sign_out_everywhere(user=stakeholder_user, by=admin_user_)
    assert user_sign_out_everywhere(user=reviewer_user, by=reviewer_user).sessions == 0
    assert client_for(reviewer2_user).post(
        f"/review/people/reviewers/{reviewer_user.pk}/sign-out-everywhere/").status_code == 403


@pytest.mark.slow  # starts Python twice to read the settings from a fresh environment
def test_session_expiry_comes_from_the_environment():
    import subprocess
    import sys

    code = "from django.conf import settings; print(settings.SESSION_COOKIE_AGE, settings.SESSION_SAVE_EVERY_REQUEST)"
    env = {"SESSION_COOKIE_AGE": "3600", "SESSION_SAVE_EVERY_REQUEST": "1", "DJANGO_SETTINGS_MODULE":
           "reviewapp.settings"}
    import os

    out = subprocess.run([sys.executable, "-c", f"import django; django.setup(); {code}"], env={**os.environ, **env},
                         capture_output=True, text=True, timeout=60)
    assert out.stdout.split() == ["3600", "True"], out.stderr[-500:]
    bad = subprocess.run([sys.executable, "-c", "import django; django.setup()"], capture_output=True, text=True,
                         env={**os.environ, **env, "SESSION_COOKIE_AGE": "5"}, timeout=60)
    assert "SESSION_COOKIE_AGE=5 must be between 60 seconds and a year" in bad.stderr


def test_identity_links_are_backed_up_but_never_administered_by_the_admin_role(db):
    from django.contrib.auth.models import Group

    from reviewapp.core.auth.roles import ensure_role_groups
    from reviewapp.core.backup import backup_models

    labels = {model._meta.label for model in backup_models()}
    assert "sso.OidcIdentity" in labels and "sso.UserSession" not in labels
    ensure_role_groups()
    for group in Group.objects.all():
        assert not group.permissions.filter(content_type__app_label="sso").exists(), group.name
