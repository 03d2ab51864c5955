"""Writes of the provider layer: create a ledger, execute requests against it.

How a job uses it::

    from reviewapp.providers import services, clients
    from reviewapp.providers.types import GradeSpec, StructuredSpec

    ledger = services.ledger_create(purpose="cuad extraction run 7", provider="anthropic",
                                    model_id="claude-...", max_requests=500, max_input_tokens=3_000_000)
    client = clients.client_for_ledger(ledger)
    requests = [client.prepare_structured(StructuredSpec(...)) for ... ]   # deterministic order
    report = services.ledger_execute(ledger=ledger, client=client, requests=requests,
                                     should_stop=lambda: "" , on_result=lambda r: save(r))
    # report.results[i] matches requests[i]: status answered / failed / unknown / not_sent, parse, error

Calling ``ledger_execute`` again with the same requests resumes: answered keys are
served from their receipts, failed/unknown keys are disclosed and NOT re-sent
unless listed in ``reattempt_keys`` (each re-attempt counts against the budget).
A request whose body never left this process (``not_sent``: no key, connection
refused) reached no provider, so a later execution sends it again.
The caller must hold an exclusive claim on the work (one executor per ledger).

Spend is what was sent: a ``not_sent`` receipt counts neither as a request nor as
tokens. An execution sends its first request alone; an answer that rules out every
other request (refused key, unknown model, unreachable endpoint: ``fatal_reason``)
stops the execution there, with the provider's own message in ``report.fatal``.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable, Sequence
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from dataclasses import dataclass, field
from typing import Any

from django.conf import settings
from django.db import transaction
from django.db.models import Max
from django.utils import timezone

from reviewapp.providers.clients.base import Client, check_base_url, fatal_reason, http_error, redact
from reviewapp.providers.models import BudgetRaise, Ledger, Receipt
from reviewapp.providers.spend.budget import ESTIMATE_RULE, Spend, estimate_input_tokens
from reviewapp.providers.types import Parse, PreparedRequest, ProviderError, SendOutcome, ValidationFailed

logger = logging.getLogger(__name__)

ANSWERED = Receipt.Status.ANSWERED
FAILED = Receipt.Status.FAILED
UNKNOWN = Receipt.Status.UNKNOWN
SENT = Receipt.Status.SENT
LOCAL_PROVIDER = Ledger.Provider.LOCAL
NOT_SENT = Receipt.Status.NOT_SENT  # also the result of a request this execution did not attempt
CLAIM_LOST = "claim lost: another execution disclosed a receipt this execution had open"


@dataclass(frozen=True)
class RequestResult:
    index: int
    key: str
    status: str  # answered / failed / unknown / not_sent
    parse: Parse | None = None
    error: str = ""
    attempt: int = 0
    receipt_id: int | None = None
    from_earlier: bool = False  # served from an earlier execution's receipt, nothing sent now


@dataclass
class ExecutionReport:
    results: list[RequestResult]
    sent: int = 0
    stop_reason: str = ""
    unknown_disclosed: int = 0
    counts: dict[str, int] = field(default_factory=dict)
    fatal: str = ""  # the answer that stopped the execution because no other request could succeed


def ledger_create(
    *, purpose: str, provider: str, model_id: str, max_requests: int, max_input_tokens: int,
    base_url: str = "", concurrency: int = 4,
) -> Ledger:
    """A new ledger. The base URL is pinned now (defaults from settings) and must carry no credentials."""
    if provider not in Ledger.Provider.values:
        raise ProviderError(f"unknown provider {provider!r}; use one of {', '.join(Ledger.Provider.values)}")
    if provider == "openai_compatible":
        base_url = check_base_url(base_url or settings.OPENAI_COMPATIBLE_BASE_URL)
    elif provider == "anthropic":
        base_url = check_base_url(base_url or settings.ANTHROPIC_BASE_URL)
    else:
        base_url = ""
    if max_requests < 1 or max_input_tokens < 1:
        raise ProviderError("budget limits must be positive")
    if not 1 <= concurrency <= 64:
        raise ProviderError("concurrency must be between 1 and 64")
    return Ledger.objects.create(
        purpose=purpose, provider=provider, model_id=model_id, base_url=base_url, max_requests=max_requests,
        max_input_tokens=max_input_tokens, estimate_rule=ESTIMATE_RULE, concurrency=concurrency,
    )


def ledger_budget_raise(
    *, ledger: Ledger, add_requests: int = 0, add_input_tokens: int = 0, reason: str, user: Any = None,
    actor: str = "",
) -> BudgetRaise:
    """Raise a ledger's limits explicitly, recording who, when, why and the limits before and after.

    Only upwards (a budget is never lowered under work already sent) and only with a reason. The raise and its
    record are one transaction, on the ledger's row locked, so two raises at once add up.
    """
    reason = reason.strip()
    if not reason:
        raise ProviderError("reason: say why the budget is raised (it is recorded in the ledger)")
    if add_requests < 0 or add_input_tokens < 0:
        raise ProviderError("a budget raise adds requests or input tokens; it never lowers the limits")
    if not add_requests and not add_input_tokens:
        raise ProviderError("add_requests / add_input_tokens: give at least one positive amount to add")
    who = actor or (user.get_username() if getattr(user, "is_authenticated", False) else "")
    if not who:
        raise ProviderError("actor: a budget raise must name who raised it")
    with transaction.atomic():
        locked = Ledger.objects.select_for_update().get(pk=ledger.pk)
        entry = BudgetRaise(
            ledger=locked, raised_by=user if getattr(user, "is_authenticated", False) else None, actor=who[:200],
            reason=reason[:5000], old_max_requests=locked.max_requests,
            new_max_requests=locked.max_requests + add_requests, old_max_input_tokens=locked.max_input_tokens,
            new_max_input_tokens=locked.max_input_tokens + add_input_tokens,
        )
        entry.save(force_insert=True)
        Ledger.objects.filter(pk=locked.pk).update(max_requests=entry.new_max_requests,
                                                   max_input_tokens=entry.new_max_input_tokens)
    ledger.max_requests, ledger.max_input_tokens = entry.new_max_requests, entry.new_max_input_tokens
    logger.info("budget of ledger %s raised by %s: %s", ledger.pk, who, entry)
    return entry


def ledgers_budget_raise(
    *, ledgers: Sequence[Ledger], raises: type[Exception], add_requests: int = 0, add_input_tokens: int = 0,
    reason: str, user: Any = None, actor: str = "",
) -> None:
    """A job's budget raise: each of its ledgers by the same amounts, all or none; a refusal becomes the job
    kind's own error (``raises``), so its pages and commands say it as they say every other refusal."""
    try:
        with transaction.atomic():
            for ledger in ledgers:
                ledger_budget_raise(ledger=ledger, add_requests=add_requests, add_input_tokens=add_input_tokens,
                                    reason=reason, user=user, actor=actor)
    except ProviderError as exc:
        raise raises(str(exc)) from None


