"""An account's browser sessions and API tokens as an admin sees them, and "sign out everywhere".

Sessions are recorded at sign-in (``user_logged_in``) on a side table with the session key, how the account
signed in, the client address and browser; "active" is what the session engine still holds (the database
session table by default: one query for all of an account's sessions). "Sign out everywhere" deletes every
session of the account (those recorded, and, with the database engine, any older one found by decoding the
live sessions) and every API token, in the account audit log under the admin's (or the account's own) name.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from importlib import import_module
from typing import Any

from django.conf import settings
from django.contrib.sessions.models import Session
from django.db import transaction
from django.http import HttpRequest
from django.utils import timezone

from reviewapp.core.auth.accounts import AccountError, is_plain_reviewer
from reviewapp.core.auth.audit import audit_actor, audit_record
from reviewapp.core.auth.credentials import api_tokens_revoke_all, client_address
from reviewapp.core.auth.roles import MANAGE_REVIEWS
from reviewapp.sso.models import UserSession

DB_ENGINES = ("django.contrib.sessions.backends.db", "django.contrib.sessions.backends.cached_db")


@dataclass(frozen=True)
class ActiveSession:
    id: int
    started_at: datetime
    expires_at: datetime | None
    signin_method: str
    signin_issuer: str
    address: str
    user_agent: str


@dataclass(frozen=True)
class SignedOut:
    sessions: int
    tokens: int


def _store() -> Any:
    return import_module(settings.SESSION_ENGINE).SessionStore


def user_session_record(sender: Any, request: HttpRequest | None, user: Any, **kwargs: Any) -> None:
    """``user_logged_in`` receiver (after core's, which put the sign-in method on the session)."""
    session = getattr(request, "session", None)
    if request is None or session is None:
        return
    if not session.session_key:
        session.save()
    UserSession.objects.update_or_create(session_key=session.session_key, defaults={
        "user_id": user.pk, "signin_method": session.get("signin_method", ""),
        "signin_issuer": session.get("signin_issuer", ""), "address": client_address(request)[:64],
        "user_agent": request.META.get("HTTP_USER_AGENT", "")[:200]})


def user_session_forget(sender: Any, request: HttpRequest | None, user: Any, **kwargs: Any) -> None:
    """``user_logged_out`` receiver: the session is being flushed."""
    key = getattr(getattr(request, "session", None), "session_key", None)
    if key:
        UserSession.objects.filter(session_key=key).delete()


def user_sessions_active(*, user: Any) -> list[ActiveSession]:
    """The account's sessions the session engine still holds, newest first."""
    rows = list(UserSession.objects.filter(user=user))
    expiry: dict[str, datetime | None] = {}
    if settings.SESSION_ENGINE in DB_ENGINES:
        expiry = dict(Session.objects.filter(session_key__in=[r.session_key for r in rows],
                                             expire_date__gt=timezone.now()).values_list("session_key", "expire_date"))
    else:
        store = _store()
        expiry = {r.session_key: None for r in rows if store().exists(r.session_key)}
    return [ActiveSession(id=r.pk, started_at=r.started_at, expires_at=expiry[r.session_key],
                          signin_method=r.signin_method, signin_issuer=r.signin_issuer, address=r.address,
                          user_agent=r.user_agent) for r in rows if r.session_key in expiry]


def _require_allowed(*, user: Any, by: Any) -> None:
    if getattr(by, "pk", None) == user.pk:
        return
    if not (getattr(by, "is_authenticated", False) and by.is_active and by.has_perm(MANAGE_REVIEWS)):
        raise AccountError("only the account itself or the admin role ends an account's sessions")
    if not is_plain_reviewer(user):
        raise AccountError(f"user: {user.get_username()!r} is not a plain reviewer account; only a superuser "
                           "changes other accounts")


def _untracked_session_keys(user: Any) -> list[str]:
    """Live sessions of the account with no row here (made before sessions were recorded): database engine only."""
    if settings.SESSION_ENGINE not in DB_ENGINES:
        return []

    tracked = set(UserSession.objects.filter(user=user).values_list("session_key", flat=True))
    found = []
    for session in Session.objects.filter(expire_date__gt=timezone.now()).iterator():
        if session.session_key not in tracked and session.get_decoded().get("_auth_user_id") == str(user.pk):
            found.append(session.session_key)
    return found


def user_session_end(*, user: Any, session_id: int, by: Any) -> bool:
    """End one of the account's sessions; False if it is not theirs (or gone)."""
    _require_allowed(user=user, by=by)
    row = UserSession.objects.filter(user=user, pk=session_id).first()
    if row is None:
        return False
    _store()(session_key=row.session_key).delete()
    row.delete()
    with audit_actor(by):
        audit_record(action="user.session.end", target_type="user", target_id=user.pk, target=user.get_username(),
                     detail={"session": session_id, "started_at": row.started_at.isoformat()})
    return True


def user_sign_out_everywhere(*, user: Any, by: Any) -> SignedOut:
    """End every session of the account and revoke every API token it made (a lost laptop, a leaving lawyer)."""
    _require_allowed(user=user, by=by)
    store = _store()
    keys = list(UserSession.objects.filter(user=user).values_list("session_key", flat=True))
    keys += _untracked_session_keys(user)
    for key in keys:
        store(session_key=key).delete()
    with transaction.atomic(), audit_actor(by):
        UserSession.objects.filter(user=user).delete()
        tokens = api_tokens_revoke_all(user=user)
        audit_record(action="user.sign_out_everywhere", target_type="user", target_id=user.pk,
                     target=user.get_username(), detail={"sessions": len(keys), "tokens": tokens})
    return SignedOut(sessions=len(keys), tokens=tokens)
