"""A real OpenID Connect provider on loopback (django-oidc-provider in its own gunicorn process, its own
SQLite file), and a helper that walks a browser's sign-in through it and back to the product. The fixtures are
imported by the conftest of each test folder that signs in through it (tests/reviewapp/sso, tests/browser).

The product side runs in the test process (Django's test client): only the redirect URI's path and query
travel from the IdP back to it, as a browser would carry them; the product itself calls the IdP's token,
userinfo and JWKS endpoints over real HTTP.
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import urljoin, urlsplit

import pytest
import requests
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import rsa

REPO_ROOT = Path(__file__).resolve().parents[3]
SETTINGS = "tests.reviewapp.sso.idp_site.settings"
CLIENT_ID = "reviewapp-test"
CLIENT_SECRET = "loopback-client-secret"
REDIRECT_URI = "http://testserver/accounts/oidc/callback/"
LOGOUT_REDIRECT = "http://testserver/accounts/login/"
START_SECONDS = 30


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@dataclass
class LoopbackIdp:
    url: str
    env: dict[str, str]
    private_key: rsa.RSAPrivateKey
    kid: str = ""
    subjects: dict[str, str] = field(default_factory=dict)

    @property
    def issuer(self) -> str:
        return self.url + "/openid"

    def change(self, change: dict) -> dict:
        out = subprocess.run([sys.executable, "-m", "tests.reviewapp.sso.idp_site.tool", json.dumps(change)],
                             cwd=REPO_ROOT, env=self.env, capture_output=True, text=True, timeout=60, check=True)
        return json.loads(out.stdout.strip().splitlines()[-1]) if out.stdout.strip() else {}

    def allow_redirect(self, redirect_uri: str) -> None:
        """Register one more redirect URI (a browser test's live server) next to the test client's."""
        self.change({"client": {"client_id": CLIENT_ID, "client_secret": CLIENT_SECRET,
                                "redirect_uris": [REDIRECT_URI, redirect_uri],
                                "post_logout_redirect_uris": [LOGOUT_REDIRECT, redirect_uri.replace(
                                    "/accounts/oidc/callback/", "/accounts/login/")]}})

    def set_user(self, username: str, *, groups: list[str], active: bool = True, password: str = "pw-" + "idp") \
            -> str:
        sub = self.change({"user": {"username": username, "password": password, "email": f"{username}@firm.test",
                                    "first_name": username.title(), "groups": groups, "active": active}})["sub"]
        self.subjects[username] = sub
        return sub


@pytest.fixture(scope="session")
def idp(tmp_path_factory) -> LoopbackIdp:
    folder = tmp_path_factory.mktemp("idp")
    port = _free_port()
    url = f"http://127.0.0.1:{port}"
    env = {**os.environ, "DJANGO_SETTINGS_MODULE": SETTINGS, "IDP_DB": str(folder / "idp.sqlite3"),
           "IDP_SITE_URL": url, "PYTHONPATH": str(REPO_ROOT)}
    env.pop("DATABASE_URL", None)
    subprocess.run([sys.executable, "-m", "django", "migrate", "--noinput", "-v", "0"], cwd=REPO_ROOT, env=env,
                   check=True, timeout=120)
    key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    pem = key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                            serialization.NoEncryption()).decode()
    provider = LoopbackIdp(url=url, env=env, private_key=key)
    provider.kid = provider.change({"key": pem, "client": {
        "client_id": CLIENT_ID, "client_secret": CLIENT_SECRET, "redirect_uris": [REDIRECT_URI],
        "post_logout_redirect_uris": [LOGOUT_REDIRECT]}})["kid"]
    log = (folder / "gunicorn.log").open("w")
    process = subprocess.Popen(
        [sys.executable, "-m", "gunicorn", "tests.reviewapp.sso.idp_site.wsgi:application", "--bind",
         f"127.0.0.1:{port}", "--workers", "1", "--threads", "4", "--timeout", "30"],
        cwd=REPO_ROOT, env=env, stdout=log, stderr=subprocess.STDOUT)
    try:
        deadline = time.monotonic() + START_SECONDS
        while True:
            try:
                if requests.get(provider.issuer + "/.well-known/openid-configuration", timeout=2).ok:
                    break
            except requests.RequestException:
                pass
            if process.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError(f"the loopback IdP did not start: {(folder / 'gunicorn.log').read_text()[-2000:]}")
            time.sleep(0.2)
        yield provider
    finally:
        process.terminate()
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(timeout=10)
        log.close()


ROLE_GROUPS = {"reviewer": ("Lawyers",), "stakeholder": ("Partners",), "admin": ("Review admins",)}


@pytest.fixture
def sso_on(idp, settings):
    """The product configured for the loopback IdP, endpoints from its discovery document."""
    from reviewapp.sso.discovery import forget_metadata

    settings.OIDC_ENABLED = True
    settings.OIDC_ISSUER = idp.issuer
    settings.OIDC_RP_CLIENT_ID = CLIENT_ID
    settings.OIDC_RP_CLIENT_SECRET = CLIENT_SECRET
    settings.OIDC_RP_SCOPES = "openid email profile groups"
    settings.OIDC_GROUPS_CLAIM = "groups"
    settings.OIDC_ROLE_GROUPS = ROLE_GROUPS
    settings.OIDC_DEFAULT_ROLES = ()
    settings.OIDC_HOSTED_DOMAIN = ""
    settings.OIDC_PROVIDER_NAME = "Loopback IdP"
    settings.OIDC_TIMEOUT = 10
    settings.AUTHENTICATION_BACKENDS = ["reviewapp.core.auth.roles.RolePermissionBackend",
                                        "reviewapp.sso.backend.OidcBackend"]
    settings.CONTENT_SECURITY_POLICY = settings.CONTENT_SECURITY_POLICY.replace(
        "form-action 'self'", f"form-action 'self' {idp.url}")
    forget_metadata()
    yield idp
    forget_metadata()


@dataclass
class Walk:
    """One sign-in: the product's answer to the callback, or why the IdP stopped it."""

    response: object | None
    idp_session: requests.Session
    stopped_at_idp: str = ""


def sign_in(client, idp: LoopbackIdp, username: str, *, password: str = "pw-" + "idp",
            idp_session: requests.Session | None = None) -> Walk:
    """What a browser does: start at the product, sign in at the IdP, come back with the code."""
    start = client.get("/accounts/oidc/authenticate/")
    assert start.status_code == 302, start
    authorize = start["Location"]
    assert authorize.startswith(idp.issuer + "/authorize"), authorize
    browser = idp_session or requests.Session()
    answer = browser.get(authorize, allow_redirects=False, timeout=10)
    if answer.status_code == 302 and urlsplit(answer.headers["Location"]).path == "/login/":
        login_url = urljoin(idp.url, answer.headers["Location"])
        page = browser.get(login_url, timeout=10)
        assert page.status_code == 200
        next_url = dict(part.split("=", 1) for part in urlsplit(login_url).query.split("&"))["next"]
        from urllib.parse import unquote

        answer = browser.post(login_url, data={
            "username": username, "password": password, "next": unquote(next_url),
            "csrfmiddlewaretoken": browser.cookies["csrftoken"]}, headers={"Referer": login_url},
            allow_redirects=False, timeout=10)
        if answer.status_code != 302:
            return Walk(response=None, idp_session=browser, stopped_at_idp="the IdP refused the sign-in")
        answer = browser.get(urljoin(idp.url, answer.headers["Location"]), allow_redirects=False, timeout=10)
    assert answer.status_code == 302, answer.text[:500]
    back = urlsplit(answer.headers["Location"])
    assert f"{back.scheme}://{back.netloc}{back.path}" == REDIRECT_URI, answer.headers["Location"]
    return Walk(response=client.get(f"{back.path}?{back.query}"), idp_session=browser)
