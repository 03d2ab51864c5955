"""Provider pages: a ledger's receipts as JSONL (admins and stakeholders; never reviewers)."""

from __future__ import annotations

from django.http import HttpRequest, StreamingHttpResponse
from django.shortcuts import get_object_or_404

from reviewapp.core.auth.roles import VIEW_REPORTS, perm_required
from reviewapp.core.exports.downloads import stream_download
from reviewapp.providers.models import Ledger
from reviewapp.providers.selectors import receipts_jsonl


@perm_required(VIEW_REPORTS)
def ledger_receipts_jsonl(request: HttpRequest, pk: int) -> StreamingHttpResponse:
    ledger = get_object_or_404(Ledger, pk=pk)
    return stream_download(receipts_jsonl(ledger=ledger), filename=f"ledger-{ledger.pk}-receipts.jsonl")
