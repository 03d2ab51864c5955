"""The fast layer of single sign-on: claims to roles, and the OIDC_* variables checked at start-up."""

from __future__ import annotations

import random

import pytest

from reviewapp.config import ConfigError
from reviewapp.sso.claims import ClaimsError, parse_role_groups, roles_from_claims
from reviewapp.sso.config import oidc_settings

ROLE_GROUPS = {"reviewer": ("Lawyers", "Paralegals"), "stakeholder": ("Partners",), "admin": ("Review admins",)}


def _roles(claims, **kwargs) -> list[str]:
    return sorted(roles_from_claims(claims, groups_claim=kwargs.pop("groups_claim", "groups"),
                                    role_groups=kwargs.pop("role_groups", ROLE_GROUPS), **kwargs))


def test_groups_map_to_roles_exactly():
    assert _roles({"groups": ["Lawyers"]}) == ["reviewer"]
    assert _roles({"groups": ["Paralegals", "Partners", "Canteen"]}) == ["reviewer", "stakeholder"]
    assert _roles({"groups": "Review admins"}) == ["admin"]
    assert _roles({"groups": ["lawyers", "Lawyers "]}) == []  # names compare exactly
    assert _roles({"email": "x@firm.test"}) == []  # no claim: no role
    assert _roles({}, default_roles=("reviewer",)) == ["reviewer"]
    # Keycloak nests its roles.
    assert _roles({"realm_access": {"roles": ["Partners"]}}, groups_claim="realm_access.roles") == ["stakeholder"]
    with pytest.raises(ClaimsError, match="'groups': expected a list"):
        _roles({"groups": {"Lawyers": True}})
    with pytest.raises(ClaimsError, match="synthetic"):
        _roles({}, default_roles=("synthetic",))


def test_role_mapping_against_a_plain_reference_on_random_claims():
    rng = random.Random(40)
    names = ["Lawyers", "Paralegals", "Partners", "Review admins", "Canteen", "IT"]
    for _ in range(200):
        groups = rng.sample(names, rng.randint(0, len(names)))
        expected = sorted(role for role, wanted in ROLE_GROUPS.items() if any(g in wanted for g in groups))
        assert _roles({"groups": groups}) == expected


def test_role_groups_setting_is_parsed_with_errors_naming_the_part():
    assert parse_role_groups("reviewer=Lawyers, Paralegals; admin=Review admins") == {
        "reviewer": ("Lawyers", "Paralegals"), "admin": ("Review admins",)}
    for raw, message in [("reviewer", "part 1 .* is not role=group"), ("owner=IT", "role 'owner' is not one of"),
                         ("reviewer=A;reviewer=B", "given twice"), ("admin=", "names no group"),
                         ("synthetic=Bots", "role 'synthetic'")]:
        with pytest.raises(ClaimsError, match=message):
            parse_role_groups(raw)


def _settings(**env: str):
    return oidc_settings(lambda name: env.get(name, ""), lambda name, default: int(env.get(name) or default))


GOOD = {"OIDC_ISSUER": "https://login.microsoftonline.com/tenant-id/v2.0", "OIDC_CLIENT_ID": "app-id",
        "OIDC_CLIENT_SECRET": "s", "OIDC_ROLE_GROUPS": "reviewer=0f1e2d3c-aaaa-bbbb-cccc-1234567890ab"}


