"""How the person behind a request signed in: disclosed on every judgment revision they save.

Stored on the session at sign-in (``user_logged_in``) from the origin of the account's password
(``PasswordOrigin``), or ``token`` for an API token request. The middleware exposes it for the duration of the
request; ``JudgmentRevision`` reads it when a revision is inserted. Outside a request (commands, the demo, a
shell) it is "" (not through a sign-in). A single sign-on backend marks the user it signs in with
``signin_method_override`` (``oidc``) and ``signin_issuer`` (the IdP's issuer URL), kept on the session too.
"""

from __future__ import annotations

import contextvars
from collections.abc import Callable
from typing import Any

from django.http import HttpRequest, HttpResponse

from reviewapp.core.models import PasswordOrigin, SigninMethod

SESSION_KEY = "signin_method"
ISSUER_SESSION_KEY = "signin_issuer"

# Either (method, issuer) itself, or a reader of the request's session (read only when a revision is saved).
_current: contextvars.ContextVar[tuple[str, str] | Callable[[], tuple[str, str]]] = contextvars.ContextVar(
    "signin_method", default=("", ""))


def _signin_current() -> tuple[str, str]:
    value = _current.get()
    return value() if callable(value) else value


def signin_method_current() -> str:
    return _signin_current()[0]


def signin_issuer_current() -> str:
    """The identity provider that vouched for the current sign-in ("" for passwords, tokens, commands)."""
    return _signin_current()[1]


def signin_method_set(method: str, issuer: str = "") -> None:
    """For authentication classes that sign a request in without a session (API tokens)."""
    _current.set((method, issuer))


def signin_method_of(user: Any) -> str:
    """The method a password sign-in of ``user`` counts as now: the origin of the current password."""
    origin = PasswordOrigin.objects.filter(user_id=user.pk).values_list("origin", flat=True).first()
    return origin or SigninMethod.PASSWORD


def record_signin(sender: Any, request: HttpRequest | None, user: Any, **kwargs: Any) -> None:
    """``user_logged_in`` receiver."""
    if request is not None and hasattr(request, "session"):
        request.session[SESSION_KEY] = getattr(user, "signin_method_override", "") or signin_method_of(user)
        request.session[ISSUER_SESSION_KEY] = getattr(user, "signin_issuer", "")


class SigninMethodMiddleware:
    """After the session middleware: makes the session's sign-in method readable while the request runs."""

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        session = getattr(request, "session", None)
        token = _current.set(
            (lambda: (session.get(SESSION_KEY, ""), session.get(ISSUER_SESSION_KEY, ""))) if session is not None
            else ("", ""))
        try:
            return self.get_response(request)
        finally:
            _current.reset(token)