def ledger_disclose_unknown(*, ledger: Ledger) -> int:
    """Receipts still ``sent`` (their executor died before recording an answer) become ``unknown``."""
    return Receipt.objects.filter(ledger=ledger, status=SENT).update(
        status=UNKNOWN, error="sent, but no answer was recorded (the executor stopped); not re-sent automatically",
    )


def _spend_of(ledger: Ledger) -> Spend:
    spend = Spend()
    for reported, estimated in Receipt.objects.filter(ledger=ledger).exclude(status=NOT_SENT).values_list(
        "reported_input_tokens", "estimated_input_tokens"
    ):
        spend.requests += 1
        spend.input_tokens += reported if reported is not None else estimated
    return spend


def _latest_receipts(ledger: Ledger, keys: Iterable[str]) -> dict[str, Receipt]:
    latest: dict[str, Receipt] = {}
    wanted = set(keys)
    for receipt in Receipt.objects.filter(ledger=ledger).order_by("seq").only(
        "id", "request_key", "attempt", "status", "parse", "error", "usage", "reported_input_tokens",
        "estimated_input_tokens",
    ):
        if receipt.request_key in wanted:
            latest[receipt.request_key] = receipt
    return latest


AttemptOutcome = tuple[SendOutcome, Parse | None, str, dict | None, int | None]


