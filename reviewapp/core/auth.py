"""Signing in: a failed-attempt limit on every login path, and hashed, expiring API tokens.

The limit counts failures per client address and per username *as Django will look it up*: the login forms
normalise the typed name with NFKC (``AbstractBaseUser.normalize_username``) before authenticating, so
"ｖｉｃｔｉｍ", "𝐯𝐢𝐜𝐭𝐢𝐦" and "vｉctim" all sign in as "victim" and must all count against "victim".
The same limit guards ``/accounts/login/`` and ``/admin/login/``; failed API token attempts are limited per
address.

API tokens: a user makes their own on /accounts/tokens/ (never an admin for someone else), sees it once; the
database keeps its SHA-256 digest, an expiry (``API_TOKEN_TTL_SECONDS``) and a stamp of the password it was
made under, so a password change kills it.
"""

from __future__ import annotations

import hashlib
import secrets
from dataclasses import dataclass
from datetime import timedelta
from typing import Any

from django import forms
from django.conf import settings
from django.contrib.admin.forms import AdminAuthenticationForm
from django.contrib.auth.base_user import AbstractBaseUser
from django.contrib.auth.forms import AuthenticationForm
from django.contrib.auth.views import LoginView
from django.core.cache import cache
from django.http import HttpRequest
from django.utils import timezone
from rest_framework import authentication, exceptions

# ---------------------------------------------------------------------------
# The failed-login limit
# ---------------------------------------------------------------------------


def login_identity(username: str) -> str:
    """The name a login attempt is counted under: Django's NFKC normalisation, then case-folded.

    Case-folding is stricter than Django's (case-sensitive) lookup: "Victim" and "victim" share one count,
    which can only make the limit hold sooner.
    """
    return AbstractBaseUser.normalize_username(str(username or "")).strip().casefold()[:150]


def client_address(request: HttpRequest | None) -> str:
    return request.META.get("REMOTE_ADDR", "") if request is not None else ""


def _attempt_key(username: str, address: str) -> str:
    digest = hashlib.sha256(login_identity(username).encode()).hexdigest()
    return f"login-failures:{address}:{digest}"


def _refused_if_limited(key: str) -> None:
    if cache.get(key, 0) >= settings.LOGIN_RATE_LIMIT:
        minutes = max(1, settings.LOGIN_RATE_WINDOW_SECONDS // 60)
        raise forms.ValidationError(
            f"Too many failed sign-in attempts for this account from your address. Try again in {minutes} minutes.",
            code="rate_limited",
        )


def _count_failure(key: str) -> None:
    try:
        cache.incr(key)
    except ValueError:
        cache.set(key, 1, timeout=settings.LOGIN_RATE_WINDOW_SECONDS)


class _RateLimited:
    """Mixin for Django's login forms: refuse while the (normalised name, address) is over the limit."""

    def clean(self) -> dict:
        key = _attempt_key(self.data.get("username", ""), client_address(self.request))
        _refused_if_limited(key)
        try:
            return super().clean()
        except forms.ValidationError:
            _count_failure(key)
            raise


class RateLimitedAuthenticationForm(_RateLimited, AuthenticationForm):
    pass


class RateLimitedAdminAuthenticationForm(_RateLimited, AdminAuthenticationForm):
    pass


class RateLimitedLoginView(LoginView):
    form_class = RateLimitedAuthenticationForm
    redirect_authenticated_user = True


# ---------------------------------------------------------------------------
# API tokens
# ---------------------------------------------------------------------------

TOKEN_KEYWORD = "Token"  # noqa: S105 (the Authorization scheme name)


def token_digest(key: str) -> str:
    return hashlib.sha256(key.encode()).hexdigest()


def password_stamp(user: Any) -> str:
    """Changes whenever the password does (``get_session_auth_hash`` is an HMAC of the password hash)."""
    return hashlib.sha256(user.get_session_auth_hash().encode()).hexdigest()


@dataclass(frozen=True)
class NewToken:
    token: Any  # ApiToken
    key: str  # shown once, never stored


def api_token_create(*, user: Any, name: str = "") -> NewToken:
    """A new token for ``user``, made by ``user``; the caller shows ``key`` once."""
    from reviewapp.core.audit import audit_actor
    from reviewapp.core.models import ApiToken

    if not getattr(user, "is_authenticated", False) or not user.is_active:
        raise ValueError("user: only an active, signed-in user makes their own token")
    name = (name or "").strip()
    if len(name) > 100:
        raise ValueError("name: at most 100 characters")
    key = secrets.token_urlsafe(32)
    with audit_actor(user):
        token = ApiToken.objects.create(
            user=user, name=name, prefix=key[:8], key_digest=token_digest(key), password_stamp=password_stamp(user),
            expires_at=timezone.now() + timedelta(seconds=settings.API_TOKEN_TTL_SECONDS),
        )
    return NewToken(token=token, key=key)


def api_token_revoke(*, user: Any, token_id: int) -> bool:
    """Delete one of ``user``'s own tokens; False if it is not theirs (or gone)."""
    from reviewapp.core.audit import audit_actor
    from reviewapp.core.models import ApiToken

    token = ApiToken.objects.filter(user=user, pk=token_id).first()
    if token is None:
        return False
    with audit_actor(user):
        token.delete()
    return True


def _token_failures_key(address: str) -> str:
    return f"token-failures:{address}"


class HashedTokenAuthentication(authentication.BaseAuthentication):
    """``Authorization: Token <key>`` against the stored digest; refuses expired tokens and old passwords."""

    def authenticate(self, request: Any) -> tuple[Any, Any] | None:
        header = authentication.get_authorization_header(request).split()
        if not header or header[0].lower() != TOKEN_KEYWORD.lower().encode():
            return None
        if len(header) != 2:
            raise exceptions.AuthenticationFailed("Invalid token header: expected 'Token <key>'.")
        address = client_address(request._request if hasattr(request, "_request") else request)
        failures = _token_failures_key(address)
        if cache.get(failures, 0) >= settings.LOGIN_RATE_LIMIT:
            raise exceptions.AuthenticationFailed("Too many failed token attempts from your address; try later.")
        try:
            key = header[1].decode()
        except UnicodeError:
            key = ""
        from reviewapp.core.models import ApiToken

        token = ApiToken.objects.select_related("user").filter(key_digest=token_digest(key)).first() if key else None
        reason = None
        if token is None:
            reason = "Invalid token."
        elif token.expires_at <= timezone.now():
            reason = "Token expired; make a new one on /accounts/tokens/."
        elif not token.user.is_active:
            reason = "User inactive."
        elif not secrets.compare_digest(token.password_stamp, password_stamp(token.user)):
            reason = "Token revoked by a password change; make a new one on /accounts/tokens/."
        if reason is not None:
            _count_failure(failures)
            raise exceptions.AuthenticationFailed(reason)
        from reviewapp.core.signin import signin_method_set

        signin_method_set("token")
        return token.user, token

    def authenticate_header(self, request: Any) -> str:
        return TOKEN_KEYWORD

