"""HTML to PDF with WeasyPrint, for the pages a stakeholder sends on (every job's summary uses this one path).

The page is rendered from our own template with its CSS inline; WeasyPrint is given no base URL and a fetcher
that refuses every URL, so a PDF never reaches the network or the file system, whatever the page contains.
"""

from __future__ import annotations

from typing import Any, NoReturn


def _refuse(url: str, *args: Any, **kwargs: Any) -> NoReturn:
    raise ValueError(f"the PDF renderer fetches nothing ({url[:60]})")


def pdf_from_html(html: str) -> bytes:
    """The PDF of one self-contained HTML document (CSS inline, no external resources)."""
    # Imported when called: WeasyPrint loads pango through cffi, which only the PDF views need.
    from weasyprint import HTML

    return bytes(HTML(string=html, url_fetcher=_refuse).write_pdf())