def _attempt(client: Client, prepared: PreparedRequest) -> AttemptOutcome:
    """Runs in a worker thread: send once, validate. No database access here."""
    outcome = client.send(prepared)
    if not outcome.answered:
        return outcome, None, outcome.error, None, (0 if not outcome.sent else None)
    usage, reported = client.usage(outcome.body_text)
    if outcome.error:
        return outcome, None, outcome.error, usage, reported
    if outcome.http_status is None or not 200 <= outcome.http_status < 300:
        return outcome, None, http_error(outcome), usage, reported
    try:
        return outcome, client.validate(prepared, outcome), "", usage, reported
    except ValidationFailed as error:
        return outcome, None, f"invalid answer: {error}", usage, reported
    except Exception as error:  # a validator bug must still be recorded, never lost with the receipt open
        logger.exception("validator crashed on %s", prepared.key)
        return outcome, None, f"invalid answer: {type(error).__name__}: {error}", usage, reported


def _receipt_open(*, ledger: Ledger, seq: int, prepared: PreparedRequest, attempt: int, estimate: int) -> Receipt:
    receipt = Receipt(
        ledger=ledger, seq=seq, request_key=prepared.key, attempt=attempt, method=prepared.method,
        request_url=prepared.url, request_body=prepared.body, request_bytes=len(prepared.body_bytes),
        estimated_input_tokens=estimate, sent_at=timezone.now(), status=SENT,
    )
    receipt.save(force_insert=True)
    return receipt


def receipt_complete(
    *, receipt_id: int, outcome: SendOutcome, parse: Parse | None, error: str, usage: dict | None,
    reported: int | None,
) -> str:
    """The one completion of a receipt (conditional on status 'sent'). Returns the status written, '' if none."""
    if parse is not None:
        status = ANSWERED
    elif not outcome.sent:
        status = NOT_SENT
    elif not outcome.answered:
        status = UNKNOWN
    else:
        status = FAILED
    with transaction.atomic():
        written = Receipt.objects.filter(pk=receipt_id, status=SENT).update(
            status=status, answered_at=timezone.now() if outcome.answered else None,
            http_status=outcome.http_status, response_body=outcome.body_text,
            parse=parse.as_json() if parse is not None else None, error=error, usage=usage,
            reported_input_tokens=reported, latency_ms=round(outcome.latency_ms, 3), simulated=outcome.simulated,
        )
        if written and outcome.simulated:
            # The run's own flag, written with the receipt, so every page and export can say "simulated
            # provider" without reading receipts.
            Ledger.objects.filter(pk__in=Receipt.objects.filter(pk=receipt_id).values("ledger_id"),
                                  simulated=False).update(simulated=True)
    # Nothing written: another execution took the work over and disclosed this receipt as unknown meanwhile.
    return status if written else ""


def _result_from_receipt(index: int, receipt: Receipt) -> RequestResult:
    parse = None
    if receipt.status == ANSWERED and receipt.parse is not None:
        parse = Parse.from_json(receipt.parse, usage=receipt.usage, reported=receipt.reported_input_tokens)
    return RequestResult(
        index=index, key=receipt.request_key, status=receipt.status, parse=parse, error=receipt.error,
        attempt=receipt.attempt, receipt_id=receipt.pk, from_earlier=True,
    )


