"""Who wants which emails, and the log of every notice decided (one row a notice: the guard against sending twice).

A notice's ``key`` names what it is about (a pool and a high-water mark, or a pool and a period); the unique
(user, kind, key) constraint means two senders running at once (a duplicated beat, a command beside the worker)
decide the same notice once: the one whose row is inserted sends, the other skips.
"""

from __future__ import annotations

from django.conf import settings
from django.db import models


class NotificationKind(models.TextChoices):
    ASSIGNMENT = "assignment", "New items assigned to me"
    REMINDER = "reminder", "A reminder when my items wait for days"
    ADJUDICATION = "adjudication", "Disagreements waiting for adjudication (admins)"


class NotificationPreference(models.Model):
    """A user's choices; a user without a row gets every kind that applies to them (all on by default)."""

    user = models.OneToOneField(settings.AUTH_USER_MODEL, on_delete=models.CASCADE,
                                related_name="notification_preference")
    assignment = models.BooleanField(default=True)
    reminder = models.BooleanField(default=True)
    adjudication = models.BooleanField(default=True)
    updated_at = models.DateTimeField(auto_now=True)

    def __str__(self) -> str:
        return f"notifications of {self.user_id}"

    def wants(self, kind: str) -> bool:
        return bool(getattr(self, kind))


class Notice(models.Model):
    """One notice decided for one user: sent, or failed with the mail server's words (never retried by itself)."""

    class Status(models.TextChoices):
        SENT = "sent"
        FAILED = "failed"

    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="notices")
    kind = models.CharField(max_length=16, choices=NotificationKind.choices)
    key = models.CharField(max_length=200)
    # The highest assignment id an assignment notice covered (the next one counts from there).
    upto = models.BigIntegerField(default=0)
    subject = models.CharField(max_length=200)
    status = models.CharField(max_length=8, choices=Status.choices, default=Status.SENT)
    error = models.TextField(blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["-created_at", "-id"]
        constraints = [models.UniqueConstraint(fields=["user", "kind", "key"], name="notice_unique_key")]
        indexes = [models.Index(fields=["user", "kind", "created_at"])]

    def __str__(self) -> str:
        return f"{self.kind} to {self.user_id}: {self.key}"
