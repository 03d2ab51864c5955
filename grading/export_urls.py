"""A console page and its exports: ``<page>/<stem>.json`` and ``<page>/<stem>.csv``, the file named in the path.

The benchmarks' exports are files in the path (``reports/rerank/<pk>/report.json``), so the console's are too:
one export style across the product. The page keeps answering ``?format=json|csv`` (bookmarks made before the
exports moved) with a permanent redirect to the same file at its path, the rest of the query kept.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from django.http import Http404, HttpRequest, HttpResponse, HttpResponseNotAllowed, HttpResponsePermanentRedirect
from django.urls import NoReverseMatch, URLPattern, path, reverse

EXPORT_FORMATS = ("json", "csv")
EXPORT_SUFFIX = "-export"


def _redirecting_old_format(view: Callable[..., HttpResponse], name: str) -> Callable[..., HttpResponse]:
    def page(request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponse:
        fmt = request.GET.get("format")
        if fmt is None or request.method not in ("GET", "HEAD"):
            return view(request, *args, **kwargs)
        if fmt not in EXPORT_FORMATS:
            raise Http404(f"unknown export format {fmt!r}")
        query = request.GET.copy()
        del query["format"]
        namespace = request.resolver_match.namespace if request.resolver_match else ""
        url = reverse(f"{namespace}:{name}{EXPORT_SUFFIX}" if namespace else f"{name}{EXPORT_SUFFIX}",
                      kwargs={**kwargs, "fmt": fmt})
        return HttpResponsePermanentRedirect(f"{url}?{query.urlencode()}" if query else url)

    return _named_as(page, view)


def _read_only(view: Callable[..., HttpResponse]) -> Callable[..., HttpResponse]:
    def export(request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponse:
        # A file is read, never posted to (the page's own POST, a paste or a launch, stays on the page).
        if request.method not in ("GET", "HEAD"):
            return HttpResponseNotAllowed(["GET", "HEAD"])
        return view(request, *args, **kwargs)

    return _named_as(export, view)


def _named_as(wrapper: Callable[..., HttpResponse], view: Callable[..., HttpResponse]) -> Callable[..., HttpResponse]:
    # The pattern names the page's own view (URL checks and lazy views read these; the view is not imported).
    wrapper.__module__ = view.__module__
    wrapper.__qualname__ = wrapper.__name__ = view.__qualname__
    return wrapper


def page_with_exports(route: str, view: Callable[..., HttpResponse], *, name: str,
                      stem: str = "") -> list[URLPattern]:
    """The page at ``route`` and its exports at ``route + stem.<json|csv>`` (``fmt`` given to the view).

    The file is named after the page (``stem``, by default the URL name): ``audits/3/audit.csv``.
    """
    return [path(route, _redirecting_old_format(view, name), name=name),
            path(f"{route}{stem or name}.<str:fmt>", _read_only(view), name=f"{name}{EXPORT_SUFFIX}")]


def export_url(request: HttpRequest, fmt: str) -> str:
    """The current page's export in ``fmt`` with the page's query, or "" where the page has no exports."""
    match = request.resolver_match
    if match is None or not match.url_name or match.url_name.endswith(EXPORT_SUFFIX):
        return ""
    name = f"{match.namespace}:{match.url_name}" if match.namespace else match.url_name
    try:
        url = reverse(f"{name}{EXPORT_SUFFIX}", kwargs={**match.kwargs, "fmt": fmt})
    except NoReverseMatch:  # this page has no exports
        return ""
    return f"{url}?{request.GET.urlencode()}" if request.GET else url
