"""Health endpoint, roles, home page per role, API auth and schema."""

from __future__ import annotations

import pytest
from django.test import Client, override_settings

from reviewapp.core.auth.credentials import api_token_create


@pytest.mark.django_db
def test_healthz_reports_up_without_login_and_details_to_staff(admin_client_):
    response = Client().get("/healthz")
    assert response.status_code == 200
    assert response.json() == {"status": "ok"}  # anonymous: up or down only (see test_health_details.py)
    body = admin_client_.get("/healthz").json()
    assert body["status"] == "ok"
    assert body["database"]["ok"] is True
    assert body["broker"]["ok"] is True


@pytest.mark.django_db
def test_healthz_reports_a_down_broker_as_503(admin_client_):
    with override_settings(REDIS_URL="redis://127.0.0.1:1/0"):
        response = admin_client_.get("/healthz")
    assert response.status_code == 503
    body = response.json()
    assert body["status"] == "down"
    assert body["broker"]["ok"] is False


@pytest.mark.django_db
def test_the_home_page_needs_a_login():
    response = Client().get("/")
    assert response.status_code == 302
    assert "/accounts/login/" in response["Location"]


def test_each_role_sees_what_it_can_do(admin_client_, reviewer_client, stakeholder_client):
    reviewer_page = reviewer_client.get("/").content.decode()
    assert 'data-testid="card-review"' in reviewer_page
    assert 'data-testid="card-reports"' not in reviewer_page
    assert 'data-testid="card-admin"' not in reviewer_page

    stakeholder_page = stakeholder_client.get("/").content.decode()
    assert 'data-testid="card-reports"' in stakeholder_page
    assert 'data-testid="card-review"' not in stakeholder_page
    assert 'data-testid="card-admin"' not in stakeholder_page

    admin_page = admin_client_.get("/").content.decode()
    assert 'data-testid="card-admin"' in admin_page
    assert 'data-testid="card-reports"' in admin_page
    assert 'data-testid="card-review"' not in admin_page


def test_roles_carry_their_permissions(admin_user_, reviewer_user, stakeholder_user):
    assert reviewer_user.has_perm("reviewapp.grade_passages")
    assert not reviewer_user.has_perm("reviewapp.view_reports")
    assert stakeholder_user.has_perm("reviewapp.view_reports")
    assert not stakeholder_user.has_perm("reviewapp.launch_runs")
    assert admin_user_.has_perm("reviewapp.launch_runs")
    assert admin_user_.has_perm("reviewapp.manage_reviews")
    assert not admin_user_.has_perm("reviewapp.grade_passages")


def test_the_admin_role_reaches_the_django_admin_and_others_do_not(admin_client_, reviewer_client):
    assert admin_client_.get("/admin/").status_code == 200
    assert admin_client_.get("/admin/reviewapp/reviewpool/").status_code == 200
    # users, groups and tokens are a superuser's alone (tests/reviewapp/core/auth/test_accounts.py)
    assert admin_client_.get("/admin/auth/user/").status_code == 403
    assert reviewer_client.get("/admin/").status_code == 302


def test_the_api_accepts_session_and_token_auth(reviewer_user, reviewer_client):
    assert reviewer_client.get("/api/v1/me/").json() == {"username": "rita_reviewer", "roles": ["reviewer"]}
    token = api_token_create(user=reviewer_user)
    response = Client().get("/api/v1/me/", HTTP_AUTHORIZATION=f"Token {token.key}")
    assert response.status_code == 200
    assert response.json()["roles"] == ["reviewer"]


@pytest.mark.django_db
def test_the_api_refuses_anonymous_callers():
    assert Client().get("/api/v1/me/").status_code in {401, 403}


def test_the_openapi_schema_is_served(stakeholder_client):
    response = stakeholder_client.get("/api/v1/schema/")
    assert response.status_code == 200
    assert b"openapi" in response.content


@pytest.mark.django_db
def test_failed_logins_are_rate_limited(settings, reviewer_user):
    settings.LOGIN_RATE_LIMIT = 3
    client = Client()
    for _ in range(3):
        response = client.post("/accounts/login/", {"username": "rita_reviewer", "password": "wrong"})
        assert response.status_code == 200
    # Even the right password is refused while the limit holds.
    response = client.post("/accounts/login/", {"username": "rita_reviewer", "password": "pw-rita_reviewer"})
    assert response.status_code == 200
    assert b"Too many failed sign-in attempts" in response.content
    assert "_auth_user_id" not in client.session


@pytest.mark.django_db
def test_a_right_password_signs_in(reviewer_user):
    client = Client()
    response = client.post("/accounts/login/", {"username": "rita_reviewer", "password": "pw-rita_reviewer"})
    assert response.status_code == 302
    assert client.get("/").status_code == 200


def test_passwords_are_stored_with_djangos_default_hasher(reviewer_user):
    assert reviewer_user.password.startswith("pbkdf2_sha256$")
