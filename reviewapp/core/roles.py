"""Keeps the admin group's Django-admin permissions in step with the models.

The admin role uses the Django admin without being a superuser (a superuser
would also hold the reviewer's grading permission). After every migrate it is
granted the model permissions of the product's apps and of users and groups.
"""

from __future__ import annotations

from typing import Any


def grant_admin_model_permissions(sender: Any = None, **kwargs: Any) -> None:
    from django.contrib.auth.models import Group, Permission

    group = Group.objects.filter(name="admin").first()
    if group is None:
        return
    from reviewapp.core.hooks import product_data_apps

    labels = [config.label for config in product_data_apps()] + ["auth", "authtoken"]
    perms = Permission.objects.filter(content_type__app_label__in=labels).exclude(
        codename="grade_passages"
    )
    group.permissions.add(*perms)


def ensure_role_groups() -> None:
    """Create the three role groups with their permissions if a flush removed them."""
    from django.contrib.auth.models import Group, Permission
    from django.contrib.contenttypes.models import ContentType

    from reviewapp.core.access import ROLE_PERMISSIONS
    from reviewapp.core.models import Access

    content_type = ContentType.objects.get_for_model(Access, for_concrete_model=False)
    for codename, name in Access._meta.permissions:
        Permission.objects.get_or_create(content_type=content_type, codename=codename, defaults={"name": name})
    for role, codenames in ROLE_PERMISSIONS.items():
        group, _ = Group.objects.get_or_create(name=role)
        group.permissions.add(*Permission.objects.filter(content_type=content_type, codename__in=codenames))
    grant_admin_model_permissions()
