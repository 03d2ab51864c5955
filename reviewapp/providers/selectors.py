"""Reads of the provider layer: spend against budget, receipt counts, the JSONL export."""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator
from dataclasses import dataclass

from django.db.models import Count

from reviewapp.providers.models import BudgetRaise, Ledger, Receipt
from reviewapp.providers.types import SIMULATED_LABEL

EXPORT_FIELDS = (
    "seq", "request_key", "attempt", "method", "request_url", "request_body", "request_bytes",
    "estimated_input_tokens", "sent_at", "answered_at", "status", "http_status", "response_body", "parse", "error",
    "usage", "reported_input_tokens", "latency_ms", "simulated",
)


@dataclass(frozen=True)
class LedgerSpend:
    """What a ledger spent: only requests whose body left this process count.

    ``input_tokens`` = ``reported_input_tokens`` (the provider's usage) + ``estimated_input_tokens``
    (the conservative byte estimate, for sent requests whose answer reported no usage).
    """

    requests: int  # sent
    max_requests: int
    input_tokens: int  # reported where reported, else estimated
    reported_input_tokens: int
    max_input_tokens: int
    by_status: dict[str, int]  # every receipt, not_sent included
    stop_reason: str
    estimated_input_tokens: int = 0
    estimated_requests: int = 0  # sent requests counted at their estimate

    def _count(self, status: str) -> int:
        return self.by_status.get(status, 0)

    @property
    def answered(self) -> int:
        return self._count(Receipt.Status.ANSWERED)

    @property
    def failed(self) -> int:
        return self._count(Receipt.Status.FAILED)

    @property
    def unknown(self) -> int:
        return self._count(Receipt.Status.UNKNOWN)

    @property
    def in_flight(self) -> int:
        return self._count(Receipt.Status.SENT)

    @property
    def not_sent(self) -> int:
        return self._count(Receipt.Status.NOT_SENT)


def ledger_spend(*, ledger: Ledger) -> LedgerSpend:
    rows = Receipt.objects.filter(ledger=ledger).exclude(status=Receipt.Status.NOT_SENT).values_list(
        "reported_input_tokens", "estimated_input_tokens")
    spent = reported_total = estimated_total = 0
    count = estimated_count = 0
    for reported, estimated in rows:
        count += 1
        spent += reported if reported is not None else estimated
        reported_total += reported or 0
        if reported is None:
            estimated_total += estimated
            estimated_count += 1
    by_status = dict(
        Receipt.objects.filter(ledger=ledger).values_list("status").annotate(n=Count("id")).values_list("status", "n")
    )
    ledger.refresh_from_db(fields=["stop_reason"])
    return LedgerSpend(
        requests=count, max_requests=ledger.max_requests, input_tokens=spent, reported_input_tokens=reported_total,
        max_input_tokens=ledger.max_input_tokens, by_status=by_status, stop_reason=ledger.stop_reason,
        estimated_input_tokens=estimated_total, estimated_requests=estimated_count,
    )


def ledger_simulated(*, ledger: Ledger | None) -> bool:
    """Was any answer of this ledger simulated (the loopback test server)? Then its run says so everywhere."""
    if ledger is None:
        return False
    return bool(ledger.simulated) or Receipt.objects.filter(ledger=ledger, simulated=True).exists()


def ledgers_simulated(*, ledger_ids: Iterable[int | None]) -> set[int]:
    """The ids among ``ledger_ids`` whose runs were answered by a simulated provider (one query)."""
    ids = {i for i in ledger_ids if i}
    if not ids:
        return set()
    flagged = set(Ledger.objects.filter(pk__in=ids, simulated=True).values_list("pk", flat=True))
    return flagged | set(Receipt.objects.filter(ledger_id__in=ids - flagged, simulated=True)
                         .values_list("ledger_id", flat=True).distinct())


def ledger_setup(*, ledger_id: int | None) -> dict:
    """What a run pinned of its model server: provider, model id, base URL (never credentials), simulated."""
    ledger = Ledger.objects.filter(pk=ledger_id).first() if ledger_id else None
    if ledger is None:
        return {}
    return {"provider": ledger.provider, "model_id": ledger.model_id, "base_url": ledger.base_url,
            "simulated": ledger_simulated(ledger=ledger)}


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
        "simulated": ledger_simulated(ledger=ledger),
    }
    if header["simulated"]:
        header["label"] = SIMULATED_LABEL
    yield json.dumps(header, ensure_ascii=False, sort_keys=True) + "\n"
    for receipt in Receipt.objects.filter(ledger=ledger).order_by("seq").iterator(chunk_size=200):
        yield json.dumps({"record": "receipt", **receipt_as_json(receipt)}, ensure_ascii=False, sort_keys=True) + "\n"


