"""Pages of the project itself: home, health, and a user's own API tokens. Review pages are in
the folders of reviewapp/review/ (its README section "Layout of review/")."""

from __future__ import annotations

from typing import Any

from django.conf import settings
from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.contrib.auth.views import PasswordChangeView
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.shortcuts import redirect, render
from django.templatetags.static import static
from django.urls import reverse_lazy
from django.utils import timezone
from django.views.decorators.cache import never_cache
from django.views.decorators.http import require_GET, require_http_methods, require_POST

from reviewapp.core.auth.accounts import AccountError, user_shortcuts_get, user_shortcuts_set
from reviewapp.core.auth.audit import audit_actor
from reviewapp.core.auth.credentials import api_token_create, api_token_revoke, password_stamp
from reviewapp.core.auth.roles import ROLE_DESCRIPTIONS, roles_of
from reviewapp.core.health import check_broker, check_database
from reviewapp.core.http.requests import SignedInHttpRequest
from reviewapp.core.models import KeyboardShortcuts


@login_required
def home(request: HttpRequest) -> HttpResponse:
    roles = roles_of(request.user)
    return render(
        request,
        "home.html",
        {"roles": [(role, ROLE_DESCRIPTIONS.get(role, "")) for role in roles]},
    )


@require_GET
def favicon(request: HttpRequest) -> HttpResponse:
    """/favicon.ico: browsers ask for it on pages without an icon link (JSON, the API); a 404 there is noise."""
    return redirect(static("favicon.svg"), permanent=True)


@require_GET
@never_cache
def healthz(request: HttpRequest) -> JsonResponse:
    """Up or down for anyone (load balancers); which dependency and why only for staff.

    A driver's error text names the database or Redis host and port: not for anonymous callers.
    """
    checks = [check_database(), check_broker()]
    healthy = all(check.ok for check in checks)
    body: dict = {"status": "ok" if healthy else "down"}
    if request.user.is_authenticated and request.user.is_staff:
        body.update({check.name: {"ok": check.ok, "detail": check.detail} for check in checks})
    return JsonResponse(body, status=200 if healthy else 503)


@login_required
@never_cache
@require_http_methods(["GET", "POST"])
def tokens(request: SignedInHttpRequest) -> HttpResponse:
    """The signed-in user's own API tokens: make one (shown once), see when each expires, revoke."""
    created = None
    error = ""
    if request.method == "POST":
        try:
            created = api_token_create(user=request.user, name=request.POST.get("name", ""))
        except ValueError as exc:
            error = str(exc)
    stamp = password_stamp(request.user)
    now = timezone.now()
    rows = [(token, "expired" if token.expires_at <= now else "dead: password changed since"
             if token.password_stamp != stamp else "active") for token in request.user.api_tokens.all()]
    context = {"tokens": rows, "created": created, "error": error,
               "ttl_days": round(settings.API_TOKEN_TTL_SECONDS / 86400, 1)}
    response = render(request, "accounts/tokens.html", context, status=400 if error else 200)
    response["Cache-Control"] = "no-store"
    return response


@login_required
@require_POST
def token_revoke(request: HttpRequest, token_id: int) -> HttpResponse:
    if api_token_revoke(user=request.user, token_id=token_id):
        messages.success(request, "Token revoked.")
    else:
        messages.error(request, "No such token of yours.")
    return redirect("tokens")


@login_required
@require_http_methods(["GET", "POST"])
def keyboard(request: HttpRequest) -> HttpResponse:
    """The signed-in user's own keyboard setting for the review workspace: single keys, Alt + key, or off."""
    error = ""
    if request.method == "POST":
        try:
            user_shortcuts_set(user=request.user, shortcuts=request.POST.get("shortcuts", ""))
        except AccountError as exc:
            error = str(exc)
        else:
            messages.success(request, "Keyboard setting saved.")
            return redirect("keyboard")
    context = {"choices": KeyboardShortcuts.choices, "current": user_shortcuts_get(user=request.user), "error": error}
    return render(request, "accounts/keyboard.html", context, status=400 if error else 200)


class OwnPasswordChange(PasswordChangeView):
    """A user changes their own password (recorded in the account audit log as theirs; their tokens die)."""

    template_name = "accounts/password_change.html"
    success_url = reverse_lazy("tokens")

    def form_valid(self, form: Any) -> HttpResponse:
        with audit_actor(self.request.user):
            response = super().form_valid(form)
        messages.success(self.request, "Password changed. Tokens made before it no longer work.")
        return response

