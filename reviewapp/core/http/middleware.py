"""Project middleware: a bound on request bodies, and the Content-Security-Policy header."""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any

from django.conf import settings
from django.core.exceptions import RequestDataTooBig
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.utils.html import escape
from django.views.defaults import page_not_found

from reviewapp.core.health import is_outage, outage_reason


class _CappedStream:
    """A request stream that refuses to deliver more than ``limit`` bytes in total."""

    def __init__(self, stream: Any, limit: int) -> None:
        self._stream = stream
        self._limit = limit
        self._read = 0

    def _count(self, data: bytes) -> bytes:
        self._read += len(data)
        if self._read > self._limit:
            raise RequestDataTooBig(f"request body over the {self._limit} byte limit")
        return data

    def read(self, size: int | None = -1) -> bytes:
        if size is None or size < 0:
            # Never more than one byte past the limit, so an endless body is not buffered to find its end.
            size = self._limit - self._read + 1
        return self._count(self._stream.read(size))

    def readline(self, size: int | None = -1) -> bytes:
        if size is None or size < 0:
            size = self._limit - self._read + 1
        return self._count(self._stream.readline(size))

    def __getattr__(self, name: str) -> Any:
        return getattr(self._stream, name)


def _too_large(limit: int, got: str) -> HttpResponse:
    return HttpResponse(
        f"Request body too large: {got}; the limit is {limit} bytes.\n",
        status=413,
        content_type="text/plain; charset=utf-8",
    )


class RequestBodyLimitMiddleware:
    """Refuse a request body over ``REQUEST_BODY_MAX_BYTES`` before anything reads it.

    Placed first, ahead of sessions, CSRF and authentication: the CSRF check reads
    ``request.POST``, which spools a multipart upload to disk, so an anonymous
    300 MB POST was written to the temporary folder before the login redirect.
    A declared ``Content-Length`` over the limit is answered 413 at once; a body
    without one (chunked) is read through a stream that stops at the limit.
    """

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        limit = int(settings.REQUEST_BODY_MAX_BYTES)
        declared = request.META.get("CONTENT_LENGTH") or ""
        if declared.strip():
            try:
                length = int(declared)
            except ValueError:
                return HttpResponse("Content-Length is not a whole number.\n", status=400,
                                    content_type="text/plain; charset=utf-8")
            if length > limit:
                return _too_large(limit, f"{length} bytes declared")
        stream = getattr(request, "_stream", None)
        if stream is not None:
            # A proxy with the stream's read and readline (the stubs type Django's private stream as BinaryIO).
            request._stream = _CappedStream(stream, limit)  # type: ignore[assignment]
        return self.get_response(request)


class ContentSecurityPolicyMiddleware:
    """Send ``CONTENT_SECURITY_POLICY`` on every response: scripts from this origin only, no inline script."""

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        response = self.get_response(request)
        policy = getattr(settings, "CONTENT_SECURITY_POLICY", "")
        if policy and "Content-Security-Policy" not in response:
            response["Content-Security-Policy"] = policy
        return response


class DebugNotFoundMiddleware:
    """With DEBUG on, a 404 page for anyone but staff is the product's plain page, not Django's URL list.

    Django's debug 404 lists every URL pattern of the project (admin, API, job pages). It is replaced
    here, after authentication so that staff developers keep it; the page itself is templates/404.html.
    """

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        response = self.get_response(request)
        if (
            settings.DEBUG
            and response.status_code == 404
            and response.get("Content-Type", "").startswith("text/html")
            and not getattr(getattr(request, "user", None), "is_staff", False)
        ):
            return page_not_found(request, exception=None)
        return response


class OutageMiddleware:
    """A lost database or broker/cache connection answers 503 naming what is down, not a bare 500.

    The request did nothing half-way: a launch refuses before it saves (``reviewapp.core.jobs.job_enqueue``
    checks the broker inside the launch's transaction), sign-in refuses when its attempt limiter cannot count,
    and a token call when its failure counter cannot be read. The client may try again later (Retry-After).
    """

    RETRY_AFTER_SECONDS = 30

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        return self.get_response(request)

    def process_exception(self, request: HttpRequest, exception: Exception) -> HttpResponse | None:

        if not is_outage(exception):
            return None
        reason = f"Service unavailable: {outage_reason(exception)}. The request was not carried out; try again shortly."
        logging.getLogger(__name__).warning("503 for %s %s: %s", request.method, request.path, reason)
        response: HttpResponse
        if request.path.startswith("/api/") or "application/json" in request.headers.get("Accept", ""):
            response = JsonResponse({"errors": [reason]}, status=503)
        else:
            response = HttpResponse(
                f"<!doctype html><title>Service unavailable</title><h1>Service unavailable</h1><p>{escape(reason)}</p>",
                status=503, content_type="text/html; charset=utf-8")
        response["Retry-After"] = str(self.RETRY_AFTER_SECONDS)
        return response
