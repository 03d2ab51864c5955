"""The account audit log: every change to users, groups, permissions and API tokens, whoever made it.

Recorded from model signals, so every path (Django admin, the product's reviewer pages, management commands,
a shell) leaves a row. Who made the change comes from ``audit_actor``: the admin classes and the product's
account services set it around their writes; a change made outside them is recorded as made by "system".
Rows are append-only (``reviewapp.core.models.AccountAudit``).
"""

from __future__ import annotations

import contextvars
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from django.contrib.auth import get_user_model
from django.contrib.auth.models import Group, Permission
from django.db.models.signals import m2m_changed, post_delete, post_save, pre_save

from reviewapp.core.models import AccountAudit, ApiToken, PasswordOrigin, SigninMethod

_actor: contextvars.ContextVar[Any] = contextvars.ContextVar("audit_actor", default=None)
_suspended: contextvars.ContextVar[bool] = contextvars.ContextVar("audit_suspended", default=False)

# Fields of a user whose changes are recorded with their values; the password only as "changed".
USER_FIELDS = ("username", "first_name", "last_name", "email", "is_active", "is_staff", "is_superuser")


@contextmanager
def audit_actor(user: Any) -> Iterator[None]:
    """Attribute the account changes made inside this block to ``user``."""
    token = _actor.set(user)
    try:
        yield
    finally:
        _actor.reset(token)


@contextmanager
def audit_suspended() -> Iterator[None]:
    """Record nothing inside this block: for writes that are not anyone's change to accounts.

    Two such writes exist. A restore (``import_all``) puts back the rows of a backup, audit log included,
    so recording them again would double the log and collide with its ids. The role groups' permissions
    that every ``migrate`` sets are the same on every installation; recording them would make a freshly
    migrated database non-empty and refuse the restore a new machine is made for.
    """
    token = _suspended.set(True)
    try:
        yield
    finally:
        _suspended.reset(token)


def audit_record(*, action: str, target_type: str, target_id: Any, target: str, detail: dict | None = None) -> None:
    if _suspended.get():
        return

    actor = _actor.get()
    authenticated = actor is not None and getattr(actor, "is_authenticated", False)
    AccountAudit.objects.create(
        actor_id=actor.pk if authenticated else None,
        actor=actor.get_username() if authenticated else "system (no signed-in actor)",
        action=action,
        target_type=target_type,
        target_id="" if target_id is None else str(target_id),
        target=str(target)[:300],
        detail=detail or {},
    )


def _user_before(sender: Any, instance: Any, **kwargs: Any) -> None:
    old = sender._default_manager.filter(pk=instance.pk).first() if instance.pk else None
    instance._audit_before = old


def _user_saved(sender: Any, instance: Any, created: bool, update_fields: Any = None, **kwargs: Any) -> None:
    if update_fields is not None and set(update_fields) <= {"last_login"}:
        return  # every sign-in writes last_login; not a change to who may do what
    old = getattr(instance, "_audit_before", None)
    if (created or old is None or old.password != instance.password) and instance.has_usable_password():
        _password_origin_record(instance)
    if created or old is None:
        detail: dict[str, Any] = {field: getattr(instance, field) for field in USER_FIELDS}
        audit_record(action="user.create", target_type="user", target_id=instance.pk,
                     target=instance.get_username(), detail=detail)
        return
    detail = {
        field: {"before": getattr(old, field), "after": getattr(instance, field)}
        for field in USER_FIELDS if getattr(old, field) != getattr(instance, field)
    }
    if old.password != instance.password:
        detail["password"] = "changed"  # noqa: S105 (a fact, never the value)
    if detail:
        audit_record(action="user.change", target_type="user", target_id=instance.pk,
                     target=instance.get_username(), detail=detail)


def _password_origin_record(user: Any) -> None:
    """Who chose the password just saved: the account itself, or someone else (an admin) who therefore held it.

    The invitation service overwrites this with ``invitation`` after it saves (its actor is the issuing admin).
    A change with no signed-in actor (the operator's shell or commands) is not the admin role's: no row.
    """
    if _suspended.get():
        return
    actor = _actor.get()
    if actor is None or not getattr(actor, "is_authenticated", False):
        PasswordOrigin.objects.filter(user=user).delete()
        return
    origin = SigninMethod.PASSWORD if actor.pk == user.pk else SigninMethod.ADMIN_PASSWORD
    PasswordOrigin.objects.update_or_create(user=user, defaults={"origin": origin, "set_by_id": actor.pk})