def ledger_execute(
    *,
    ledger: Ledger,
    client: Client,
    requests: Sequence[PreparedRequest],
    reattempt_keys: Iterable[str] = (),
    should_stop: Callable[[], str] | None = None,
    on_result: Callable[[RequestResult], None] | None = None,
) -> ExecutionReport:
    """Send what still needs sending, in order, at most ``ledger.concurrency`` at a time.

    Preflight runs before every request; the first refusal stops sending (requests in
    flight finish and are recorded) and is stored as ``ledger.stop_reason``.
    ``should_stop`` returning a non-empty reason (e.g. "cancelled") stops the same way.
    ``on_result`` is called in THIS thread, once per request index, as results arrive.
    All database writes happen in this thread; worker threads only send and validate.
    """
    if ledger.provider != client.name or ledger.model_id != client.model_id:
        raise ProviderError(f"client {client.name}:{client.model_id} does not match {ledger}")
    report = ExecutionReport(
        results=[RequestResult(index=i, key=r.key, status=NOT_SENT) for i, r in enumerate(requests)]
    )
    report.unknown_disclosed = ledger_disclose_unknown(ledger=ledger)
    Ledger.objects.filter(pk=ledger.pk).update(stop_reason="")
    execution = _Execution(ledger=ledger, client=client, requests=requests, report=report,
                           should_stop=should_stop, on_result=on_result)
    execution.send(execution.plan(set(reattempt_keys)))
    stop_reason = execution.stop_reason
    if stop_reason and not stop_reason.startswith("claim lost"):  # an execution that lost its claim writes nothing
        Ledger.objects.filter(pk=ledger.pk).update(stop_reason=stop_reason)
        ledger.stop_reason = stop_reason
    report.stop_reason = stop_reason
    for result in report.results:
        status = str(result.status)  # plain strings, whether from a receipt or not
        report.counts[status] = report.counts.get(status, 0) + 1
    return report


