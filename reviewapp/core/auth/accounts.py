"""Reviewer accounts as the admin role manages them: create, invite, deactivate, reactivate, revoke a token.

An admin never holds ``auth.*`` permissions: these services are the whole of what it may do to accounts, and
they only ever touch plain reviewer accounts (in the reviewer group and nothing else, not staff, not
superuser). Every change is recorded in the account audit log under the admin's name.
"""

from __future__ import annotations

import secrets
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from django.conf import settings
from django.contrib.auth import get_user_model
from django.contrib.auth.models import Group
from django.contrib.auth.password_validation import validate_password
from django.core.exceptions import ValidationError
from django.core.validators import validate_email
from django.db import models, transaction
from django.db.models import Q
from django.utils import timezone
from django.utils.encoding import force_bytes
from django.utils.http import urlsafe_base64_decode, urlsafe_base64_encode

from reviewapp.core.auth.audit import audit_actor, audit_record
from reviewapp.core.auth.credentials import token_digest
from reviewapp.core.auth.roles import MANAGE_REVIEWS, ensure_role_groups
from reviewapp.core.models import (
    AccountAudit,
    ApiToken,
    KeyboardShortcuts,
    PasswordOrigin,
    ReviewerInvitation,
    SigninMethod,
    UserPreference,
)


class AccountError(ValueError):
    """Bad input to an account service; the message names the field."""


@dataclass(frozen=True)
class NewAccount:
    user: Any
    password: str  # shown once to the admin, never stored in clear ("" when invited or typed by the admin)
    invitation: Any = None  # an ``Invitation`` when the reviewer sets their own password


def _require_manager(by: Any) -> None:
    if not (getattr(by, "is_authenticated", False) and by.is_active and by.has_perm(MANAGE_REVIEWS)):
        raise AccountError("only the admin role manages reviewer accounts")


def is_plain_reviewer(user: Any) -> bool:
    """In the reviewer group and no other, with no direct permission, not staff, not superuser."""
    return (not user.is_staff and not user.is_superuser and not user.user_permissions.exists()
            and list(user.groups.values_list("name", flat=True)) == ["reviewer"])


@transaction.atomic
def reviewer_account_create(*, username: str, by: Any, first_name: str = "", last_name: str = "", email: str = "",
                            password: str = "", invite: bool = False) -> NewAccount:
    """A new account in the reviewer role only.

    Its first password is, by choice: one the admin typed (``password``), a random one the admin passes on
    once (neither given), or none at all (``invite``): then the reviewer sets their own through an invitation
    link (``NewAccount.invitation``), so no one else ever knows it.
    """
    _require_manager(by)
    User = get_user_model()
    username = User.normalize_username((username or "").strip())
    if not username:
        raise AccountError("username: required")
    field = User._meta.get_field(User.USERNAME_FIELD)
    assert isinstance(field, models.Field)  # a column, not a relation
    try:
        field.run_validators(username)
    except ValidationError as error:
        raise AccountError(f"username: {' '.join(error.messages)}") from None
    if field.max_length is not None and len(username) > field.max_length:
        raise AccountError(f"username: at most {field.max_length} characters")
    if User._default_manager.filter(**{f"{User.USERNAME_FIELD}__iexact": username}).exists():
        raise AccountError(f"username: {username!r} is taken")
    for name, value in (("first_name", first_name), ("last_name", last_name)):
        if len(value or "") > 150:
            raise AccountError(f"{name}: at most 150 characters")
    email = _clean_email(email)
    if invite and password:
        raise AccountError("password: leave it empty when sending an invitation (the reviewer sets their own)")
    ensure_role_groups()
    user = User(**{User.USERNAME_FIELD: username}, first_name=(first_name or "").strip(),
                last_name=(last_name or "").strip(), email=email)
    chosen = "" if invite else (password or secrets.token_urlsafe(12))
    if invite:
        user.set_unusable_password()
    else:
        try:
            validate_password(chosen, user)
        except ValidationError as error:
            raise AccountError("password: " + " ".join(error.messages)) from None
        user.set_password(chosen)
    with audit_actor(by):
        user.save()
        user.groups.add(Group.objects.get(name="reviewer"))
    invitation = reviewer_invitation_make(user=user, by=by) if invite else None
    # A password the admin typed is theirs already: it is not shown back.
    return NewAccount(user=user, password="" if password else chosen, invitation=invitation)


def _clean_email(email: str) -> str:
    email = (email or "").strip()
    if not email:
        return ""
    if len(email) > 254:
        raise AccountError("email: at most 254 characters")
    try:
        validate_email(email)
    except ValidationError:
        raise AccountError(f"email: {email!r} is not an email address") from None
    return email


