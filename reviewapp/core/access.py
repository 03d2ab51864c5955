"""Roles and what each may do.

Three roles are Django groups carrying custom permissions (declared on
``reviewapp.review.models.Access``). Code checks permissions, never group names, so a
person may hold several roles.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import wraps
from typing import Any

from django.contrib.auth.mixins import LoginRequiredMixin
from django.core.exceptions import PermissionDenied
from django.http import HttpRequest, HttpResponse
from rest_framework.permissions import BasePermission

GRADE = "reviewapp.grade_passages"
VIEW_REPORTS = "reviewapp.view_reports"
LAUNCH_RUNS = "reviewapp.launch_runs"
MANAGE_REVIEWS = "reviewapp.manage_reviews"

ROLE_PERMISSIONS: dict[str, list[str]] = {
    "reviewer": ["grade_passages"],
    "stakeholder": ["view_reports"],
    "admin": ["view_reports", "launch_runs", "manage_reviews"],
}
ROLE_DESCRIPTIONS = {
    "reviewer": "grades passages blind",
    "stakeholder": "reads reports, calibration and scorecards",
    "admin": "launches runs, declares review pools, adjudicates",
}


def roles_of(user: Any) -> list[str]:
    if not getattr(user, "is_authenticated", False):
        return []
    return sorted(user.groups.values_list("name", flat=True))


def perm_required(perm: str) -> Callable:
    """Function-view decorator: anonymous -> login page, lacking the permission -> 403."""

    def decorator(view: Callable) -> Callable:
        @wraps(view)
        def wrapped(request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponse:
            if not request.user.is_authenticated:
                from django.contrib.auth.views import redirect_to_login

                return redirect_to_login(request.get_full_path())
            if not request.user.has_perm(perm):
                raise PermissionDenied
            return view(request, *args, **kwargs)

        return wrapped

    return decorator


class PermRequiredMixin(LoginRequiredMixin):
    """Class-view mixin: set ``permission_required`` to one permission string."""

    permission_required: str = ""

    def dispatch(self, request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponse:
        if not request.user.is_authenticated:
            return self.handle_no_permission()
        if self.permission_required and not request.user.has_perm(self.permission_required):
            raise PermissionDenied
        return super().dispatch(request, *args, **kwargs)


class _HasPerm(BasePermission):
    perm = ""

    def has_permission(self, request, view) -> bool:
        user = request.user
        return bool(user and user.is_authenticated and user.has_perm(self.perm))


class CanGrade(_HasPerm):
    perm = GRADE


class CanViewReports(_HasPerm):
    perm = VIEW_REPORTS


class CanLaunchRuns(_HasPerm):
    perm = LAUNCH_RUNS


class CanManageReviews(_HasPerm):
    perm = MANAGE_REVIEWS


def role_context(request: HttpRequest) -> dict[str, Any]:
    """Template context: what the navigation may show to this user."""
    user = getattr(request, "user", None)
    if user is None or not user.is_authenticated:
        return {"can": {}}
    return {
        "can": {
            "grade": user.has_perm(GRADE),
            "view_reports": user.has_perm(VIEW_REPORTS),
            "launch_runs": user.has_perm(LAUNCH_RUNS),
            "manage_reviews": user.has_perm(MANAGE_REVIEWS),
            "admin_site": user.is_staff,
        }
    }


# Keeping the admin group's Django-admin permissions in step with the models (after every migrate).

def grant_admin_model_permissions(sender: Any = None, **kwargs: Any) -> None:
    from django.contrib.auth.models import Group, Permission

    group = Group.objects.filter(name="admin").first()
    if group is None:
        return
    from reviewapp.core.apps import product_data_apps

    labels = [config.label for config in product_data_apps()] + ["auth", "authtoken"]
    perms = Permission.objects.filter(content_type__app_label__in=labels).exclude(
        codename="grade_passages"
    )
    group.permissions.add(*perms)


def ensure_role_groups() -> None:
    """Create the three role groups with their permissions if a flush removed them."""
    from django.contrib.auth.models import Group, Permission
    from django.contrib.contenttypes.models import ContentType

    from reviewapp.core.models import Access

    content_type = ContentType.objects.get_for_model(Access, for_concrete_model=False)
    for codename, name in Access._meta.permissions:
        Permission.objects.get_or_create(content_type=content_type, codename=codename, defaults={"name": name})
    for role, codenames in ROLE_PERMISSIONS.items():
        group, _ = Group.objects.get_or_create(name=role)
        group.permissions.add(*Permission.objects.filter(content_type=content_type, codename__in=codenames))
    grant_admin_model_permissions()
