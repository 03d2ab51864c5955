"""Responses shared by the console's pages and API: CSV and JSON exports, refusals with their messages."""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from django.http import Http404, HttpResponse, JsonResponse
from django.shortcuts import render
from rest_framework import status
from rest_framework.response import Response

from grading.dataset.models import CuadDataset
from grading.dataset.selectors import ScopeError, dataset_chosen
from reviewapp.core.exports.downloads import csv_download
from reviewapp.core.http.requests import HtmxHttpRequest


def dataset_or_404(params) -> CuadDataset | None:
    """The dataset a page is asked for (``?dataset=``, a ``?run=``'s, else CUAD's default); 404 for an unknown id."""
    try:
        return dataset_chosen(params)
    except ScopeError as exc:
        raise Http404(str(exc)) from exc


def csv_response(name: str, fields: Sequence[str], rows: Iterable[dict]) -> HttpResponse:
    return csv_download(rows, filename=f"{name}.csv", fields=fields)


def json_response(data, *, status: int = 200) -> JsonResponse:
    return JsonResponse(data, status=status, json_dumps_params={"ensure_ascii": False, "indent": 1})


def export_format(fmt: str) -> str:
    """The export a page's URL names (``scorecard/scorecard.csv``, grading.export_urls): "" (the page), "json" or
    "csv"; anything else is a 404."""
    if fmt not in ("", "json", "csv"):
        raise Http404(f"unknown export format {fmt!r}")
    return fmt


def error_response(request: HtmxHttpRequest, template: str, errors: list[str], context: dict | None = None, *,
                   fmt: str = ""):
    """A refused request: JSON for an export (``fmt``), the page (or its htmx fragment) with the messages otherwise."""
    if fmt in ("json", "csv"):
        return json_response({"errors": errors}, status=400)
    ctx = {"errors": errors, **(context or {})}
    if request.htmx:
        # htmx swaps 2xx only: the refusal replaces the fragment, so the message shows where the figures were.
        return render(request, f"{template}#errors", ctx)
    return render(request, template, ctx, status=400)


def refused(errors: list[str]) -> Response:
    """The API's 400: every problem by name."""
    return Response({"errors": errors}, status=status.HTTP_400_BAD_REQUEST)