@dataclass(frozen=True)
class Shortfall:
    """What finishing a ledger's work needs beyond its limits: re-attempts of its failed and unknown requests
    (each counts again) plus requests not sent yet; 0 when the budget already has room."""

    reattempts: int  # requests whose latest receipt is failed or unknown
    unsent: int
    extra_requests: int
    extra_input_tokens: int
    unknown: int = 0  # of the re-attempts: sent without a recorded answer (the rest failed)


def ledger_shortfall(*, ledger: Ledger, unsent: int = 0) -> Shortfall:
    """How much the limits must grow to re-attempt every failed/unknown request once and send ``unsent`` more
    (estimated like the re-attempts: at the mean estimate of the ledger's requests)."""
    latest: dict[str, Receipt] = {}
    for receipt in Receipt.objects.filter(ledger=ledger).order_by("seq").only(
            "request_key", "status", "estimated_input_tokens"):
        latest[receipt.request_key] = receipt
    again = [r for r in latest.values() if r.status in (Receipt.Status.FAILED, Receipt.Status.UNKNOWN)]
    spend = ledger_spend(ledger=ledger)
    estimates = [r.estimated_input_tokens for r in latest.values()]
    mean = -(-sum(estimates) // len(estimates)) if estimates else 0
    need_requests = len(again) + unsent
    need_tokens = sum(r.estimated_input_tokens for r in again) + unsent * mean
    return Shortfall(
        reattempts=len(again), unsent=unsent,
        extra_requests=max(0, spend.requests + need_requests - ledger.max_requests),
        extra_input_tokens=max(0, spend.input_tokens + need_tokens - ledger.max_input_tokens),
        unknown=sum(r.status == Receipt.Status.UNKNOWN for r in again),
    )


def resume_options(shortfalls: Iterable[Shortfall]) -> str:
    """The options of a job's resume command that finish its ledgers' work: ``--reattempt`` when any request
    needs one, and the budget raise that covers the largest shortfall (a job raises each of its ledgers by the
    same amounts)."""
    shortfalls = list(shortfalls)
    requests = max((s.extra_requests for s in shortfalls), default=0)
    tokens = max((s.extra_input_tokens for s in shortfalls), default=0)
    budget = (f" --add-requests {requests}" if requests else "") + (
        f" --add-input-tokens {tokens}" if tokens else "")
    return (" --reattempt" if any(s.reattempts for s in shortfalls) else "") + budget + (
        ' --reason "why the budget is raised"' if budget else "")


def ledger_get(*, ledger_id: int) -> Ledger:
    return Ledger.objects.get(pk=ledger_id)


def ledgers_get(*, ledger_ids: Iterable[int]) -> list[Ledger]:
    """The ledgers of these ids, in id order (a missing id is left out)."""
    return list(Ledger.objects.filter(pk__in=list(ledger_ids)).order_by("id"))


def receipt_bodies(*, receipt_ids: Iterable[int]) -> dict[int, str]:
    """{receipt id: the response body it recorded}."""
    return dict(Receipt.objects.filter(pk__in=list(receipt_ids)).values_list("id", "response_body"))


def provider_label(provider: str) -> str:
    """How pages name a provider ("OpenAI-compatible", ...); an unknown one by its own name."""
    return str(dict(Ledger.Provider.choices).get(provider, provider))


def ledger_budget_raises(*, ledger_ids: list[int]) -> list[BudgetRaise]:
    """Every recorded raise of these ledgers, oldest first."""
    return list(BudgetRaise.objects.filter(ledger_id__in=list(ledger_ids)).order_by("created_at", "id"))


def ledger_keys(*, ledger: Ledger) -> int:
    """How many distinct requests of the ledger were sent at least once (their body left this process)."""
    return (Receipt.objects.filter(ledger=ledger).exclude(status=Receipt.Status.NOT_SENT)
            .values("request_key").distinct().count())
