"""Deployment: check --deploy clean, secure cookies in production, CSRF on every form and htmx/API POST,
login rate limiting, Django's default password hasher."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from django.apps import apps
from django.test import Client

from tests.conftest import REPO_ROOT as REPO
from tests.trust.fixtures import PASSWORD, client_for
from tests.trust.matrix import MATRIX

pytestmark = pytest.mark.django_db
PRODUCTION_ENV = {
    "PRODUCTION": "1", "DEBUG": "0", "REQUIRE_SECRET_KEY": "1",
    "SECRET_KEY": "trust-" + "k" * 30 + "-a-long-random-production-secret-0123456789",
    "ALLOWED_HOSTS": "eval.example.org",
    # PRODUCTION=1 needs a shared cache; nothing here connects to it.
    "REDIS_URL": "redis://127.0.0.1:6379/13",
}
FORM = re.compile(r"<form\b[^>]*>.*?</form>", re.S | re.I)


def _production(*args: str, tmp_path: Path) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if k not in {"DATABASE_URL", "REDIS_URL", "DJANGO_ALLOW_ASYNC_UNSAFE"}}
    env.update(PRODUCTION_ENV, DATABASE_URL=f"sqlite:///{tmp_path / 'db.sqlite3'}")
    return subprocess.run([sys.executable, *args], cwd=REPO, env=env, capture_output=True, text=True, timeout=120)


def _rows() -> dict[str, int]:
    return {m._meta.label: m._default_manager.count() for m in apps.get_models()
            if m._meta.managed and m._meta.label != "sessions.Session"}


@pytest.mark.slow  # runs manage.py in fresh processes
def test_check_deploy_is_clean_and_cookies_are_secure_in_production(tmp_path):
    check = _production("manage.py", "check", "--deploy", "--fail-level", "WARNING", tmp_path=tmp_path)
    assert check.returncode == 0, check.stdout + check.stderr
    probe = _production("-c", (
        "import django, json, os; os.environ.setdefault('DJANGO_SETTINGS_MODULE', 'reviewapp.settings'); "
        "django.setup(); from django.conf import settings as s; print(json.dumps({k: getattr(s, k) for k in ("
        "'SESSION_COOKIE_SECURE', 'CSRF_COOKIE_SECURE', 'SESSION_COOKIE_HTTPONLY', 'SECURE_SSL_REDIRECT', "
        "'SECURE_HSTS_SECONDS', 'DEBUG', 'X_FRAME_OPTIONS', 'SECURE_CONTENT_TYPE_NOSNIFF')}))"), tmp_path=tmp_path)
    assert probe.returncode == 0, probe.stderr
    values = json.loads(probe.stdout.strip().splitlines()[-1])
    assert values["SESSION_COOKIE_SECURE"] is True and values["CSRF_COOKIE_SECURE"] is True
    assert values["SESSION_COOKIE_HTTPONLY"] is True and values["SECURE_SSL_REDIRECT"] is True
    assert values["SECURE_HSTS_SECONDS"] >= 31536000 and values["DEBUG"] is False
    assert values["X_FRAME_OPTIONS"] == "DENY" and values["SECURE_CONTENT_TYPE_NOSNIFF"] is True


def _allowed_role(entry) -> str | None:
    return next((role for role, expected in entry.post.items() if expected is None), None)


def test_every_unsafe_endpoint_refuses_a_post_without_the_csrf_token(world):
    """Signed in with the role that may POST, but without the token: refused (403) and nothing written."""
    failures, checked = [], 0
    for route, entry in MATRIX.items():
        if entry.post is None:
            continue
        # A moved page's old path sends every role on (no role "may" POST there): it must not skip the check either.
        role = _allowed_role(entry) or "admin"
        client = Client(enforce_csrf_checks=True)
        client.force_login(world.users[role])
        url = world.fmt(entry.url)
        data = {k: world.fmt(v) if isinstance(v, str) else v for k, v in entry.data.items()}
        for headers in ({}, {"HTTP_HX_REQUEST": "true"}):
            before = _rows()
            if entry.json:
                response = client.post(url, json.dumps(data), content_type="application/json", **headers)
            else:
                response = client.post(url, data, **headers)
            checked += 1
            if response.status_code != 403 or b"CSRF" not in response.content:
                failures.append(f"POST {url} ({route}) as {role} without a token{' (htmx)' if headers else ''}: "
                                f"{response.status_code}")
            if _rows() != before:
                failures.append(f"POST {url} ({route}) without a token wrote rows")
    assert checked >= 40
    assert not failures, "\n".join(failures)


def test_the_login_form_needs_the_csrf_token_too(world):
    client = Client(enforce_csrf_checks=True)
    response = client.post("/accounts/login/", {"username": "trust_reviewer", "password": PASSWORD})
    assert response.status_code == 403 and "_auth_user_id" not in client.session


def test_every_post_form_carries_the_token_and_htmx_sends_it_in_a_header(world):
    pages = {("reviewer", "/review/workspace/"), ("reviewer", f"/review/workspace/items/{world.marker_item_id}/")}
    pages |= {("admin", world.fmt(e.url)) for e in MATRIX.values() if e.get["admin"] == 200 and e.post is not None}
    pages |= {("admin", f"/review/pools/{world.marker_pool_id}/"), ("admin", f"/cuad/audits/{world.audit_pk}/"),
              ("admin", f"/benchmarks/rerank/{world.rerank_pk}/"), ("admin", f"/cuad/runs/jobs/{world.cuad_job_pk}/")}
    forms = 0
    for role, url in sorted(pages):
        response = client_for(world.users[role]).get(url)
        if "html" not in response.get("Content-Type", ""):
            continue
        html = response.content.decode()
        assert re.search(r"<body[^>]*hx-headers=[^>]*X-CSRFToken", html), f"{url}: no CSRF header for htmx"
        for form in FORM.findall(html):
            if re.search(r"method=['\"]?post", form, re.I):
                forms += 1
                assert "csrfmiddlewaretoken" in form, f"{url}: a POST form without the CSRF token:\n{form[:300]}"
    assert forms >= 10


def test_failed_logins_are_rate_limited_even_for_the_right_password(world, settings):
    settings.LOGIN_RATE_LIMIT = 3
    client = Client()
    for _ in range(3):
        assert client.post("/accounts/login/", {"username": "trust_admin", "password": "wrong"}).status_code == 200
    response = client.post("/accounts/login/", {"username": "trust_admin", "password": PASSWORD})
    assert b"Too many failed sign-in attempts" in response.content and "_auth_user_id" not in client.session


def test_passwords_are_hashed_with_djangos_default(world, project_password_hashers):
    from django.conf import global_settings
    from django.contrib.auth.hashers import PBKDF2PasswordHasher

    assert project_password_hashers.PASSWORD_HASHERS[0] == global_settings.PASSWORD_HASHERS[0]
    for user in world.users.values():
        user.refresh_from_db()
        assert user.password.startswith("pbkdf2_sha256$") and PASSWORD not in user.password
    # Set under the project's own hashers (the world's users were made at the tests' one round): as stored live.
    user.set_password(PASSWORD)
    assert user.password.startswith(f"pbkdf2_sha256${PBKDF2PasswordHasher.iterations}$")
