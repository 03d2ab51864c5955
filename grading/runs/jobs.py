"""Writes for the CUAD console: paste/upload a run, launch an extraction run, execute and resume jobs.

Thin over ``grading.services`` (validation, pair scores, storage of runs) and
the shared provider layer (``reviewapp.providers``: ledgers, receipts, budget
preflight, no automatic retries).

Extraction providers:

- ``local`` (offline default): ``grading.runs.local_extractor``, the MiniLM ONNX
  *heuristic baseline*. It runs on this machine through the provider layer's
  embedding module; nothing is sent anywhere and nothing is spent, so it keeps
  no receipt ledger. Its resume unit is the contract (``JobContract.done``).
- ``openai_compatible`` (OpenRouter, vLLM, ...) and ``anthropic``: one
  structured request per contract (JSON schema: verbatim quotes, each with its
  clause type), executed by ``providers.services.ledger_execute`` on the job's
  ledger. Resume = answered request keys are served from their receipts; a
  failed or unknown request is disclosed and re-sent only when a person asks
  (``job_resume(reattempt=True)``), which counts against the budget.
"""

from __future__ import annotations

import json
import logging
from dataclasses import dataclass
from datetime import datetime, timedelta

from django.conf import settings
from django.db import transaction
from django.db.models import F, Q
from django.utils import timezone

from grading import selectors, services
from grading.dataset.models import Contract, CuadDataset, Sample
from grading.runs.models import ConsoleJob, ExtractionRun, JobContract
from grading.runs.run_format import ParsedRun, RunFormatError

logger = logging.getLogger(__name__)

INLINE_LIMIT = 2000  # a pasted run up to this many extractions is graded in the request; larger ones on Celery
PROVIDERS = ("local", "openai_compatible", "anthropic")
LLM_MAX_CONTRACT_CHARS = 400_000  # CUAD's longest contract is 338k characters; never truncate silently
EXTRACTION_SCHEMA_NAME = "cuad_extractions"

SYSTEM_PROMPT = (
    "You are a contract analyst. Read the contract and extract every clause that belongs to one of the listed "
    "CUAD clause types. Quote the contract VERBATIM: copy the exact words, do not paraphrase, summarise or "
    "fix typos. Return an empty list when the contract has no clause of any type. A quote may be a phrase, a "
    "sentence or a few sentences; give each clause as its own item."
)


class JobError(ValueError):
    """A job cannot be created or resumed as asked; the message says why."""


# ---------------------------------------------------------------------------
# Paste / upload


@dataclass(frozen=True)
class PasteResult:
    run: ExtractionRun | None  # set when graded inline
    job: ConsoleJob | None  # set when queued on Celery
    created: bool
    parsed: ParsedRun


def run_paste(
    *, dataset: CuadDataset, raw: str | bytes, source_name: str = "", user=None, inline_limit: int = INLINE_LIMIT
) -> PasteResult:
    """Validate a pasted or uploaded run (RunFormatError, nothing stored, when invalid), then grade it.

    Up to ``inline_limit`` extractions: imported and graded now. Larger: a grade
    job holds the text and a Celery task imports it (progress on the job page).
    """
    parsed = services.extraction_run_validate(dataset=dataset, raw=raw)
    if len(parsed.extractions) <= inline_limit:
        run, created = services.extraction_run_import(dataset=dataset, raw=raw, source_name=source_name)
        return PasteResult(run, None, created, parsed)
    text = raw.decode("utf-8-sig") if isinstance(raw, bytes) else raw
    with transaction.atomic():
        job = ConsoleJob.objects.create(
            kind=ConsoleJob.Kind.GRADE,
            dataset=dataset,
            model_id=parsed.model,
            raw_run=text,
            source_name=source_name[:255],
            total=len(parsed.extractions),
            stage="queued: validated, waiting for a worker to compute pair scores",
            created_by=user if getattr(user, "is_authenticated", False) else None,
        )
        _queue(job)
    return PasteResult(None, job, True, parsed)