def test_sso_is_off_without_an_issuer_and_checked_when_on():
    assert not _settings().enabled
    good = _settings(**GOOD)
    assert good.enabled and good.issuer == GOOD["OIDC_ISSUER"] and good.sign_algo == "RS256"
    assert good.as_django_settings()["OIDC_RP_SCOPES"] == "openid email profile"
    assert _settings(**{**GOOD, "OIDC_ISSUER": "http://127.0.0.1:8080/openid"}).enabled  # loopback may be http
    for change, message in [
        ({"OIDC_ISSUER": "http://idp.firm.test"}, "OIDC_ISSUER=.* must be an https:// URL"),
        ({"OIDC_CLIENT_ID": ""}, "OIDC_CLIENT_ID is empty"),
        ({"OIDC_CLIENT_SECRET": ""}, "OIDC_CLIENT_SECRET is empty"),
        ({"OIDC_ROLE_GROUPS": ""}, "OIDC_ROLE_GROUPS is empty"),
        ({"OIDC_ROLE_GROUPS": "boss=IT"}, "OIDC_ROLE_GROUPS: role 'boss'"),
        ({"OIDC_SCOPES": "email"}, "must include openid"),
        ({"OIDC_SIGN_ALGO": "HS256"}, "public-key only"),
        ({"OIDC_TOKEN_ENDPOINT": "http://idp.firm.test/token"}, "OIDC_TOKEN_ENDPOINT=.* must be an https"),
        ({"OIDC_TIMEOUT_SECONDS": "0"}, "between 1 and 60"),
    ]:
        with pytest.raises(ConfigError, match=message):
            _settings(**{**GOOD, **change})


def test_the_client_secret_is_read_from_a_file(tmp_path, monkeypatch):
    from reviewapp.config import env_int, env_str

    secret = tmp_path / "oidc_secret"
    secret.write_text("from-the-file\n")
    for name in ("OIDC_ISSUER", "OIDC_CLIENT_ID", "OIDC_ROLE_GROUPS"):
        monkeypatch.setenv(name, GOOD[name])
    monkeypatch.delenv("OIDC_CLIENT_SECRET", raising=False)
    monkeypatch.setenv("OIDC_CLIENT_SECRET_FILE", str(secret))
    assert oidc_settings(env_str, env_int).client_secret == "from-the-file"
    monkeypatch.setenv("OIDC_CLIENT_SECRET_FILE", str(tmp_path / "missing"))
    with pytest.raises(ConfigError, match=r"OIDC_CLIENT_SECRET_FILE=.* cannot be read"):
        oidc_settings(env_str, env_int)


def test_the_oidc_backend_never_answers_a_password_sign_in(db, client, settings):
    """Listed for every sign-in, it stays out of a password form even with ?code=&state= in its URL."""
    from django.contrib.auth import authenticate
    from django.test import RequestFactory

    settings.OIDC_ENABLED = True
    settings.AUTHENTICATION_BACKENDS = ["reviewapp.core.auth.roles.RolePermissionBackend",
                                        "reviewapp.sso.backend.OidcBackend"]
    request = RequestFactory().post("/accounts/login/?code=stolen&state=s")
    request.session = {}
    assert authenticate(request, username="nobody", password="x") is None


def test_the_sign_out_redirect_to_the_idp_is_allowed_by_the_content_security_policy():
    from reviewapp.sso.config import csp_allowing_idp

    policy = "default-src 'self'; form-action 'self'; frame-ancestors 'none'"
    assert csp_allowing_idp(policy, _settings()) == policy  # single sign-on off: unchanged
    on = _settings(**{**GOOD, "OIDC_END_SESSION_ENDPOINT": "https://logout.firm.test/end"})
    assert csp_allowing_idp(policy, on) == ("default-src 'self'; form-action 'self' https://login.microsoftonline.com "
                                            "https://logout.firm.test; frame-ancestors 'none'")


def test_a_crafted_callback_error_shows_the_error_code_only(db, client, settings):
    settings.OIDC_ENABLED = True
    response = client.get("/accounts/oidc/callback/?error=access_denied&error_description=Call+0800+to+unlock",
                          follow=True)
    page = response.content.decode()
    assert "Single sign-on refused: the identity provider answered &#x27;access_denied&#x27;" in page
    assert "0800" not in page
    crafted = client.get("/accounts/oidc/callback/?error=Call+0800+now", follow=True).content.decode()
    assert "0800" not in crafted and "the sign-in did not complete" in crafted
