"""Factories shared by every test: named users per role and logged-in clients."""

from __future__ import annotations

from typing import Any


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