class _Execution:
    """One ``ledger_execute``: its requests by key, the spend so far, the receipts in flight, why it stopped."""

    def __init__(self, *, ledger: Ledger, client: Client, requests: Sequence[PreparedRequest],
                 report: ExecutionReport, should_stop: Callable[[], str] | None,
                 on_result: Callable[[RequestResult], None] | None) -> None:
        self.ledger, self.client, self.requests, self.report = ledger, client, requests, report
        self.should_stop, self.on_result = should_stop, on_result
        self.indices_by_key: dict[str, list[int]] = {}
        for i, prepared in enumerate(requests):
            self.indices_by_key.setdefault(prepared.key, []).append(i)
        self.spend = Spend()
        self.next_seq = 0
        self.stop_reason = ""
        self.recorded = 0
        self.inflight: dict[Future, tuple[PreparedRequest, Receipt]] = {}

    def deliver(self, result: RequestResult) -> None:
        for i in self.indices_by_key[result.key]:
            item = RequestResult(**{**result.__dict__, "index": i})
            self.report.results[i] = item
            if self.on_result is not None:
                self.on_result(item)

    def plan(self, reattempt: set[str]) -> list[tuple[PreparedRequest, int]]:
        """Deliver what earlier receipts settle; the requests to send (with their attempt numbers), and the spend."""
        latest = _latest_receipts(self.ledger, self.indices_by_key)
        # The no-retry rule protects a paid budget: a request of the local model left without an answer by a dead
        # executor costs nothing to compute again, so it is recomputed (a new attempt, not charged to the budget).
        recompute = self.ledger.provider == LOCAL_PROVIDER
        recomputed: list[Receipt] = []
        to_send: list[tuple[PreparedRequest, int]] = []
        for key, idx in self.indices_by_key.items():
            receipt = latest.get(key)
            if receipt is None:
                to_send.append((self.requests[idx[0]], 1))
            elif receipt.status == ANSWERED:
                self.deliver(_result_from_receipt(idx[0], receipt))
            elif key in reattempt or receipt.status == NOT_SENT or (recompute and receipt.status == UNKNOWN):
                to_send.append((self.requests[idx[0]], receipt.attempt + 1))
                if recompute and receipt.status == UNKNOWN and key not in reattempt:
                    recomputed.append(receipt)
            else:
                self.deliver(_result_from_receipt(idx[0], receipt))
        self.spend = _spend_of(self.ledger)
        for receipt in recomputed:
            self.spend.requests -= 1
            self.spend.input_tokens -= receipt.reported_input_tokens or receipt.estimated_input_tokens
        self.next_seq = (Receipt.objects.filter(ledger=self.ledger).aggregate(m=Max("seq"))["m"] or 0) + 1
        return to_send

    def send(self, to_send: list[tuple[PreparedRequest, int]]) -> None:
        pending = list(reversed(to_send))
        with ThreadPoolExecutor(max_workers=max(1, self.ledger.concurrency), thread_name_prefix="provider") as pool:
            while pending or self.inflight:
                self._submit(pool, pending)
                if self.stop_reason and pending:
                    for prepared, _attempt_no in pending:
                        self.deliver(RequestResult(index=self.indices_by_key[prepared.key][0], key=prepared.key,
                                                   status=NOT_SENT, error=self.stop_reason))
                    pending = []
                if self.inflight:
                    done, _ = wait(list(self.inflight), return_when=FIRST_COMPLETED)
                    # Record in submission order among those done, so receipts complete deterministically.
                    for future in sorted(done, key=lambda f: self.inflight[f][1].seq):
                        self._record(future)

    def _submit(self, pool: ThreadPoolExecutor, pending: list[tuple[PreparedRequest, int]]) -> None:
        """Open a receipt and submit the next pending requests, while nothing says stop and there is room."""
        # The first request goes alone: if it shows that none can succeed, nothing else was sent.
        limit = max(1, self.ledger.concurrency) if self.recorded else 1
        while pending and not self.stop_reason and len(self.inflight) < limit:
            prepared, attempt = pending[-1]
            estimate = estimate_input_tokens(len(prepared.body_bytes))
            # The caller's claim check and the receipt commit together: a job's heartbeat UPDATE in
            # ``should_stop`` locks its row until the receipt is in, so a takeover either comes first (the
            # check fails, nothing is opened) or waits and then sees this receipt (disclosed, never re-sent).
            with transaction.atomic():
                self.stop_reason = self.should_stop() if self.should_stop is not None else ""
                if not self.stop_reason:
                    self.stop_reason = self.spend.refusal(max_requests=self.ledger.max_requests,
                                                          max_input_tokens=self.ledger.max_input_tokens,
                                                          estimate=estimate)
                if self.stop_reason:
                    break
                receipt = _receipt_open(ledger=self.ledger, seq=self.next_seq, prepared=prepared, attempt=attempt,
                                        estimate=estimate)
            pending.pop()
            self.next_seq += 1
            self.spend.requests += 1
            self.spend.input_tokens += estimate
            self.report.sent += 1
            self.inflight[pool.submit(_attempt, self.client, prepared)] = (prepared, receipt)

    def _record(self, future: Future) -> None:
        prepared, receipt = self.inflight.pop(future)
        try:
            outcome, parse, error, usage, reported = future.result()
        except Exception as exc:  # a client bug: record it, the receipt must not stay open
            logger.exception("provider client crashed on %s", prepared.key)
            # Whether the body left before the crash is unknown: charged as sent, answer unknown.
            outcome = SendOutcome(sent=True, answered=False, http_status=None, body_text="", latency_ms=0.0,
                                  error=redact(f"client error: {type(exc).__name__}: {exc}")[:2000])
            parse, error, usage, reported = None, outcome.error, None, None
        status = receipt_complete(receipt_id=receipt.pk, outcome=outcome, parse=parse, error=error, usage=usage,
                                  reported=reported)
        self.recorded += 1
        if not status:
            # Its answer belongs to nobody now: the execution holding the work disclosed it; stop sending.
            self.stop_reason = self.stop_reason or CLAIM_LOST
            return
        if status == NOT_SENT:
            self.spend.requests -= 1
            self.spend.input_tokens -= receipt.estimated_input_tokens
            self.report.sent -= 1
        elif reported is not None:
            self.spend.input_tokens += reported - receipt.estimated_input_tokens
        fatal = fatal_reason(outcome) if parse is None else ""
        if fatal and not self.report.fatal:
            self.report.fatal = fatal
            self.stop_reason = f"stopped at the first request that cannot succeed: {fatal}"
        self.deliver(RequestResult(index=self.indices_by_key[prepared.key][0], key=prepared.key, status=status,
                                   parse=parse, error=error, attempt=receipt.attempt, receipt_id=receipt.pk))
