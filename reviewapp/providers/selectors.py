"""Reads of the provider layer: spend against budget, receipt counts, the JSONL export."""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass

from django.db.models import Count

from reviewapp.providers.models import Ledger, Receipt

EXPORT_FIELDS = (
    "seq", "request_key", "attempt", "method", "request_url", "request_body", "request_bytes",
    "estimated_input_tokens", "sent_at", "answered_at", "status", "http_status", "response_body", "parse", "error",
    "usage", "reported_input_tokens", "latency_ms",
)


@dataclass(frozen=True)
class LedgerSpend:
    requests: int
    max_requests: int
    input_tokens: int  # reported where reported, else estimated
    reported_input_tokens: int
    max_input_tokens: int
    by_status: dict[str, int]
    stop_reason: str

    @property
    def request_share(self) -> float:
        return self.requests / self.max_requests if self.max_requests else 0.0

    @property
    def token_share(self) -> float:
        return self.input_tokens / self.max_input_tokens if self.max_input_tokens else 0.0


def ledger_spend(*, ledger: Ledger) -> LedgerSpend:
    rows = Receipt.objects.filter(ledger=ledger).values_list("reported_input_tokens", "estimated_input_tokens")
    spent = reported_total = 0
    count = 0
    for reported, estimated in rows:
        count += 1
        spent += reported if reported is not None else estimated
        reported_total += reported or 0
    by_status = dict(
        Receipt.objects.filter(ledger=ledger).values_list("status").annotate(n=Count("id")).values_list("status", "n")
    )
    ledger.refresh_from_db(fields=["stop_reason"])
    return LedgerSpend(
        requests=count, max_requests=ledger.max_requests, input_tokens=spent, reported_input_tokens=reported_total,
        max_input_tokens=ledger.max_input_tokens, by_status=by_status, stop_reason=ledger.stop_reason,
    )


def receipt_as_json(receipt: Receipt) -> dict:
    out = {"ledger": receipt.ledger_id}
    for name in EXPORT_FIELDS:
        value = getattr(receipt, name)
        out[name] = value.isoformat() if hasattr(value, "isoformat") else value
    return out


def receipts_jsonl(*, ledger: Ledger) -> Iterator[str]:
    """One JSON object per line per receipt, in sending order (seq). Receipts never hold credentials."""
    header = {
        "ledger": ledger.pk, "purpose": ledger.purpose, "provider": ledger.provider, "model_id": ledger.model_id,
        "base_url": ledger.base_url, "max_requests": ledger.max_requests, "max_input_tokens": ledger.max_input_tokens,
        "estimate_rule": ledger.estimate_rule, "concurrency": ledger.concurrency, "record": "ledger",
    }
    yield json.dumps(header, ensure_ascii=False, sort_keys=True) + "\n"
    for receipt in Receipt.objects.filter(ledger=ledger).order_by("seq").iterator(chunk_size=200):
        yield json.dumps({"record": "receipt", **receipt_as_json(receipt)}, ensure_ascii=False, sort_keys=True) + "\n"


def receipt_failures(*, ledger: Ledger, limit: int = 50) -> list[Receipt]:
    return list(
        Receipt.objects.filter(ledger=ledger, status__in=[Receipt.Status.FAILED, Receipt.Status.UNKNOWN])
        .order_by("seq")
        .only("id", "seq", "request_key", "attempt", "status", "http_status", "error", "sent_at")[:limit]
    )
