"""Admin pages of the label exchange (/review/exchange/): downloads for Label Studio and Argilla, the upload of their
files, and the import of a label source.
"""

from __future__ import annotations

import json

from django.contrib import messages
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect
from django.views.decorators.http import require_POST

from reviewapp.core.auth.roles import MANAGE_REVIEWS, perm_required
from reviewapp.core.exports.downloads import download
from reviewapp.core.http.requests import SignedInHttpRequest
from reviewapp.review.errors import ReviewError
from reviewapp.review.exchange import argilla, labelstudio, selectors, services
from reviewapp.review.exchange.models import ImportedLabel
from reviewapp.review.exchange.texts import ExchangeError
from reviewapp.review.pools.services import json_lines_parse
from reviewapp.review.pools.views import pool_or_404


def _attachment(body: str | bytes, content_type: str, filename: str) -> HttpResponse:
    return download(body, filename=filename, content_type=content_type)


@perm_required(MANAGE_REVIEWS)
def labelstudio_tasks_download(request: HttpRequest, pool_id: str) -> HttpResponse:
    pool = pool_or_404(pool_id)
    body = json.dumps(labelstudio.labelstudio_tasks(pool=pool), ensure_ascii=False, indent=1)
    return _attachment(body, "application/json; charset=utf-8", f"pool-{pool.public_id}-label-studio-tasks.json")


@perm_required(MANAGE_REVIEWS)
def labelstudio_config_download(request: HttpRequest, pool_id: str) -> HttpResponse:
    pool = pool_or_404(pool_id)
    body = labelstudio.labelstudio_config(pool=pool)
    return _attachment(body, "application/xml; charset=utf-8", f"pool-{pool.public_id}-label-studio-config.xml")


@perm_required(MANAGE_REVIEWS)
def argilla_download(request: HttpRequest, pool_id: str) -> HttpResponse:
    pool = pool_or_404(pool_id)
    return _attachment(argilla.argilla_zip(pool=pool), "application/zip", f"pool-{pool.public_id}-argilla.zip")


@perm_required(MANAGE_REVIEWS)
def imported_labels_download(request: HttpRequest, pool_id: str) -> HttpResponse:
    pool = pool_or_404(pool_id)
    return _attachment("".join(selectors.pool_imported_jsonl(pool=pool)), "application/x-ndjson; charset=utf-8",
                       f"pool-{pool.public_id}-imported-labels-not-blind.jsonl")


@perm_required(MANAGE_REVIEWS)
@require_POST
def labels_upload(request: HttpRequest, pool_id: str) -> HttpResponse:
    """Upload a Label Studio JSON export or Argilla records (or its zipped to_disk directory): not blind labels."""
    pool = pool_or_404(pool_id)
    upload = request.FILES.get("file")
    tool = request.POST.get("tool", "")
    unstated = request.POST.get("unstated", "") or None
    try:
        if upload is None:
            raise ExchangeError("file: choose a file to import")
        document = services.document_read(upload.read(), tool=tool)
        result = services.annotations_import(pool=pool, tool=tool, document=document, filename=upload.name or "",
                                             imported_by=request.user.get_username(), unstated=unstated)
    except ExchangeError as error:
        messages.error(request, f"Label import refused: {error}")
    else:
        messages.success(request, f"Imported: {services.import_report(result, tool=tool)}")
    return redirect("review:pool", pool_id=pool.public_id)


@perm_required(MANAGE_REVIEWS)
@require_POST
def admin_label_import(request: SignedInHttpRequest) -> HttpResponse:
    try:
        labels = json_lines_parse(request.POST.get("labels", ""))
        source = services.label_source_import(
            name=request.POST.get("name", ""),
            labels=labels,
            provisional=request.POST.get("provisional", "on") in ("on", "1", "true"),
            description=request.POST.get("description", ""),
            created_by=request.user,
        )
    except ReviewError as error:
        messages.error(request, f"Label import refused: {error}")
    else:
        imported = ImportedLabel.objects.filter(source=source).count()
        messages.success(request, f"Imported {imported} labels as {source.name!r}.")
    return redirect("review:pools")
