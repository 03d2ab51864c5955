"""Tables every part of the product shares: the role-permission holder, worker heartbeats, the account audit
log and hashed API tokens.

They keep the ``reviewapp`` app label (and so their table names and the content type that the
role permissions hang on) from before the project package was split into core and review.
"""

from __future__ import annotations

from typing import Any, ClassVar, NoReturn

from django.conf import settings
from django.db import models


class Access(models.Model):
    """Holder of the role permissions; groups in the data migration hold them."""

    class Meta:
        app_label = "reviewapp"
        managed = False
        default_permissions = ()
        permissions = [
            ("grade_passages", "Can grade passages blind"),
            ("view_reports", "Can read reports, calibration pages and scorecards"),
            ("launch_runs", "Can launch benchmark, extraction and audit runs"),
            ("manage_reviews", "Can declare review pools, assign and adjudicate"),
            ("generate_synthetic_labels", "Demo account that generates synthetic labels (not a person)"),
        ]

    def __str__(self) -> str:
        return "role permissions"


class WorkerHeartbeat(models.Model):
    """Written by the ``worker_ping`` task: proof that a worker consumed the queue."""

    token = models.CharField(max_length=64, unique=True)
    hostname = models.CharField(max_length=255, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        app_label = "reviewapp"

    def __str__(self) -> str:
        return f"{self.token} by {self.hostname}"


class AppendOnlyError(RuntimeError):
    pass


class AppendOnlyQuerySet(models.QuerySet):
    def update(self, **kwargs: Any) -> NoReturn:
        raise AppendOnlyError(f"{self.model.__name__} rows are append-only: they are never updated")

    def delete(self) -> NoReturn:
        raise AppendOnlyError(f"{self.model.__name__} rows are append-only: they are never deleted")


class AppendOnlyModel(models.Model):
    """A table whose rows are inserted once and never updated or deleted.

    The ORM refuses: ``save`` of a stored row, ``delete``, and the manager's ``update`` and ``delete``. The
    database refuses too, through the triggers each table's migration creates (reviewapp.core.records.append_only), and
    ``append_only_models()`` finds a table by its manager. A model says in its own words what to do instead
    (``append_only_updated``, ``append_only_deleted``: the messages of the two refusals).
    """

    append_only_updated: ClassVar[str] = "rows are append-only: they are never updated"
    append_only_deleted: ClassVar[str] = "rows are append-only: they are never deleted"

    objects = AppendOnlyQuerySet.as_manager()

    class Meta:
        abstract = True

    def save(self, *args: Any, **kwargs: Any) -> None:
        if not self._state.adding:
            raise AppendOnlyError(self.append_only_updated)
        super().save(*args, **kwargs)

    def delete(self, *args: Any, **kwargs: Any) -> NoReturn:
        raise AppendOnlyError(self.append_only_deleted)


class AccountAudit(AppendOnlyModel):
    """One change to who may do what: a user, group, permission or API token created, changed or deleted.

    Append-only: the ORM can insert rows, never update or delete them (``save`` of an existing row, ``delete``,
    ``QuerySet.update`` and ``QuerySet.delete`` all raise). The actor and target are kept as ids and names, not
    foreign keys, so deleting a user never rewrites (``SET_NULL``) or removes (``CASCADE``) its history.
    """

    created_at = models.DateTimeField(auto_now_add=True)
    actor_id = models.IntegerField(null=True, blank=True)
    actor = models.CharField(max_length=150, help_text="Username of whoever made the change, or how it was made.")
    action = models.CharField(max_length=64, help_text="e.g. user.create, user.groups.add, token.delete")
    target_type = models.CharField(max_length=32)
    target_id = models.CharField(max_length=64, blank=True)
    target = models.CharField(max_length=300)
    # Field names with before/after values; a password is recorded as changed, never as a value.
    detail = models.JSONField(default=dict, blank=True)

    append_only_updated = "AccountAudit rows are append-only: they are never updated"
    append_only_deleted = "AccountAudit rows are append-only: they are never deleted"

    class Meta:
        app_label = "reviewapp"
        ordering = ["-id"]
        verbose_name = "account audit entry"
        verbose_name_plural = "account audit log"

    def __str__(self) -> str:
        return f"{self.created_at:%Y-%m-%d %H:%M} {self.actor}: {self.action} {self.target}"


class ApiToken(models.Model):
    """An API token its owner made for themself: stored as a SHA-256 digest, shown once, expiring.

    ``password_stamp`` is a digest of the owner's session-auth hash (itself an HMAC of the password hash) at
    creation: after a password change it no longer matches and the token is dead.

    ``signin_method`` and ``signin_issuer`` are those of the session that made the token: a request signed in
    with the token counts as signed in that way, so a token made after signing in with credentials an admin
    once held never passes its judgments off as the reviewer's own. ``token`` for a token made outside a
    sign-in (a shell) or before the method was recorded.
    """

    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="api_tokens")
    signin_method = models.CharField(max_length=16, default="token")
    signin_issuer = models.CharField(max_length=255, blank=True, default="")
    name = models.CharField(max_length=100, blank=True)
    prefix = models.CharField(max_length=8, help_text="First characters of the token, to tell tokens apart.")
    key_digest = models.CharField(max_length=64, unique=True)
    password_stamp = models.CharField(max_length=64)
    created_at = models.DateTimeField(auto_now_add=True)
    expires_at = models.DateTimeField()

    class Meta:
        app_label = "reviewapp"
        ordering = ["-created_at", "-id"]
        verbose_name = "API token"

    def __str__(self) -> str:
        return f"{self.prefix}… ({self.user})"