@dataclass(frozen=True)
class Invitation:
    """A link that lets one reviewer set their own password, once; shown to the admin once, stored as a digest."""

    uidb64: str
    token: str
    expires_in_days: float


def _password_chosen_by_owner(user: Any) -> bool:
    if not user.has_usable_password():
        return False
    origin = PasswordOrigin.objects.filter(user=user).values_list("origin", flat=True).first()
    # No row: set by the account itself or the operator's tools, never by the admin role.
    return origin in (None, SigninMethod.PASSWORD, SigninMethod.INVITATION, SigninMethod.SSO)


def _invitations_end(*, user: Any, reason: str) -> int:
    """End every live invitation of ``user`` (revoked, with the reason); the number ended."""
    return ReviewerInvitation.objects.filter(user=user, used_at__isnull=True, revoked_at__isnull=True).update(
        revoked_at=timezone.now(), revoked_reason=reason[:200])


@transaction.atomic
def reviewer_invitation_make(*, user: Any, by: Any) -> Invitation:
    """A set-password link for a plain reviewer account that nobody has used yet; recorded in the audit log
    (never the link itself). Ends the reviewer's earlier links.

    Refused once the account has signed in or holds a password its owner chose: whoever holds the link would
    otherwise take the account over (the reviewer changes their own password on /accounts/password/).
    """


    _require_manager(by)
    if not is_plain_reviewer(user):
        raise AccountError(f"user: {user.get_username()!r} is not a plain reviewer account")
    user.refresh_from_db(fields=["is_active", "last_login", "password"])  # decide on the stored state
    if not user.is_active:
        raise AccountError(f"user: {user.get_username()!r} is deactivated; reactivate it first")
    if user.last_login is not None:
        raise AccountError(f"user: {user.get_username()!r} has signed in already; an invitation would let whoever "
                           "holds the link take the account over (the reviewer changes their own password)")
    if _password_chosen_by_owner(user):
        raise AccountError(f"user: {user.get_username()!r} has a password its owner chose; an invitation would "
                           "replace it (the reviewer changes their own password)")
    _invitations_end(user=user, reason="a later invitation was made")
    seconds = settings.INVITATION_TTL_SECONDS
    key = secrets.token_urlsafe(32)
    ReviewerInvitation.objects.create(user=user, key_digest=token_digest(key), created_by_id=by.pk,
                                      created_by=by.get_username(),
                                      expires_at=timezone.now() + timedelta(seconds=seconds))
    days = seconds / 86400
    with audit_actor(by):
        audit_record(action="user.invitation", target_type="user", target_id=user.pk, target=user.get_username(),
                     detail={"expires_in_days": round(days, 2)})
    return Invitation(uidb64=urlsafe_base64_encode(force_bytes(user.pk)), token=key, expires_in_days=days)


@transaction.atomic
def reviewer_invitation_revoke(*, user: Any, by: Any) -> int:
    """The admin's "Revoke": end every live invitation link of a reviewer; the number ended."""
    _require_manager(by)
    if not is_plain_reviewer(user):
        raise AccountError(f"user: {user.get_username()!r} is not a plain reviewer account")
    ended = _invitations_end(user=user, reason=f"revoked by {by.get_username()}")
    if ended:
        with audit_actor(by):
            audit_record(action="user.invitation.revoke", target_type="user", target_id=user.pk,
                         target=user.get_username(), detail={"links": ended})
    return ended


def reviewer_invitations_live(*, user: Any) -> int:
    """How many of the reviewer's invitation links still work (for the admin's "Revoke")."""
    return ReviewerInvitation.objects.filter(user=user, used_at__isnull=True, revoked_at__isnull=True,
                                             expires_at__gt=timezone.now()).count()


def invitation_find(*, uidb64: str, token: str) -> Any:
    """The live invitation a link names, or None: unknown, used, revoked, expired, or the account signed in or
    has a password its owner chose meanwhile."""
    try:
        user_id = int(urlsafe_base64_decode(uidb64).decode())
    except (ValueError, UnicodeDecodeError):
        return None
    invitation = ReviewerInvitation.objects.select_related("user").filter(
        key_digest=token_digest(token), user_id=user_id, used_at__isnull=True, revoked_at__isnull=True,
        expires_at__gt=timezone.now()).first()
    if invitation is None:
        return None
    user = invitation.user
    if not user.is_active or user.last_login is not None or _password_chosen_by_owner(user):
        return None
    return invitation


