"""Factories shared by every test: named users per role and logged-in clients."""

from __future__ import annotations

from typing import Any

from django.contrib.auth.hashers import PBKDF2PasswordHasher


class OneRoundPBKDF2PasswordHasher(PBKDF2PasswordHasher):
    """Django's default algorithm (``pbkdf2_sha256$``) at one round instead of a million.

    A million rounds cost about half a second of CPU per password set or checked, and most tests make users or
    sign in. The round count is stored in each hash, so a process on the project's own settings (a worker,
    gunicorn) still verifies these passwords.
    """

    iterations = 1



def make_user(django_user_model: Any, username: str, role: str, *, staff: bool = False) -> Any:
    """A user in one role group, with the password ``pw-<username>``."""
    from django.contrib.auth.models import Group

    from reviewapp.core.auth.roles import ensure_role_groups

    ensure_role_groups()
    user = django_user_model.objects.create_user(username=username, password="pw-" + username, is_staff=staff)
    user.groups.add(Group.objects.get(name=role))
    return user


def client_for(user: Any) -> Any:
    """A Django test client logged in as ``user``."""
    from django.test import Client

    client = Client()
    client.force_login(user)
    return client