def _user_deleted(sender: Any, instance: Any, **kwargs: Any) -> None:
    audit_record(action="user.delete", target_type="user", target_id=instance.pk, target=instance.get_username())


def _group_saved(sender: Any, instance: Group, created: bool, **kwargs: Any) -> None:
    audit_record(action="group.create" if created else "group.change", target_type="group", target_id=instance.pk,
                 target=instance.name)


def _group_deleted(sender: Any, instance: Group, **kwargs: Any) -> None:
    audit_record(action="group.delete", target_type="group", target_id=instance.pk, target=instance.name)


def _names(model: Any, pk_set: Any) -> list[str]:
    if not pk_set:
        return []
    if model is Permission:
        rows = Permission.objects.filter(pk__in=pk_set).select_related("content_type")
        return sorted(f"{p.content_type.app_label}.{p.codename}" for p in rows)
    if model is Group:
        return sorted(Group.objects.filter(pk__in=pk_set).values_list("name", flat=True))
    return sorted(str(obj) for obj in model._default_manager.filter(pk__in=pk_set))


def _m2m(relation: str):
    """Receiver for one many-to-many relation (user.groups, user.user_permissions, group.permissions)."""

    def receiver(sender: Any, instance: Any, action: str, reverse: bool, model: Any, pk_set: Any,
                 **kwargs: Any) -> None:
        if action == "pre_clear":
            # What a clear removes is only known before it happens.
            field = relation.split(".")[1] if not reverse else None
            if field is not None:
                instance._audit_cleared = list(getattr(instance, field).values_list("pk", flat=True))
            return
        if action not in ("post_add", "post_remove", "post_clear"):
            return
        verb = {"post_add": "add", "post_remove": "remove", "post_clear": "remove"}[action]
        if action == "post_clear":
            pk_set = getattr(instance, "_audit_cleared", None) or set()
        if not pk_set:
            return
        if reverse:
            # e.g. group.user_set.add(user): record it on each user (the relation is the same fact).
            owner_model = get_user_model() if relation.startswith("user.") else Group
            for owner in owner_model._default_manager.filter(pk__in=pk_set):
                _record_m2m(relation, verb, owner, _names(type(instance), {instance.pk}))
            return
        _record_m2m(relation, verb, instance, _names(model, pk_set))

    return receiver


def _record_m2m(relation: str, verb: str, owner: Any, names: list[str]) -> None:
    target_type = relation.split(".")[0]
    target = owner.get_username() if target_type == "user" else owner.name
    audit_record(action=f"{relation}.{verb}", target_type=target_type, target_id=owner.pk, target=target,
                 detail={verb: names})


def _token_saved(sender: Any, instance: Any, created: bool, **kwargs: Any) -> None:
    audit_record(action="token.create" if created else "token.change", target_type="token",
                 target_id=instance.pk, target=f"{instance.prefix}… of {instance.user.get_username()}",
                 detail={"expires_at": instance.expires_at.isoformat(), "name": instance.name})


def _token_deleted(sender: Any, instance: Any, **kwargs: Any) -> None:
    audit_record(action="token.delete", target_type="token", target_id=instance.pk,
                 target=f"{instance.prefix}… of user #{instance.user_id}")


_receivers: list = []


def connect_audit_signals() -> None:
    """Called once from ``CoreConfig.ready``."""
    User = get_user_model()
    uid = "reviewapp-account-audit"
    pre_save.connect(_user_before, sender=User, dispatch_uid=f"{uid}-user-pre")
    post_save.connect(_user_saved, sender=User, dispatch_uid=f"{uid}-user-save")
    post_delete.connect(_user_deleted, sender=User, dispatch_uid=f"{uid}-user-delete")
    post_save.connect(_group_saved, sender=Group, dispatch_uid=f"{uid}-group-save")
    post_delete.connect(_group_deleted, sender=Group, dispatch_uid=f"{uid}-group-delete")
    post_save.connect(_token_saved, sender=ApiToken, dispatch_uid=f"{uid}-token-save")
    post_delete.connect(_token_deleted, sender=ApiToken, dispatch_uid=f"{uid}-token-delete")
    for relation, through in (("user.groups", User.groups.through),
                              ("user.user_permissions", User.user_permissions.through),
                              ("group.permissions", Group.permissions.through)):
        receiver = _m2m(relation)
        _receivers.append(receiver)  # signals hold weak references
        m2m_changed.connect(receiver, sender=through, dispatch_uid=f"{uid}-{relation}")
