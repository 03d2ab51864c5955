"""OpenID Connect settings from the environment, checked at start-up with errors that name the variable.

``OIDC_ISSUER`` turns single sign-on on. The endpoints come from the issuer's discovery document
(``<issuer>/.well-known/openid-configuration``, read at the first sign-in) unless given one by one. The client
secret is read from ``OIDC_CLIENT_SECRET`` or from the file ``OIDC_CLIENT_SECRET_FILE`` names (a Docker secret).
Local passwords stay (small installs, and the superuser who must still get in when the IdP is down).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlparse

from reviewapp.config import ConfigError
from reviewapp.sso.claims import ClaimsError, parse_default_roles, parse_role_groups

# Endpoint variables and the discovery document's name for each.
ENDPOINTS = {
    "OIDC_AUTHORIZATION_ENDPOINT": "authorization_endpoint",
    "OIDC_TOKEN_ENDPOINT": "token_endpoint",
    "OIDC_USERINFO_ENDPOINT": "userinfo_endpoint",
    "OIDC_JWKS_ENDPOINT": "jwks_uri",
    "OIDC_END_SESSION_ENDPOINT": "end_session_endpoint",
}
SIGN_ALGORITHMS = ("RS256", "RS384", "RS512", "ES256", "ES384", "ES512", "PS256")
LOOPBACK_HOSTS = ("127.0.0.1", "localhost", "::1")


@dataclass(frozen=True)
class OidcSettings:
    """What settings.py sets when single sign-on is on (``enabled`` False: nothing else is read)."""

    enabled: bool = False
    issuer: str = ""
    client_id: str = ""
    client_secret: str = ""
    scopes: str = "openid email profile"
    groups_claim: str = "groups"
    role_groups: dict[str, tuple[str, ...]] = field(default_factory=dict)
    default_roles: tuple[str, ...] = ()
    hosted_domain: str = ""
    provider_name: str = ""
    sign_algo: str = "RS256"
    endpoints: dict[str, str] = field(default_factory=dict)
    timeout_seconds: int = 10

    def as_django_settings(self) -> dict[str, Any]:
        """The names mozilla-django-oidc and reviewapp.sso read."""
        values: dict[str, Any] = {
            "OIDC_ENABLED": self.enabled, "OIDC_ISSUER": self.issuer, "OIDC_RP_CLIENT_ID": self.client_id,
            "OIDC_RP_CLIENT_SECRET": self.client_secret, "OIDC_RP_SCOPES": self.scopes,
            "OIDC_GROUPS_CLAIM": self.groups_claim, "OIDC_ROLE_GROUPS": self.role_groups,
            "OIDC_DEFAULT_ROLES": self.default_roles, "OIDC_HOSTED_DOMAIN": self.hosted_domain,
            "OIDC_PROVIDER_NAME": self.provider_name or "your organisation's sign-in",
            "OIDC_RP_SIGN_ALGO": self.sign_algo, "OIDC_TIMEOUT": self.timeout_seconds,
        }
        values.update(self.endpoints)
        return values


def _check_url(name: str, url: str) -> str:
    """https, or http on a loopback address only (a test or a provider on the same machine)."""
    parsed = urlparse(url)
    if parsed.scheme == "https" and parsed.netloc:
        return url
    if parsed.scheme == "http" and parsed.hostname in LOOPBACK_HOSTS:
        return url
    raise ConfigError(f"{name}={url!r} must be an https:// URL (http:// only on 127.0.0.1 or localhost)")


def oidc_settings(env: Callable[[str], str], env_int: Callable[[str, int], int]) -> OidcSettings:
    """Read and check the ``OIDC_*`` variables; ``env`` reads a variable or its ``_FILE`` (reviewapp.config)."""
    issuer = env("OIDC_ISSUER").strip()
    if not issuer:
        return OidcSettings()
    # Kept exactly as given: the ID token's ``iss`` must equal it character for character (OIDC Core 3.1.3.7).
    issuer = _check_url("OIDC_ISSUER", issuer)
    client_id = env("OIDC_CLIENT_ID").strip()
    if not client_id:
        raise ConfigError("OIDC_CLIENT_ID is empty; set the client (application) id registered at the IdP")
    secret = env("OIDC_CLIENT_SECRET").strip()
    if not secret:
        raise ConfigError("OIDC_CLIENT_SECRET is empty; set it, or OIDC_CLIENT_SECRET_FILE to a file holding it")
    scopes = " ".join(env("OIDC_SCOPES").split()) or "openid email profile"
    if "openid" not in scopes.split():
        raise ConfigError(f"OIDC_SCOPES={scopes!r} must include openid")
    try:
        role_groups = parse_role_groups(env("OIDC_ROLE_GROUPS"))
        default_roles = parse_default_roles(env("OIDC_DEFAULT_ROLES"))
    except ClaimsError as error:
        raise ConfigError(str(error)) from None
    if not role_groups and not default_roles:
        raise ConfigError("OIDC_ROLE_GROUPS is empty (and so is OIDC_DEFAULT_ROLES): nobody signing in through "
                          "the IdP would get a role; e.g. OIDC_ROLE_GROUPS='reviewer=Lawyers;admin=Review admins'")
    algo = env("OIDC_SIGN_ALGO").strip() or "RS256"
    if algo not in SIGN_ALGORITHMS:
        # HS256 would verify ID tokens with the client secret, which the server also holds: a leaked secret
        # could then mint identities. Only the IdP's public keys (JWKS) are trusted.
        raise ConfigError(f"OIDC_SIGN_ALGO={algo!r}: use one of {', '.join(SIGN_ALGORITHMS)} (public-key only)")
    endpoints = {name: _check_url(name, value.strip()) for name in ENDPOINTS if (value := env(name).strip())}
    timeout = env_int("OIDC_TIMEOUT_SECONDS", 10)
    if not 1 <= timeout <= 60:
        raise ConfigError(f"OIDC_TIMEOUT_SECONDS={timeout} must be between 1 and 60")
    return OidcSettings(
        enabled=True, issuer=issuer, client_id=client_id, client_secret=secret, scopes=scopes,
        groups_claim=env("OIDC_GROUPS_CLAIM").strip() or "groups", role_groups=role_groups,
        default_roles=default_roles, hosted_domain=env("OIDC_HOSTED_DOMAIN").strip(),
        provider_name=env("OIDC_PROVIDER_NAME").strip(), sign_algo=algo, endpoints=endpoints,
        timeout_seconds=timeout)


def _origin(url: str) -> str:
    parsed = urlparse(url)
    return f"{parsed.scheme}://{parsed.netloc}"


def csp_allowing_idp(policy: str, oidc: OidcSettings) -> str:
    """The content security policy with the IdP's origins added to ``form-action``.

    Signing out is a form POST answered by a redirect to the IdP's end-session endpoint, and browsers hold such
    redirects to ``form-action`` too: with ``'self'`` alone, Chrome would block the sign-out at the IdP.
    """
    if not oidc.enabled or "form-action" not in policy:
        return policy
    origins = sorted({_origin(oidc.issuer)} | {_origin(url) for url in oidc.endpoints.values()})
    parts = []
    for directive in policy.split(";"):
        name = directive.strip().split(" ", 1)[0]
        if name == "form-action":
            present = directive.split()
            directive = " ".join([*present, *(o for o in origins if o not in present)])
        parts.append(directive.strip())
    return "; ".join(part for part in parts if part)
