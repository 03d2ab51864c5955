"""HTML to PDF with WeasyPrint, for the pages a stakeholder sends on (every job's summary uses this one path).

The page is rendered from our own template with its CSS inline. WeasyPrint fetches every resource a document
names (``<img>``, ``<link rel=stylesheet>``, ``@import``, ``url()`` in CSS, ``file:``, ``http:``, ``data:``)
through the ``url_fetcher`` it is given: an object with WeasyPrint's ``URLFetcher`` interface (``fetch(url,
headers)`` answering a ``URLFetcherResponse``; a plain function is called but breaks its error handling). Ours
serves the product's own static files and refuses every other URL, so a PDF never reaches the network or the
file system, whatever the page contains; a refused resource is left out and the PDF still renders.

Relative references are joined onto ``BASE_URL``, a host under ``.invalid`` that never resolves: a reference
counts as a static file only when it lands under that host's ``STATIC_URL`` and names a file the static files
finders (or the collected static root) hold.
"""

from __future__ import annotations

import mimetypes
import posixpath
from pathlib import Path
from typing import Any
from urllib.parse import unquote, urljoin, urlsplit

from django.conf import settings
from django.contrib.staticfiles import finders

BASE_URL = "https://pdf.invalid/"


def static_path(url: str) -> str | None:
    """The relative path of the product's static file that ``url`` names, or None for any other URL."""
    prefix = urljoin(BASE_URL, settings.STATIC_URL)
    parts = urlsplit(url)
    if parts.query or not url.startswith(prefix):
        return None
    relative = unquote(parts.path[len(urlsplit(prefix).path):])
    if (not relative or "\\" in relative or "\x00" in relative or relative.startswith("/")
            or ".." in relative.split("/") or posixpath.normpath(relative) != relative):
        return None
    return relative


def _static_file(relative: str) -> Path | None:
    found = finders.find(relative)
    if found:
        return Path(str(found))
    # In the image the files are collected (STATIC_ROOT) and the finders may not know them.
    root = Path(settings.STATIC_ROOT).resolve()
    collected = (root / relative).resolve()
    return collected if collected.is_file() and root in collected.parents else None


def static_only_fetcher() -> Any:
    """A WeasyPrint URL fetcher serving the product's static files and refusing everything else.

    ``served`` and ``refused`` list the URLs it answered and turned down, in order.
    """
    # local import: WeasyPrint loads pango through cffi (over 1 s), which only the PDF views need.
    from weasyprint.urls import URLFetcher, URLFetcherResponse

    class StaticOnlyFetcher(URLFetcher):
        def __init__(self) -> None:
            super().__init__(allowed_protocols=("https",), allow_redirects=False, fail_on_errors=False)
            self.served: list[str] = []
            self.refused: list[str] = []

        def fetch(self, url: str, headers: Any = None) -> Any:
            relative = static_path(url)
            path = _static_file(relative) if relative is not None else None
            if path is None:
                self.refused.append(url)
                raise ValueError(f"the PDF renderer fetches only the product's own static files, not {url[:80]}")
            self.served.append(url)
            content_type = mimetypes.guess_type(path.name)[0] or "application/octet-stream"
            return URLFetcherResponse(url, path.read_bytes(), {"Content-Type": content_type})

    return StaticOnlyFetcher()


def pdf_from_html(html: str, *, fetcher: Any = None) -> bytes:
    """The PDF of one HTML document; resources other than the product's static files are left out."""
    # local import: WeasyPrint loads pango through cffi (over 1 s), which only the PDF views need.
    from weasyprint import HTML

    fetcher = fetcher if fetcher is not None else static_only_fetcher()
    return bytes(HTML(string=html, base_url=BASE_URL, url_fetcher=fetcher).write_pdf())
