"""Pages of the project itself: home and health. Review pages are in reviewapp/review/views.py."""

from __future__ import annotations

from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.shortcuts import render
from django.views.decorators.cache import never_cache
from django.views.decorators.http import require_GET

from reviewapp.core.access import ROLE_DESCRIPTIONS, roles_of
from reviewapp.core.health import check_broker, check_database


@login_required
def home(request: HttpRequest) -> HttpResponse:
    roles = roles_of(request.user)
    return render(
        request,
        "home.html",
        {"roles": [(role, ROLE_DESCRIPTIONS.get(role, "")) for role in roles]},
    )


@require_GET
@never_cache
def healthz(request: HttpRequest) -> JsonResponse:
    checks = [check_database(), check_broker()]
    healthy = all(check.ok for check in checks)
    body = {
        "status": "ok" if healthy else "down",
        **{check.name: {"ok": check.ok, "detail": check.detail} for check in checks},
    }
    return JsonResponse(body, status=200 if healthy else 503)
