"""Demo data for the CUAD grader: the real CUAD (idempotent), the seed-42, 100-contract sample, and on it the
three offline systems (the local extractor's job, the nearest-labelled-example and rule baselines); with the bundled
model server that ``make demo`` starts, the real model as a fourth, on the contracts that fit its context."""

from __future__ import annotations

import pathlib
import time

from grading.audits.demo import load_audit_demo
from grading.audits.judging.judges import EXEMPLARS_METHOD, LLM, JudgeChoice, parse_choice
from grading.audits.services import AuditError, audit_create, audit_execute
from grading.baselines.demo import load_baselines_demo
from grading.dataset.models import Contract
from grading.dataset.selectors import sample_contract_ids
from grading.dataset.services import cuad_load, sample_create
from grading.runs.demo import load_console_demo
from grading.runs.jobs import JobError, extraction_job_create, job_extract_execute
from grading.runs.models import ConsoleJob
from reviewapp.providers.model_server import served_model_id
from reviewapp.providers.model_server.process import demo_server
from reviewapp.providers.selectors import ledger_setup

DEMO_SAMPLE = {"n": 100, "min_per_type": 30, "seed": 42}


def load_demo(*, data_dir: pathlib.Path, stdout) -> None:
    result = cuad_load(path=pathlib.Path(data_dir) / "cuad" / "CUAD_v1.json")
    d = result.dataset
    verb = "loaded" if result.created else "already loaded"
    stdout.write(f"grading: CUAD {verb} ({d.n_contracts} contracts, {d.n_spans} spans, {result.seconds:.1f} s)\n")
    sample, created = sample_create(dataset=d, **DEMO_SAMPLE)
    stdout.write(
        f"grading: sample n={sample.n} seed={sample.seed} {'created' if created else 'present'}"
        f" (manifest sha256 {sample.manifest_sha256[:12]})\n"
    )
    # The console: a synthetic comparison run graded now, and the local heuristic extraction job queued.

    load_console_demo(data_dir=data_dir, stdout=stdout)
    # The two other offline systems of the CUAD leaderboard, built here in seconds (no worker needed).

    load_baselines_demo(sample=sample, stdout=stdout)
    # The label audit of the local-extractor run (launched when that extraction job has finished).

    load_audit_demo(data_dir=data_dir, stdout=stdout)
    # The fourth system: the bundled real model, when `make demo` started its server.
    load_model_demo(sample=sample, stdout=stdout)



# The real model's scope: the sample's contracts whose request fits SmolLM2's 8,192-token context with room to answer:
# the prompt without a contract is 1,541 tokens (41 clause types with CUAD's descriptions) and CUAD averages 4.5
# characters per token, so a 16,000-character contract leaves ~3,000 tokens for the answer. Of the whole CUAD 240 of
# 510 contracts fit the context at all (the largest 33,577 characters); of the seed-42 sample, 3 are this short, the
# fewest that give an interval. On a busy 2-core machine the model reads ~30 tokens/s, so each takes one to three
# minutes; the leaderboard says the run covers only these.
MODEL_MAX_CHARS = 16_000
MODEL_CONTRACTS = 3


def load_model_demo(*, sample, stdout) -> None:
    """The bundled real model (SmolLM2-135M on llama.cpp) extracting from the sample's contracts that fit its context,
    then auditing its own run as one judge beside the local exemplars heuristic. Idempotent; skipped without a server.

    Its run covers only those contracts (its declared scope), so a leaderboard that includes it compares every run on
    them and says so; the contracts too long for the model are left out before anything is sent, never truncated.
    """
    model_id = served_model_id()
    job = (ConsoleJob.objects.filter(kind=ConsoleJob.Kind.EXTRACT, sample=sample, provider="openai_compatible",
                                     model_id=model_id).exclude(status=ConsoleJob.Status.FAILED).order_by("id").first())
    if job is None:
        base_url = demo_server(stdout=stdout, what="grading: real-model extraction")
        if not base_url:
            return
        lengths = dict(Contract.objects.filter(pk__in=sample_contract_ids(sample=sample)).values_list("id", "length"))
        fits = [cid for cid in sample_contract_ids(sample=sample) if lengths[cid] <= MODEL_MAX_CHARS]
        chosen = fits[:MODEL_CONTRACTS]
        started = time.perf_counter()
        try:
            job = extraction_job_create(sample=sample, provider="openai_compatible", model_id=model_id,
                                        base_url=base_url, contract_ids=chosen, concurrency=1, queue=False)
        except JobError as error:
            stdout.write(f"grading: real-model extraction not created ({error})\n")
            return
        job = job_extract_execute(job_id=job.pk) or job
        job.refresh_from_db()
        stdout.write(f"grading: real-model extraction job #{job.pk} ({model_id}) {job.status} in "
                     f"{time.perf_counter() - started:.0f} s on {len(chosen)} of the sample's {len(lengths)} "
                     f"contracts ({len(fits)} are at most {MODEL_MAX_CHARS} characters and fit its context)"
                     + (f"; {job.error}" if job.error else "") + "\n")
    else:
        stdout.write(f"grading: real-model extraction job #{job.pk} ({model_id}) {job.status}\n")
    if job.status != ConsoleJob.Status.DONE or not job.run_id:
        return
    # The judge asks the server the run's own ledger pinned.
    judge = JudgeChoice("openai_compatible", model_id, LLM, ledger_setup(ledger_id=job.ledger_id)["base_url"])
    try:
        audit, created = audit_create(run=job.run, sample=sample, judge_a=judge,
                                      judge_b=parse_choice(EXEMPLARS_METHOD), queue=False)
    except AuditError as error:
        stdout.write(f"grading: real-model audit not created ({error})\n")
        return
    if created:
        audit = audit_execute(audit_id=audit.pk) or audit
    stdout.write(f"grading: label audit #{audit.pk} of the real model's run #{job.run_id} (judges: the model and "
                 f"local-exemplars) {audit.status}; page /cuad/audits/{audit.pk}/\n")