def job_grade_execute(*, job_id: int) -> ConsoleJob | None:
    """Task body: import (pair scores) a pasted run. Claimed by a conditional UPDATE; safe to run twice."""
    if not _claim(job_id, "computing pair scores (token F1, grounding, both matchers)"):
        return None
    job = ConsoleJob.objects.get(pk=job_id)
    try:
        run, _ = services.extraction_run_import(dataset=job.dataset, raw=job.raw_run, source_name=job.source_name)
    except RunFormatError as exc:
        return _fail(job, str(exc))
    except Exception as exc:
        logger.exception("grading job %s failed", job_id)
        return _fail(job, f"{type(exc).__name__}: {exc}")
    ConsoleJob.objects.filter(pk=job.pk).update(
        status=ConsoleJob.Status.DONE,
        run=run,
        done=job.total,
        raw_run="",
        stage="graded",
        finished_at=timezone.now(),
    )
    job.refresh_from_db()
    return job


# ---------------------------------------------------------------------------
# Launch an extraction run


def extraction_job_create(
    *,
    sample: Sample,
    provider: str = "local",
    model_id: str = "",
    limit: int | None = None,
    max_requests: int | None = None,
    max_input_tokens: int | None = None,
    base_url: str = "",
    user=None,
    queue: bool = True,
) -> ConsoleJob:
    """A queued extraction job over the sample's contracts (the first ``limit`` of them, in manifest order)."""
    if provider not in PROVIDERS:
        raise JobError(f"provider {provider!r} is not one of {', '.join(PROVIDERS)}")
    contract_ids = selectors.sample_contract_ids(sample=sample)
    if limit is not None:
        if limit < 1:
            raise JobError("limit must be at least 1 contract")
        contract_ids = contract_ids[:limit]
    params: dict = {"contracts": len(contract_ids)}
    ledger_id = None
    if provider == "local":
        from grading.runs.local_extractor import MODEL_LABEL, extractor_params

        model_id = MODEL_LABEL
        params.update(extractor_params())
    else:
        if not model_id.strip():
            raise JobError(f"{provider} needs a model id (e.g. anthropic/claude-sonnet-4.6 on OpenRouter)")
        from reviewapp.providers import services as provider_services
        from reviewapp.providers.types import ProviderError

        lengths = dict(Contract.objects.filter(pk__in=contract_ids).values_list("id", "length"))
        too_long = [cid for cid in contract_ids if lengths[cid] > LLM_MAX_CONTRACT_CHARS]
        if too_long:
            raise JobError(f"{len(too_long)} contract(s) exceed {LLM_MAX_CONTRACT_CHARS} characters")
        # Conservative default budget: one request per contract, ~1 token per byte of contract and prompt.
        estimate = sum(lengths.values()) + 4000 * len(contract_ids)
        try:
            ledger = provider_services.ledger_create(
                purpose=f"cuad extraction on sample {sample.pk} (seed {sample.seed})",
                provider=provider,
                model_id=model_id.strip(),
                max_requests=max_requests or len(contract_ids),
                max_input_tokens=max_input_tokens or int(estimate * 1.5),
                base_url=base_url,
            )
        except ProviderError as exc:
            raise JobError(str(exc)) from exc
        ledger_id = ledger.pk
        params.update({"schema": EXTRACTION_SCHEMA_NAME, "answer": "verbatim quotes per clause type"})
    with transaction.atomic():
        job = ConsoleJob.objects.create(
            kind=ConsoleJob.Kind.EXTRACT,
            dataset=sample.dataset,
            sample=sample,
            provider=provider,
            model_id=model_id.strip(),
            params=params,
            ledger_id=ledger_id,
            total=len(contract_ids),
            stage="queued",
            created_by=user if getattr(user, "is_authenticated", False) else None,
        )
        JobContract.objects.bulk_create(
            [JobContract(job=job, contract_id=cid, position=i) for i, cid in enumerate(contract_ids)]
        )
        if queue:
            _queue(job)
    return job


