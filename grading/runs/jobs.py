"""Writes for the CUAD console: paste/upload a run, launch an extraction run, execute and resume jobs.

Thin over ``grading.runs.services`` (validation, pair scores, storage of runs) and
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
  (a resume with re-attempt: ``manage.py finish_job extraction <id> --reattempt``), which counts against the budget.
"""

from __future__ import annotations

import json
import logging
from dataclasses import dataclass

from django.db import transaction
from django.db.models import F

from grading.dataset import selectors
from grading.dataset.models import Contract, CuadDataset, Sample
from grading.runs import services
from grading.runs.models import ConsoleJob, ExtractionRun, JobContract
from grading.runs.run_format import ParsedRun, RunFormatError
from reviewapp.core.jobs import (
    ClaimLost,
    job_beat,
    job_beat_or_stop,
    job_claim,
    job_enqueue,
    job_execution_error,
    job_fail,
    job_finish,
    job_incomplete_message,
    job_interrupted,
)
from reviewapp.jobs.controls import job_finish_command
from reviewapp.providers import clients
from reviewapp.providers import services as provider_services
from reviewapp.providers.selectors import ledger_get
from reviewapp.providers.spend.preflight import provider_preflight
from reviewapp.providers.types import SIMULATED_LABEL, ProviderError, StructuredSpec

CLAIM_LOST = "claim lost: another execution holds this job"

logger = logging.getLogger(__name__)

INLINE_LIMIT = 2000  # a pasted run up to this many extractions is graded in the request; larger ones on Celery
PROVIDERS = ("local", "openai_compatible", "anthropic")
LLM_MAX_CONTRACT_CHARS = 400_000  # CUAD's longest contract is 338k characters; never truncate silently
EXTRACTION_SCHEMA_NAME = "cuad_extractions"
MAX_ANSWER_TOKENS = 8192
# An answer of verbatim quotes longer than about twice its contract (a token is ~4 characters) repeats itself: small
# models held to a schema by a grammar loop until max_tokens. Capped per contract, the loop ends as a truncated answer
# (named on the receipt) instead of minutes of generation. Recorded in the job's params: a job created before keeps
# its requests (and so its request keys) as they were.
ANSWER_CAP_RULE = "min(8192, 256 + contract characters // 2)"


def answer_tokens(*, text: str, rule: str) -> int:
    """The max_tokens of a contract's extraction request under the job's recorded rule."""
    return min(MAX_ANSWER_TOKENS, 256 + len(text) // 2) if rule == ANSWER_CAP_RULE else MAX_ANSWER_TOKENS

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
    token = job_claim(ConsoleJob, pk=job_id, stage="computing pair scores (token F1, grounding, both matchers)")
    if not token:
        return None
    job = ConsoleJob.objects.get(pk=job_id)
    try:
        run, _ = services.extraction_run_import(dataset=job.dataset, raw=job.raw_run, source_name=job.source_name)
    except RunFormatError as exc:
        return _fail(job, token, str(exc))
    except Exception as exc:
        if job_interrupted(ConsoleJob, pk=job_id, error=exc):
            return None
        logger.exception("grading job %s failed", job_id)
        return _fail(job, token, f"{type(exc).__name__}: {exc}")
    job_finish(ConsoleJob, pk=job.pk, token=token, status=ConsoleJob.Status.DONE, run=run, done=job.total,
               raw_run="", stage="graded")
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
    contract_ids: list[int] | None = None,
    concurrency: int = 4,
    user=None,
    queue: bool = True,
) -> ConsoleJob:
    """A queued extraction job over the sample's contracts (the first ``limit`` of them, in manifest order).

    ``contract_ids``: only these contracts of the sample (kept in manifest order), e.g. those that fit a small
    model's context; the run then declares exactly them as its scope, and every page ranks it on them only.
    ``concurrency``: requests in flight at once (1 for a server that computes one answer at a time, so no request
    waits behind others past its timeout).
    """
    if provider not in PROVIDERS:
        raise JobError(f"provider {provider!r} is not one of {', '.join(PROVIDERS)}")
    in_sample = selectors.sample_contract_ids(sample=sample)
    if contract_ids is not None:
        outside = sorted(set(contract_ids) - set(in_sample))
        if outside:
            raise JobError(f"contract_ids: {len(outside)} contract(s) are not in sample {sample.pk} "
                           f"(e.g. #{outside[0]})")
        wanted = set(contract_ids)
        in_sample = [cid for cid in in_sample if cid in wanted]
        if not in_sample:
            raise JobError("contract_ids: give at least one contract of the sample")
    contract_ids = in_sample
    if limit is not None:
        if limit < 1:
            raise JobError("limit must be at least 1 contract")
        contract_ids = contract_ids[:limit]
    params: dict = {"contracts": len(contract_ids)}
    ledger_id = None
    extraction_preflight(provider=provider, model_id=model_id, base_url=base_url)
    if provider == "local":
        # local import: local_extractor loads numpy; pages import the job module and extract nothing
        from grading.runs.local_extractor import MODEL_LABEL, extractor_params

        model_id = MODEL_LABEL
        params.update(extractor_params())
    else:
        if not model_id.strip():
            raise JobError(f"{provider} needs a model id (e.g. anthropic/claude-sonnet-4.6 on OpenRouter)")

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
                concurrency=concurrency,
            )
        except ProviderError as exc:
            raise JobError(str(exc)) from exc
        ledger_id = ledger.pk
        params.update({"schema": EXTRACTION_SCHEMA_NAME, "answer": "verbatim quotes per clause type",
                       "max_tokens": ANSWER_CAP_RULE})
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


