"""Django admin for accounts: users, groups and API tokens are a superuser's alone, and every change is audited.

The admin role manages reviewers through the product's own pages (/review/people/reviewers/), which can only
make reviewer accounts. Here only a superuser may look at or change a user, a group or a token, whatever
permissions a group holds; each change is attributed to the signed-in superuser in the account audit log,
which superusers read (never edit) at /admin/reviewapp/accountaudit/.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from django import forms
from django.contrib import admin
from django.contrib.auth.admin import GroupAdmin, UserAdmin
from django.contrib.auth.forms import UserChangeForm
from django.contrib.auth.models import Group, User
from django.http import HttpRequest, HttpResponse

from reviewapp.core.auth.audit import audit_actor
from reviewapp.core.auth.credentials import RateLimitedAdminAuthenticationForm
from reviewapp.core.auth.roles import open_review_assignments, sees_model_output
from reviewapp.core.models import AccountAudit, ApiToken

# /admin/login/ counts failures exactly as /accounts/login/ does.
admin.site.login_form = RateLimitedAdminAuthenticationForm


class SuperuserOnly:
    """Whatever permissions a group holds, only a superuser sees these pages."""

    def has_module_permission(self, request: HttpRequest) -> bool:
        return request.user.is_active and request.user.is_superuser

    def has_view_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return request.user.is_active and request.user.is_superuser

    def has_add_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return request.user.is_active and request.user.is_superuser

    def has_change_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return request.user.is_active and request.user.is_superuser

    def has_delete_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return request.user.is_active and request.user.is_superuser


if TYPE_CHECKING:
    # The admin a mixin below is combined with, for its super() calls (at run time a mixin is a plain object).
    _AdminBase = admin.ModelAdmin[Any]
else:
    _AdminBase = object


class Audited(_AdminBase):
    """Attribute every write made through these pages to the signed-in user."""

    def changeform_view(self, request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponse:
        with audit_actor(request.user):
            return super().changeform_view(request, *args, **kwargs)

    def delete_view(self, request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponse:
        with audit_actor(request.user):
            return super().delete_view(request, *args, **kwargs)

    def changelist_view(self, request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponse:
        with audit_actor(request.user):  # bulk actions (delete selected) run here
            return super().changelist_view(request, *args, **kwargs)


class GuardedUserChangeForm(UserChangeForm):
    """Refuses to give a role that sees model output to someone holding blind-review assignments."""

    def clean(self) -> dict:
        cleaned = super().clean()
        assert cleaned is not None  # a ModelForm's clean returns its cleaned_data
        user = self.instance
        if user.pk is None:
            return cleaned
        held = open_review_assignments(user)
        if not held:
            return cleaned
        probe = User(pk=user.pk, is_active=True, is_staff=cleaned.get("is_staff", user.is_staff),
                     is_superuser=cleaned.get("is_superuser", user.is_superuser))
        groups = cleaned.get("groups")
        group_perms = set()
        if groups is not None:
            for group in groups:
                group_perms |= {f"{p.content_type.app_label}.{p.codename}"
                                for p in group.permissions.select_related("content_type")}
        direct = cleaned.get("user_permissions")
        if direct is not None:
            group_perms |= {f"{p.content_type.app_label}.{p.codename}" for p in direct.select_related("content_type")}
        # ModelBackend's caches, filled ahead so has_perm reads the form's groups, not the saved ones.
        setattr(probe, "_perm_cache", group_perms)  # noqa: B010 - private names User does not declare
        setattr(probe, "_user_perm_cache", set())  # noqa: B010
        setattr(probe, "_group_perm_cache", group_perms)  # noqa: B010
        if sees_model_output(probe):
            raise forms.ValidationError(
                f"{user.get_username()!r} holds {held} blind-review assignment(s); an account that sees model output "
                "(admin, stakeholder, staff, superuser) may never hold one. Unassign them on "
                "/review/people/reviewers/ first, or make a separate account for the new role."
            )
        return cleaned


admin.site.unregister(User)
admin.site.unregister(Group)


@admin.register(User)
class AccountUserAdmin(SuperuserOnly, Audited, UserAdmin):
    form = GuardedUserChangeForm

    def user_change_password(self, request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponse:
        with audit_actor(request.user):  # as Audited does for the other pages
            return super().user_change_password(request, *args, **kwargs)


@admin.register(Group)
class AccountGroupAdmin(SuperuserOnly, Audited, GroupAdmin):
    pass


@admin.register(ApiToken)
class ApiTokenAdmin(SuperuserOnly, Audited, admin.ModelAdmin):
    """A superuser may see and revoke tokens, never make one (its owner does, and sees it once)."""

    list_display = ("prefix", "user", "name", "created_at", "expires_at")
    readonly_fields = ("user", "name", "prefix", "created_at", "expires_at")
    exclude = ("key_digest", "password_stamp")

    def has_add_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False


@admin.register(AccountAudit)
class AccountAuditAdmin(SuperuserOnly, admin.ModelAdmin):
    """The audit log, for superusers to read: nobody adds, changes or deletes an entry here."""

    list_display = ("created_at", "actor", "action", "target_type", "target", "detail")
    list_filter = ("action", "target_type")
    search_fields = ("actor", "target", "action")
    readonly_fields = ("created_at", "actor_id", "actor", "action", "target_type", "target_id", "target", "detail")

    def has_add_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False

    def has_delete_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False