def job_resume(
    *, job: ConsoleJob, reattempt: bool = False, queue: bool = True, worker_lost: bool = False,
    only_if_stale: bool = False,
) -> ConsoleJob:
    """Queue a failed (or stopped) job again; done contracts are skipped. ``reattempt`` re-sends failed requests.

    ``worker_lost``: the person knows the worker died mid-job (killed, machine restarted), so a job still marked
    running may be resumed too. Its requests left without an answer turn 'unknown' and are not re-sent unless
    re-attempted; even if the worker were alive, a request is never sent twice: each (request, attempt) has
    one receipt, written before sending, and a second writer's insert fails.

    ``only_if_stale`` (the console page's "worker seems to have stopped" action): a running job is resumed only
    when its heartbeat is older than ``stale_after()``; otherwise JobError says since when it last progressed.
    """
    job.refresh_from_db()
    resumable = [ConsoleJob.Status.FAILED] + ([ConsoleJob.Status.RUNNING] if worker_lost else [])
    if job.status not in resumable:
        raise JobError(f"job {job.pk} is {job.status}; only a failed or stopped job can be resumed")
    if only_if_stale and job.status == ConsoleJob.Status.RUNNING and not is_stale(job):
        raise JobError(not_stale_message(f"job {job.pk}", job))
    params = {**job.params, "reattempt": bool(reattempt)}
    rows = ConsoleJob.objects.filter(pk=job.pk, status__in=resumable)
    if only_if_stale:  # the same test inside the UPDATE: a worker that beats meanwhile keeps its job
        rows = rows.filter(stale_filter(ConsoleJob.Status))
    changed = rows.update(
        status=ConsoleJob.Status.QUEUED, params=params, stage="queued again (resume)", error=""
    )
    if not changed:
        raise JobError(f"job {job.pk} changed meanwhile; reload")
    job.refresh_from_db()
    if queue:
        _queue(job)
    return job


def job_extract_execute(*, job_id: int) -> ConsoleJob | None:
    """Task body: extract every contract not yet done, then import the run. Claimed; safe to run twice."""
    if not _claim(job_id, "extracting"):
        return None
    job = ConsoleJob.objects.select_related("sample").get(pk=job_id)
    try:
        if job.provider == "local":
            _extract_local(job)
        else:
            failures = _extract_llm(job)
            if failures:
                return _fail(job, failures)
        return _finish_extraction(job)
    except Exception as exc:
        logger.exception("extraction job %s failed", job_id)
        return _fail(job, f"{type(exc).__name__}: {exc}")


def _extract_local(job: ConsoleJob) -> None:
    from grading.runs.local_extractor import LocalExtractor

    categories = [(c.name, c.description) for c in selectors.dataset_categories(dataset=job.dataset)]
    p = job.params  # as recorded at launch, so a resumed job keeps its settings
    extractor = LocalExtractor(
        categories, threshold=p["threshold"], per_type=p["per_type"], max_passages=p["max_passages"]
    )
    for jc in job.contracts.filter(done=False).select_related("contract").order_by("position"):
        result = extractor.extract(jc.contract.text)
        jc.extractions = [
            {"category": f.category, "text": f.text, "start": f.start, "end": f.end, "score": round(f.score, 4)}
            for f in result.found
        ]
        jc.passages, jc.embedded, jc.seconds, jc.done = result.passages, result.embedded, result.seconds, True
        with transaction.atomic():
            jc.save(update_fields=["extractions", "passages", "embedded", "seconds", "done"])
            ConsoleJob.objects.filter(pk=job.pk).update(
                done=F("done") + 1,
                stage=f"extracted {jc.position + 1} of {job.total}: {jc.contract.title[:80]}",
                heartbeat_at=timezone.now(),
            )


