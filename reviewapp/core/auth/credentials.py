"""Signing in: a failed-attempt limit on every login path, and hashed, expiring API tokens.

The limit counts failed attempts per username and client address (``LOGIN_RATE_LIMIT``) and per username from
all addresses (``LOGIN_ACCOUNT_RATE_LIMIT``), in a fixed window, in the shared cache (Redis; PRODUCTION=1 refuses a
per-process cache). An attempt is counted before its password is hashed and gives its count back if it signs in,
so a burst of simultaneous guesses gets at most the limit checked. The client address is ``REMOTE_ADDR`` unless
``TRUSTED_PROXY_COUNT`` proxies stand in front (then it is read from their ``X-Forwarded-For`` entries).
The names are counted *as Django will look them up*: the login forms
normalise the typed name with NFKC (``AbstractBaseUser.normalize_username``) before authenticating, so
"ｖｉｃｔｉｍ", "𝐯𝐢𝐜𝐭𝐢𝐦" and "vｉctim" all sign in as "victim" and must all count against "victim".
The same limit guards ``/accounts/login/`` and ``/admin/login/``; failed API token attempts are limited per
address.

API tokens: a user makes their own on /accounts/tokens/ (never an admin for someone else), sees it once; the
database keeps its SHA-256 digest, an expiry (``API_TOKEN_TTL_SECONDS``) and a stamp of the password it was
made under, so a password change kills it.
"""

from __future__ import annotations

import contextlib
import hashlib
import secrets
from dataclasses import dataclass
from datetime import timedelta
from typing import TYPE_CHECKING, Any

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

from reviewapp.core.auth.audit import audit_actor
from reviewapp.core.auth.signin import signin_issuer_current, signin_method_current, signin_method_set
from reviewapp.core.models import ApiToken, SigninMethod

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
    """The address a request came from: ``REMOTE_ADDR``, or, behind ``TRUSTED_PROXY_COUNT`` proxies, the address
    the outermost trusted proxy saw.

    Each trusted proxy appends the address it received the request from to ``X-Forwarded-For``, so the entry
    ``TRUSTED_PROXY_COUNT`` places from the right is the client's; anything left of it came from the client and
    is ignored (a client choosing its own address would make the per-address limit its own choice too).
    """
    if request is None:
        return ""
    remote = request.META.get("REMOTE_ADDR", "")
    proxies = settings.TRUSTED_PROXY_COUNT
    if proxies < 1:
        return remote
    chain = [part.strip() for part in request.META.get("HTTP_X_FORWARDED_FOR", "").split(",") if part.strip()]
    # Fewer entries than proxies: the request did not pass through all of them; its own hop is all we know.
    return chain[-proxies] if len(chain) >= proxies else remote


def _identity_digest(username: str) -> str:
    return hashlib.sha256(login_identity(username).encode()).hexdigest()


def _login_keys(username: str, address: str) -> list[tuple[str, int]]:
    """The counters one login attempt takes from, each with its limit in the window."""
    digest = _identity_digest(username)
    return [(f"login-attempts:{address}:{digest}", settings.LOGIN_RATE_LIMIT),
            (f"login-attempts:account:{digest}", settings.LOGIN_ACCOUNT_RATE_LIMIT)]


def _count(key: str, delta: int = 1) -> int:
    """Atomically add ``delta`` to the window's counter and return the new count (the window opens at the first).

    ``add`` creates the key only if absent and ``incr`` is atomic in the shared cache (Redis INCR), so every
    attempt of a burst gets its own number: none is lost and no two see the same count.
    """
    for _ in range(3):
        cache.add(key, 0, timeout=settings.LOGIN_RATE_WINDOW_SECONDS)
        try:
            return cache.incr(key, delta)
        except ValueError:  # the window closed between add and incr: open a new one
            continue
    return settings.LOGIN_RATE_LIMIT + 1  # the cache keeps dropping the key: refuse rather than let guesses in


def _uncount(key: str) -> None:
    with contextlib.suppress(ValueError):  # the window closed meanwhile; nothing to give back
        cache.decr(key)


