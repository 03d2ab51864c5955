"""Roles and what each may do.

The roles are Django groups carrying custom permissions (declared on
``reviewapp.core.models.Access``). Code checks permissions, never group names, so a
person may hold several roles, except that an account which can see model output never
grades (``grading_refusal``). Users, groups and tokens are for superusers only.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import wraps
from typing import Any

from django.apps import apps
from django.contrib.auth.backends import ModelBackend
from django.contrib.auth.models import Group, Permission
from django.contrib.auth.views import redirect_to_login
from django.contrib.contenttypes.models import ContentType
from django.core.exceptions import PermissionDenied
from django.db.models import Q
from django.http import HttpRequest, HttpResponse
from rest_framework.permissions import BasePermission

from reviewapp.core.models import Access

GRADE = "reviewapp.grade_passages"
VIEW_REPORTS = "reviewapp.view_reports"
LAUNCH_RUNS = "reviewapp.launch_runs"
MANAGE_REVIEWS = "reviewapp.manage_reviews"
SYNTHETIC = "reviewapp.generate_synthetic_labels"

# The permissions that show model output (ranks, scores, proposed grades, reports). Whoever holds one of
# them has seen what the blind review is meant to check, so may never grade.
MODEL_OUTPUT_PERMISSIONS = (VIEW_REPORTS, LAUNCH_RUNS, MANAGE_REVIEWS)

ROLE_PERMISSIONS: dict[str, list[str]] = {
    "reviewer": ["grade_passages"],
    "stakeholder": ["view_reports"],
    "admin": ["view_reports", "launch_runs", "manage_reviews"],
    "synthetic": ["generate_synthetic_labels"],
}
ROLE_DESCRIPTIONS = {
    "reviewer": "grades passages blind",
    "stakeholder": "reads reports, calibration and scorecards",
    "admin": "launches runs, declares review pools, manages reviewers, adjudicates",
    "synthetic": "demo account that generates synthetic labels (not a person; never assignable to real review)",
}
# The apps whose tables say who may do what or who someone is (Django's users and groups, tokens, the links from
# an identity provider's subjects to accounts and the sessions): superusers only, never a role group.
ACCOUNT_APP_LABELS = ("auth", "authtoken", "sso")


def sees_model_output(user: Any) -> bool:
    """True for anyone who can read model output: superusers, staff, admins and stakeholders."""
    if not getattr(user, "is_authenticated", False):
        return False
    if user.is_superuser or user.is_staff:
        return True
    return any(user.has_perm(perm) for perm in MODEL_OUTPUT_PERMISSIONS)


def is_synthetic_account(user: Any) -> bool:
    """A demo account that generates labels: not a person, never a reviewer of a real pool."""
    return bool(getattr(user, "is_authenticated", False)) and not sees_model_output(user) and \
        user.has_perm(SYNTHETIC)


# The review engine registers how many blind-review assignments a user holds (core cannot import it), so that
# a role change that would let an assignee see model output can be refused.
_ASSIGNMENT_COUNTERS: list[Callable[[Any], int]] = []


def register_assignment_counter(counter: Callable[[Any], int]) -> None:
    if counter not in _ASSIGNMENT_COUNTERS:
        _ASSIGNMENT_COUNTERS.append(counter)


def open_review_assignments(user: Any) -> int:
    return sum(counter(user) for counter in _ASSIGNMENT_COUNTERS)


def grading_refusal(user: Any) -> str | None:
    """Why ``user`` may not hold a reviewer assignment of a real pool, or None if they may."""
    name = user.get_username() if hasattr(user, "get_username") else str(user)
    if not getattr(user, "is_active", False):
        return f"reviewer {name!r} is deactivated"
    if sees_model_output(user):
        return (f"reviewer {name!r} can see model output (admin, stakeholder, staff or superuser) and so may "
                "never hold a blind-review assignment; create a separate reviewer account")
    if is_synthetic_account(user):
        return f"reviewer {name!r} is a synthetic demo account, not a person; it only grades synthetic demo pools"
    if not user.has_perm(GRADE):
        return f"reviewer {name!r} does not hold the reviewer role"
    return None


class RolePermissionBackend(ModelBackend):
    """Django's model backend, reading a user's own and role permissions in one query instead of two.

    Every reviewer page checks a permission, so a queue opened by many reviewers at once pays this
    look-up per request. The set is kept on the user object for the request, as Django does; it is
    never kept longer, so a role taken away applies from the next request.
    """
    def get_all_permissions(self, user_obj: Any, obj: Any = None) -> set[str]:
        if not user_obj.is_active or user_obj.is_anonymous or obj is not None:
            return set()
        if not hasattr(user_obj, "_perm_cache"):
            if user_obj.is_superuser:
                perms = Permission.objects.all()
            else:
                perms = Permission.objects.filter(Q(user=user_obj) | Q(group__user=user_obj))
            pairs = perms.order_by().values_list("content_type__app_label", "codename").distinct()
            user_obj._perm_cache = {f"{app_label}.{codename}" for app_label, codename in pairs}
        return user_obj._perm_cache


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
                return redirect_to_login(request.get_full_path())
            if not request.user.has_perm(perm):
                raise PermissionDenied
            return view(request, *args, **kwargs)

        return wrapped

    return decorator


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
            "audit_log": user.is_superuser,
        }
    }


# Keeping the admin group's Django-admin permissions in step with the models (after every migrate).

def grant_admin_model_permissions(sender: Any = None, **kwargs: Any) -> None:
    """The admin group administers the product's data, never accounts, groups or tokens.

    Users, groups and tokens are a superuser's alone (an admin holding them could mint a reviewer's token or
    make itself a reviewer), so any such permission a group holds from before is taken away here, on every
    migrate, from every role group.
    """
    for role_group in Group.objects.filter(name__in=ROLE_PERMISSIONS):
        held = list(role_group.permissions.filter(content_type__app_label__in=ACCOUNT_APP_LABELS))
        if held:
            role_group.permissions.remove(*held)
    group = Group.objects.filter(name="admin").first()
    if group is None:
        return

    # The apps that declare ``product_data`` (as ``core.apps.product_data_apps`` reads them): read here from the
    # registry, since core.apps imports this module to run it after migrate.
    labels = [config.label for config in apps.get_app_configs()
              if getattr(config, "product_data", False) and config.label not in ACCOUNT_APP_LABELS]
    perms = Permission.objects.filter(content_type__app_label__in=labels).exclude(
        codename__in=["grade_passages", "generate_synthetic_labels"]
    )
    group.permissions.add(*perms)


def ensure_role_groups() -> None:
    """Create the role groups with their permissions if a flush removed them; strip account permissions."""
    content_type = ContentType.objects.get_for_model(Access, for_concrete_model=False)
    for codename, name in Access._meta.permissions:
        Permission.objects.get_or_create(content_type=content_type, codename=codename, defaults={"name": name})
    for role, codenames in ROLE_PERMISSIONS.items():
        group, _ = Group.objects.get_or_create(name=role)
        group.permissions.add(*Permission.objects.filter(content_type=content_type, codename__in=codenames))
    grant_admin_model_permissions()