def extraction_schema(categories: list[str]) -> dict:
    """Strict JSON schema of the structured answer: verbatim quotes, each with its clause type."""
    return {
        "type": "object",
        "properties": {
            "extractions": {
                "type": "array",
                "items": {
                    "type": "object",
                    "properties": {
                        "category": {"type": "string", "enum": categories},
                        "quote": {"type": "string"},
                    },
                    "required": ["category", "quote"],
                    "additionalProperties": False,
                },
            }
        },
        "required": ["extractions"],
        "additionalProperties": False,
    }


def extraction_prompt(*, title: str, text: str, categories: list[tuple[str, str]]) -> str:
    types = "\n".join(f"- {name}: {description}" for name, description in categories)
    return f"Clause types:\n{types}\n\nContract ({title}):\n<contract>\n{text}\n</contract>"


def _extract_llm(job: ConsoleJob) -> str:
    """Send one structured request per contract through the job's ledger; returns a failure summary or ''."""
    from reviewapp.providers import clients
    from reviewapp.providers import services as provider_services
    from reviewapp.providers.models import Ledger
    from reviewapp.providers.types import StructuredSpec

    ledger = Ledger.objects.get(pk=job.ledger_id)
    client = clients.client_for_ledger(ledger, transport=_transport_override)
    cats = selectors.dataset_categories(dataset=job.dataset)
    names = [c.name for c in cats]
    pairs = [(c.name, c.description) for c in cats]
    schema = extraction_schema(names)
    members = list(job.contracts.select_related("contract").order_by("position"))
    requests = [
        client.prepare_structured(
            StructuredSpec(
                system=SYSTEM_PROMPT,
                user=extraction_prompt(title=m.contract.title, text=m.contract.text, categories=pairs),
                schema_name=EXTRACTION_SCHEMA_NAME,
                schema=schema,
                max_tokens=8192,
            )
        )
        for m in members
    ]
    keys = [r.key for r in requests]

    def on_result(result) -> None:
        member = members[result.index]
        if member.done:
            return
        if result.status == "answered" and result.parse is not None:
            quotes = [q for q in result.parse.data.get("extractions", []) if str(q.get("quote", "")).strip()]
            member.extractions = [{"category": q["category"], "text": q["quote"]} for q in quotes]
            member.done, member.error = True, ""
            ConsoleJob.objects.filter(pk=job.pk).update(
                done=F("done") + 1, stage=f"answered {member.position + 1} of {job.total}", heartbeat_at=timezone.now()
            )
        else:
            member.error = f"{result.status}: {result.error}"[:2000]
        member.save(update_fields=["extractions", "done", "error"])

    reattempt = keys if job.params.get("reattempt") else ()
    try:
        report = provider_services.ledger_execute(
            ledger=ledger, client=client, requests=requests, reattempt_keys=reattempt, on_result=on_result,
            should_stop=lambda: _beat(job.pk),
        )
    finally:
        client.close()  # its connection pool; the audit's judges close theirs the same way
    missing = [m for m in members if not m.done]
    if not missing:
        return ""
    counts = ", ".join(f"{k} {v}" for k, v in sorted(report.counts.items()) if k != "answered")
    stop = f"; stopped: {report.stop_reason}" if report.stop_reason else ""
    return (
        f"{len(missing)} of {len(members)} contracts have no answer ({counts}){stop}. Failed requests are never "
        "re-sent automatically: resume with 're-attempt failed requests' to send them again "
        "(each re-attempt counts against the budget)."
    )


_transport_override = None  # tests point the HTTP clients at an httpx transport of their own


