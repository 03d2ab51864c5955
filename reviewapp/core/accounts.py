"""Reviewer accounts as the admin role manages them: create, deactivate, reactivate. Nothing else.

An admin never holds ``auth.*`` permissions: these services are the whole of what it may do to accounts, and
they only ever touch plain reviewer accounts (in the reviewer group and nothing else, not staff, not
superuser). Every change is recorded in the account audit log under the admin's name.
"""

from __future__ import annotations

import secrets
from dataclasses import dataclass
from typing import Any

from django.contrib.auth import get_user_model
from django.contrib.auth.models import Group
from django.contrib.auth.password_validation import validate_password
from django.core.exceptions import ValidationError
from django.db import transaction

from reviewapp.core.access import MANAGE_REVIEWS, ensure_role_groups
from reviewapp.core.audit import audit_actor


class AccountError(ValueError):
    """Bad input to an account service; the message names the field."""


@dataclass(frozen=True)
class NewAccount:
    user: Any
    password: str  # shown once to the admin, never stored in clear


def _require_manager(by: Any) -> None:
    if not (getattr(by, "is_authenticated", False) and by.is_active and by.has_perm(MANAGE_REVIEWS)):
        raise AccountError("only the admin role manages reviewer accounts")


def is_plain_reviewer(user: Any) -> bool:
    """In the reviewer group and no other, with no direct permission, not staff, not superuser."""
    return (not user.is_staff and not user.is_superuser and not user.user_permissions.exists()
            and list(user.groups.values_list("name", flat=True)) == ["reviewer"])


@transaction.atomic
def reviewer_account_create(*, username: str, by: Any, first_name: str = "", last_name: str = "") -> NewAccount:
    """A new account in the reviewer role only, with a random password the admin passes on once."""
    _require_manager(by)
    User = get_user_model()
    username = User.normalize_username((username or "").strip())
    if not username:
        raise AccountError("username: required")
    field = User._meta.get_field(User.USERNAME_FIELD)
    try:
        field.run_validators(username)
    except ValidationError as error:
        raise AccountError(f"username: {' '.join(error.messages)}") from None
    if len(username) > field.max_length:
        raise AccountError(f"username: at most {field.max_length} characters")
    if User._default_manager.filter(**{f"{User.USERNAME_FIELD}__iexact": username}).exists():
        raise AccountError(f"username: {username!r} is taken")
    for name, value in (("first_name", first_name), ("last_name", last_name)):
        if len(value or "") > 150:
            raise AccountError(f"{name}: at most 150 characters")
    ensure_role_groups()
    password = secrets.token_urlsafe(12)
    user = User(**{User.USERNAME_FIELD: username}, first_name=(first_name or "").strip(),
                last_name=(last_name or "").strip())
    validate_password(password, user)
    user.set_password(password)
    with audit_actor(by):
        user.save()
        user.groups.add(Group.objects.get(name="reviewer"))
    return NewAccount(user=user, password=password)


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
    return user
