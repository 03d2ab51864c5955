"""Error pages: JSON on every path under /api/, the site's own pages elsewhere.

A client parsing the API's errors never meets the site's HTML, the URLs no route matches included (a non-integer
id in /api/v1/benchmarks/provisions/abc/ is such a URL). Kept out of the views modules: the URL config names
these handlers, and ``manage.py check`` imports them.
"""

from __future__ import annotations

from django.http import HttpRequest, HttpResponse, JsonResponse

API_PREFIX = "/api/"


def _api_error(request: HttpRequest, status: int, detail: str) -> JsonResponse | None:
    return JsonResponse({"detail": detail}, status=status) if request.path.startswith(API_PREFIX) else None


def bad_request(request: HttpRequest, exception: Exception) -> HttpResponse:
    from django.views.defaults import bad_request as page

    return _api_error(request, 400, "Bad request.") or page(request, exception)


def permission_denied(request: HttpRequest, exception: Exception) -> HttpResponse:
    from django.views.defaults import permission_denied as page

    return _api_error(request, 403, "You do not have permission to perform this action.") or page(request, exception)


def not_found(request: HttpRequest, exception: Exception | None = None) -> HttpResponse:
    from django.views.defaults import page_not_found as page

    return _api_error(request, 404, "Not found.") or page(request, exception)


def server_error(request: HttpRequest) -> HttpResponse:
    from django.views.defaults import server_error as page

    return _api_error(request, 500, "Server error.") or page(request)