class SigninMethod(models.TextChoices):
    """How the author of a saved judgment signed in for that session (``JudgmentRevision.signin_method``).

    ``invitation`` and ``admin_password`` are credentials an admin once held: a password chosen through a link
    an admin was given, or a password an admin typed or was shown. They are disclosed, never trusted as the
    reviewer's own.
    """

    PASSWORD = "password", "own password"
    INVITATION = "invitation", "password chosen through an admin-issued invitation link"
    ADMIN_PASSWORD = "admin_password", "password set by an admin"
    TOKEN = "token", "API token"
    SSO = "sso", "single sign-on"
    OIDC = "oidc", "the organisation's identity provider (OpenID Connect)"


ADMIN_HELD = (SigninMethod.INVITATION, SigninMethod.ADMIN_PASSWORD)


class PasswordOrigin(models.Model):
    """How an account's current password was chosen: by its owner, through an invitation link, or by an admin.

    Written whenever a password changes (``reviewapp.core.auth.audit``): by the account itself -> ``password``; by
    another signed-in account (an admin) -> ``admin_password``; the invitation service then marks its own
    ``invitation``. An account without a row has only ever had passwords set by itself or by the operator's
    own tools (a shell, ``createsuperuser``).
    """

    user = models.OneToOneField(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="password_origin")
    origin = models.CharField(max_length=16, choices=SigninMethod.choices)
    set_by_id = models.IntegerField(null=True, blank=True)
    set_at = models.DateTimeField(auto_now=True)

    class Meta:
        app_label = "reviewapp"

    def __str__(self) -> str:
        return f"password of user {self.user_id}: {self.origin}"


class ReviewerInvitation(models.Model):
    """One set-password link an admin made for a reviewer: single use, expiring, revocable.

    Only a digest of the link's key is stored. A later invitation, a deactivation or reactivation, or the
    admin's "Revoke" ends it (``revoked_at`` with the reason); using it sets ``used_at``.
    """

    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="invitations")
    key_digest = models.CharField(max_length=64, unique=True)
    created_by_id = models.IntegerField(null=True, blank=True)
    created_by = models.CharField(max_length=150)
    created_at = models.DateTimeField(auto_now_add=True)
    expires_at = models.DateTimeField()
    used_at = models.DateTimeField(null=True, blank=True)
    revoked_at = models.DateTimeField(null=True, blank=True)
    revoked_reason = models.CharField(max_length=200, blank=True)

    class Meta:
        app_label = "reviewapp"
        ordering = ["-id"]

    def __str__(self) -> str:
        return f"invitation {self.pk} for user {self.user_id}"


class KeyboardShortcuts(models.TextChoices):
    """How the review workspace's shortcuts are typed (WCAG 2.1.4: a single-key shortcut can be turned off)."""

    SINGLE = "single", "Single keys (1, 2, c, j ...)"
    MODIFIER = "modifier", "Only with Alt (Alt+1, Alt+c ...)"
    OFF = "off", "Off (buttons, links and Tab only)"


class UserPreference(models.Model):
    """A user's own settings that follow them from browser to browser; no row means the defaults."""

    user = models.OneToOneField(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="preference")
    shortcuts = models.CharField(max_length=16, choices=KeyboardShortcuts.choices, default=KeyboardShortcuts.SINGLE)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        app_label = "reviewapp"

    def __str__(self) -> str:
        return f"preferences of user {self.user_id}: shortcuts {self.shortcuts}"