def reviewer_invitation_accept(*, invitation: Any, password: str) -> Any:
    """Set the password through a live invitation, once. Recorded with the admin who issued the link as the
    actor (whoever held the link may have chosen it), and its sign-ins are disclosed as ``invitation``."""
    User = get_user_model()
    with transaction.atomic():
        claimed = ReviewerInvitation.objects.filter(
            pk=invitation.pk, used_at__isnull=True, revoked_at__isnull=True, expires_at__gt=timezone.now(),
        ).update(used_at=timezone.now())
        if not claimed:
            raise AccountError("invitation: this link is no longer valid")
        user = User._default_manager.select_for_update().get(pk=invitation.user_id)
        if not user.is_active or user.last_login is not None or _password_chosen_by_owner(user):
            raise AccountError("invitation: this link is no longer valid")
        issuer = User._default_manager.filter(pk=invitation.created_by_id).first()
        user.set_password(password)
        with audit_actor(issuer):
            user.save(update_fields=["password"])
        PasswordOrigin.objects.update_or_create(
            user=user, defaults={"origin": SigninMethod.INVITATION, "set_by_id": invitation.created_by_id})
    return user


@transaction.atomic
def reviewer_token_revoke(*, user: Any, token_id: int, by: Any) -> bool:
    """Revoke one API token of a plain reviewer account (e.g. a lost laptop); False if it is not theirs.

    An admin revokes a reviewer's token but never makes one for them: whoever holds a reviewer's token can
    save judgments in their name, and a reviewer's labels are theirs alone (tokens are made on /accounts/tokens/).
    """
    _require_manager(by)
    if not is_plain_reviewer(user):
        raise AccountError(f"user: {user.get_username()!r} is not a plain reviewer account")
    token = ApiToken.objects.filter(user=user, pk=token_id).first()
    if token is None:
        return False
    with audit_actor(by):
        token.delete()
    return True


@dataclass(frozen=True)
class TokenSummary:
    """One of a reviewer's API tokens as the admin's page lists it: never the key, nor its digest."""

    pk: int
    prefix: str
    name: str
    created_at: datetime
    expires_at: datetime


def reviewer_tokens(*, user: Any) -> list[TokenSummary]:
    """The account's API tokens, newest first."""
    return [
        TokenSummary(pk=pk, prefix=prefix, name=name, created_at=created_at, expires_at=expires_at)
        for pk, prefix, name, created_at, expires_at in ApiToken.objects.filter(user=user)
        .order_by("-created_at", "-id")
        .values_list("pk", "prefix", "name", "created_at", "expires_at")
    ]


@dataclass(frozen=True)
class AuditEntry:
    created_at: datetime
    actor: str
    action: str
    detail: dict[str, Any]


def reviewer_audit(*, user: Any, limit: int = 100) -> list[AuditEntry]:
    """The latest changes to the account and to its tokens, newest first. A token's entry names it
    ``"<prefix>… of <username>"``, or ``"… of user #<id>"`` once the account had no name to give."""
    entries = AccountAudit.objects.filter(
        Q(target_type="user", target_id=str(user.pk))
        | Q(target_type="token", target__endswith=f" of {user.get_username()}")
        | Q(target_type="token", target__endswith=f" of user #{user.pk}")
    ).order_by("-id")[:limit]
    return [
        AuditEntry(created_at=created_at, actor=actor, action=action, detail=dict(detail or {}))
        for created_at, actor, action, detail in entries.values_list("created_at", "actor", "action", "detail")
    ]


@transaction.atomic
def reviewer_account_set_active(*, user: Any, active: bool, by: Any) -> Any:
    """Deactivate (cannot sign in, cannot be assigned; judgments stay) or reactivate a reviewer account."""
    _require_manager(by)
    if not is_plain_reviewer(user):
        raise AccountError(f"user: {user.get_username()!r} is not a plain reviewer account; only a superuser "
                           "changes other accounts (Django admin)")
    if user.is_active != active:
        user.is_active = active
        with audit_actor(by):
            user.save(update_fields=["is_active"])
        # A link made before a deactivation must not outlive it (nor come back with a reactivation).
        _invitations_end(user=user, reason="the account was deactivated" if not active else
                         "the account was reactivated")
    return user


def user_shortcuts_get(*, user: Any) -> str:
    """The user's keyboard-shortcut setting (``single``, ``modifier`` or ``off``); ``single`` when never set."""
    if not getattr(user, "is_authenticated", False):
        return KeyboardShortcuts.SINGLE
    found = UserPreference.objects.filter(user=user).values_list("shortcuts", flat=True).first()
    return found or KeyboardShortcuts.SINGLE


def user_shortcuts_set(*, user: Any, shortcuts: str) -> str:
    """Remember the user's own keyboard-shortcut setting; refuses a value that is not one of the choices."""
    if shortcuts not in KeyboardShortcuts.values:
        raise AccountError(f"shortcuts: choose one of {', '.join(KeyboardShortcuts.values)}")
    UserPreference.objects.update_or_create(user=user, defaults={"shortcuts": shortcuts})
    return shortcuts