def login_attempt_reserve(*, username: str, address: str) -> list[str] | None:
    """Count one attempt BEFORE the password is checked; the keys counted, or None when over a limit.

    Counting first is what makes the limit hold under a burst: with check-then-count, every request of a burst
    reads the count before any of them has added to it, and all of them get their password checked.
    """
    keys = _login_keys(username, address)
    over = False
    for key, limit in keys:
        over = _count(key) > limit or over
    if over:
        # A refused attempt checked nothing: it gives its count back, so the counters hold the attempts checked
        # (or being checked) and a flood from one address cannot push the account-wide count over for others.
        for key, _ in keys:
            _uncount(key)
        return None
    return [key for key, _ in keys]


def login_attempt_succeeded(*, keys: list[str]) -> None:
    """A successful sign-in gives its reservation back: the limits count failed attempts."""
    for key in keys:
        _uncount(key)


def _rate_limited_error() -> forms.ValidationError:
    minutes = max(1, settings.LOGIN_RATE_WINDOW_SECONDS // 60)
    return forms.ValidationError(
        f"Too many failed sign-in attempts for this account. Try again in {minutes} minutes.", code="rate_limited")


if TYPE_CHECKING:
    # The login form the mixin below is combined with, for its super() call (at run time it is a plain object).
    _LoginFormBase = AuthenticationForm
else:
    _LoginFormBase = object


class _RateLimited(_LoginFormBase):
    """Mixin for Django's login forms: an attempt is counted before the password is checked, and refused
    unchecked when its (normalised name, address) or its name from all addresses is over the limit."""

    def clean(self) -> dict:
        keys = login_attempt_reserve(username=self.data.get("username", ""), address=client_address(self.request))
        if keys is None:
            raise _rate_limited_error()
        cleaned = super().clean()
        login_attempt_succeeded(keys=keys)
        return cleaned


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
    """A new token for ``user``, made by ``user``; the caller shows ``key`` once.

    The token inherits how the current request signed in (``signin``): what is saved through it is disclosed
    exactly as what the making session saves.
    """
    if not getattr(user, "is_authenticated", False) or not user.is_active:
        raise ValueError("user: only an active, signed-in user makes their own token")
    name = (name or "").strip()
    if len(name) > 100:
        raise ValueError("name: at most 100 characters")
    key = secrets.token_urlsafe(32)
    with audit_actor(user):
        token = ApiToken.objects.create(
            user=user, name=name, prefix=key[:8], key_digest=token_digest(key), password_stamp=password_stamp(user),
            signin_method=signin_method_current() or SigninMethod.TOKEN, signin_issuer=signin_issuer_current(),
            expires_at=timezone.now() + timedelta(seconds=settings.API_TOKEN_TTL_SECONDS),
        )
    return NewToken(token=token, key=key)


def api_token_revoke(*, user: Any, token_id: int) -> bool:
    """Delete one of ``user``'s own tokens; False if it is not theirs (or gone)."""
    token = ApiToken.objects.filter(user=user, pk=token_id).first()
    if token is None:
        return False
    with audit_actor(user):
        token.delete()
    return True


def api_tokens_revoke_all(*, user: Any) -> int:
    """Delete every token of ``user``, one by one so that each deletion reaches the account audit log (under the
    actor the caller set with ``audit_actor``); how many there were."""
    tokens = 0
    for token in ApiToken.objects.filter(user=user):
        token.delete()
        tokens += 1
    return tokens


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
        # Checked before the lookup and counted after a failure only: a token is 256 random bits, so a burst of
        # guesses slipping past the check gains nothing, while counting every use first would refuse a client
        # legitimately sending many requests at once. The failures themselves are counted atomically (none lost).
        if cache.get(failures, 0) >= settings.LOGIN_RATE_LIMIT:
            raise exceptions.AuthenticationFailed("Too many failed token attempts from your address; try later.")
        try:
            key = header[1].decode()
        except UnicodeError:
            key = ""

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
            _count(failures)
            raise exceptions.AuthenticationFailed(reason)
        assert token is not None  # no token is a reason above

        signin_method_set(token.signin_method, token.signin_issuer)
        return token.user, token

    def authenticate_header(self, request: Any) -> str:
        return TOKEN_KEYWORD