def extraction_preflight(*, provider: str, model_id: str = "", base_url: str = "") -> None:
    """Is the provider configured on this server? JobError naming what is missing (the key's environment
    variable, a malformed base URL, no model id) before anything is created, queued or spent."""
    if provider not in PROVIDERS:
        raise JobError(f"provider {provider!r} is not one of {', '.join(PROVIDERS)}")
    if provider == "local":
        return  # the heuristic extractor runs on this machine and sends nothing

    if not model_id.strip():
        raise JobError(f"{provider} needs a model id (e.g. anthropic/claude-sonnet-4.6 on OpenRouter)")
    try:
        provider_preflight(provider=provider, model_id=model_id.strip(), base_url=base_url)
    except ProviderError as exc:
        raise JobError(str(exc)) from None


def job_extract_execute(*, job_id: int) -> ConsoleJob | None:
    """Task body: extract every contract not yet done, then import the run. Claimed; safe to run twice."""
    token = job_claim(ConsoleJob, pk=job_id, stage="extracting")
    if not token:
        return None
    job = ConsoleJob.objects.select_related("sample").get(pk=job_id)
    try:
        if job.provider == "local":
            _extract_local(job, token)
        else:
            failures = _extract_llm(job, token)
            if failures:
                return _fail(job, token, failures)
        return _finish_extraction(job, token)
    except Exception as exc:
        failed = job_execution_error(ConsoleJob, pk=job_id, token=token, error=exc, what=f"extraction job {job_id}")
        return ConsoleJob.objects.get(pk=job_id) if failed else None


def _extract_local(job: ConsoleJob, token: str) -> None:
    # local import: local_extractor loads numpy; pages import the job module and extract nothing
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
        with transaction.atomic():  # progress and the contract's result together, or neither
            job_beat_or_stop(ConsoleJob, pk=job.pk, token=token, done=F("done") + 1,
                             stage=f"extracted {jc.position + 1} of {job.total}: {jc.contract.title[:80]}")
            jc.save(update_fields=["extractions", "passages", "embedded", "seconds", "done"])


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


def _extract_llm(job: ConsoleJob, token: str) -> str:
    """Send one structured request per contract through the job's ledger; returns a failure summary or ''."""
    assert job.ledger_id is not None  # an LLM job is created with its ledger (only the local one has none)
    ledger = ledger_get(ledger_id=job.ledger_id)
    client = clients.client_for_ledger(ledger)
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
                max_tokens=answer_tokens(text=m.contract.text, rule=job.params.get("max_tokens", "")),
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
            with transaction.atomic():
                job_beat_or_stop(ConsoleJob, pk=job.pk, token=token, done=F("done") + 1,
                                 stage=f"answered {member.position + 1} of {job.total}")
                member.save(update_fields=["extractions", "done", "error"])
            return
        member.error = f"{result.status}: {result.error}"[:2000]
        with transaction.atomic():
            job_beat_or_stop(ConsoleJob, pk=job.pk, token=token)
            member.save(update_fields=["extractions", "done", "error"])

    reattempt = keys if job.params.get("reattempt") else ()
    try:
        report = provider_services.ledger_execute(
            ledger=ledger, client=client, requests=requests, reattempt_keys=reattempt, on_result=on_result,
            should_stop=lambda: "" if job_beat(ConsoleJob, pk=job.pk, token=token) else CLAIM_LOST,
        )
    finally:
        client.close()  # its connection pool; the audit's judges close theirs the same way
    missing = [m for m in members if not m.done]
    if not missing:
        return ""
    counts = ", ".join(f"{k} {v}" for k, v in sorted(report.counts.items()) if k != "answered")
    stop = f"; stopped: {report.stop_reason}" if report.stop_reason else ""
    problems = f"{len(missing)} of {len(members)} contracts have no answer ({counts}){stop}"
    return job_incomplete_message(problems=problems, finish_command=job_finish_command(job, ending=True))


def _finish_extraction(job: ConsoleJob, token: str) -> ConsoleJob:
    job_beat_or_stop(ConsoleJob, pk=job.pk, token=token, stage="grading: computing pair scores")
    titles = dict(Contract.objects.filter(pk__in=job.contracts.values("contract_id")).values_list("id", "title"))
    extractions = [
        {"contract": titles[jc.contract_id], "category": e["category"], "text": e["text"]}
        for jc in job.contracts.order_by("position")
        for e in jc.extractions
    ]
    if not extractions:
        return _fail(job, token, "the extractor found nothing in any contract; no run was stored")
    # The run's scope is what the job attempted: its contracts, including any where nothing was found.
    scope = sorted(titles.values())

    # A run answered by the loopback test server carries it in its name: every page, export, leaderboard and
    # summary that names the run then says so.
    model = f"{job.model_id} ({SIMULATED_LABEL})" if job.simulated else job.model_id
    raw = json.dumps({"model": model, "contracts": scope, "extractions": extractions}, ensure_ascii=False)
    run, _ = services.extraction_run_import(dataset=job.dataset, raw=raw, source_name=f"console job {job.pk}")
    if not job_finish(ConsoleJob, pk=job.pk, token=token, status=ConsoleJob.Status.DONE, run=run, stage="done"):
        raise ClaimLost(f"job {job.pk}: claim lost before it could finish; the run it imported is kept unlinked")
    job.refresh_from_db()
    return job


# ---------------------------------------------------------------------------
# Helpers


def _fail(job: ConsoleJob, token: str, message: str) -> ConsoleJob:
    job_fail(ConsoleJob, pk=job.pk, token=token, message=message, stage="failed")
    job.refresh_from_db()
    return job


def _queue(job: ConsoleJob) -> None:
    job_enqueue(job)
