"""Every file the product hands out (CSV, JSON Lines, qrels, PDF, ...) leaves through here: one way to name the
file (`Content-Disposition`, RFC 6266 quoting for any name, so a suite or pool name cannot break the header) and
one table of content types. CSV rows go through the one safe writer (``csv_export``)."""

from __future__ import annotations

import io
from collections.abc import Iterable, Mapping, Sequence
from pathlib import PurePosixPath
from typing import Any, TypeVar

from django.http import HttpResponse, HttpResponseBase, StreamingHttpResponse
from django.utils.http import content_disposition_header

from reviewapp.core.exports.csv_export import SafeCsvDictWriter

CONTENT_TYPES = {
    ".csv": "text/csv; charset=utf-8",
    ".tsv": "text/tab-separated-values; charset=utf-8",
    ".json": "application/json; charset=utf-8",
    ".jsonl": "application/x-ndjson; charset=utf-8",
    ".pdf": "application/pdf",
    ".zip": "application/zip",
    ".yaml": "application/yaml; charset=utf-8",
    ".txt": "text/plain; charset=utf-8",
    ".qrels": "text/plain; charset=utf-8",
    ".run": "text/plain; charset=utf-8",
}

Response = TypeVar("Response", bound=HttpResponseBase)


def content_type_of(filename: str) -> str:
    return CONTENT_TYPES.get(PurePosixPath(filename).suffix.lower(), "application/octet-stream")


def as_download(response: Response, filename: str) -> Response:
    """The response, named as a file to save (streaming responses too)."""
    response["Content-Disposition"] = content_disposition_header(True, filename)
    return response


def download(body: str | bytes, *, filename: str, content_type: str | None = None) -> HttpResponse:
    """A file answer; its type from the file name's suffix unless given."""
    return as_download(HttpResponse(body, content_type=content_type or content_type_of(filename)), filename)


def stream_download(chunks: Iterable[str | bytes], *, filename: str) -> StreamingHttpResponse:
    """A file answer sent as ``chunks`` are made (a ledger's receipts, one JSON line each); its type from the name."""
    return as_download(StreamingHttpResponse(chunks, content_type=content_type_of(filename)), filename)


def csv_download(rows: Iterable[Mapping[str, Any]], *, filename: str, fields: Sequence[str]) -> HttpResponse:
    """Rows as a CSV file through the formula-safe writer; keys not in ``fields`` are left out."""
    buffer = io.StringIO()
    writer = SafeCsvDictWriter(buffer, fieldnames=list(fields), extrasaction="ignore")
    writer.writeheader()
    for row in rows:  # DictWriter.writerows would skip the neutralising writerow
        writer.writerow(row)
    return download(buffer.getvalue(), filename=filename)