def _finish_extraction(job: ConsoleJob) -> ConsoleJob:
    ConsoleJob.objects.filter(pk=job.pk).update(stage="grading: computing pair scores", heartbeat_at=timezone.now())
    titles = dict(Contract.objects.filter(pk__in=job.contracts.values("contract_id")).values_list("id", "title"))
    extractions = [
        {"contract": titles[jc.contract_id], "category": e["category"], "text": e["text"]}
        for jc in job.contracts.order_by("position")
        for e in jc.extractions
    ]
    if not extractions:
        return _fail(job, "the extractor found nothing in any contract; no run was stored")
    raw = json.dumps({"model": job.model_id, "extractions": extractions}, ensure_ascii=False)
    run, _ = services.extraction_run_import(dataset=job.dataset, raw=raw, source_name=f"console job {job.pk}")
    ConsoleJob.objects.filter(pk=job.pk).update(
        status=ConsoleJob.Status.DONE, run=run, stage="done", finished_at=timezone.now()
    )
    job.refresh_from_db()
    return job


# ---------------------------------------------------------------------------
# Helpers


def _claim(job_id: int, stage: str) -> bool:
    """queued -> running, exactly once (another worker, or a second delivery, gets 0 rows and stops)."""
    now = timezone.now()
    return bool(
        ConsoleJob.objects.filter(pk=job_id, status=ConsoleJob.Status.QUEUED).update(
            status=ConsoleJob.Status.RUNNING, started_at=now, heartbeat_at=now, stage=stage
        )
    )


def _beat(job_id: int) -> str:
    """The executor is alive (called before every provider request); never asks it to stop."""
    ConsoleJob.objects.filter(pk=job_id, status=ConsoleJob.Status.RUNNING).update(heartbeat_at=timezone.now())
    return ""


# ---------------------------------------------------------------------------
# Staleness: a "running" job or audit whose worker died (shared with grading.audits.services)


def stale_after() -> timedelta:
    """A running job or audit silent for longer than this has presumably lost its worker.

    Its executor beats before every provider request and after every answer (or contract, for the local
    extractor); a request lasts at most PROVIDER_TIMEOUT_SECONDS, so a live executor is never silent longer
    than that. Default, as for rerank runs (benchmarks.rerank.services.stale_after): twice the timeout, at least 120 s;
    settings.CUAD_STALE_SECONDS overrides it.
    """
    default = max(120, 2 * int(getattr(settings, "PROVIDER_TIMEOUT_SECONDS", 60)))
    return timedelta(seconds=int(getattr(settings, "CUAD_STALE_SECONDS", default)))


def last_progress(obj) -> datetime | None:
    """When a job or audit last showed life: its heartbeat, else (rows from before heartbeats) its start."""
    return obj.heartbeat_at or obj.started_at


def is_stale(obj) -> bool:
    """Running, and no progress for longer than ``stale_after()``."""
    seen = last_progress(obj)
    return obj.status == "running" and (seen is None or seen < timezone.now() - stale_after())


def stale_filter(status) -> Q:
    """The rows ``is_stale`` accepts, plus every non-running row (for a conditional UPDATE)."""
    cutoff = timezone.now() - stale_after()
    old = Q(heartbeat_at__lt=cutoff) | Q(heartbeat_at__isnull=True, started_at__lt=cutoff) | Q(
        heartbeat_at__isnull=True, started_at__isnull=True
    )
    return ~Q(status=status.RUNNING) | old


def not_stale_message(what: str, obj) -> str:
    seen = last_progress(obj)
    since = timezone.localtime(seen).strftime("%Y-%m-%d %H:%M:%S") if seen else "its start"
    return (
        f"{what} is still running and made progress at {since} (less than {int(stale_after().total_seconds())} s "
        "ago): its worker looks alive, so it was not resumed. Try again if it stays silent."
    )


def _fail(job: ConsoleJob, message: str) -> ConsoleJob:
    ConsoleJob.objects.filter(pk=job.pk).update(
        status=ConsoleJob.Status.FAILED, error=message[:10000], stage="failed", finished_at=timezone.now()
    )
    job.refresh_from_db()
    return job


def _task_for(job: ConsoleJob):
    from grading.runs import tasks

    return tasks.extract_run if job.kind == ConsoleJob.Kind.EXTRACT else tasks.grade_run


def _queue(job: ConsoleJob) -> None:
    transaction.on_commit(lambda: _task_for(job).delay(job.pk))
