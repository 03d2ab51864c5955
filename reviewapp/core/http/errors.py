"""Error pages: JSON on every path under /api/, the site's own pages elsewhere.

A client parsing the API's errors never meets the site's HTML, the URLs no route matches included (a non-integer
id in /api/v1/benchmarks/provisions/abc/ is such a URL). Kept out of the views modules: the URL config names
these handlers, and ``manage.py check`` imports them.
"""

from __future__ import annotations

from django.http import HttpRequest, HttpResponse, JsonResponse
from django.views import defaults

API_PREFIX = "/api/"


def _api_error(request: HttpRequest, status: int, detail: str) -> JsonResponse | None:
    return JsonResponse({"detail": detail}, status=status) if request.path.startswith(API_PREFIX) else None


def bad_request(request: HttpRequest, exception: Exception) -> HttpResponse:
    return _api_error(request, 400, "Bad request.") or defaults.bad_request(request, exception)


def permission_denied(request: HttpRequest, exception: Exception) -> HttpResponse:
    denied = "You do not have permission to perform this action."
    return _api_error(request, 403, denied) or defaults.permission_denied(request, exception)


def not_found(request: HttpRequest, exception: Exception | None = None) -> HttpResponse:
    return _api_error(request, 404, "Not found.") or defaults.page_not_found(request, exception)


def server_error(request: HttpRequest) -> HttpResponse:
    return _api_error(request, 500, "Server error.") or defaults.server_error(request)
