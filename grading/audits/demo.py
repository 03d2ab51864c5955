"""Demo data for the CUAD label audit (call after ``grading.demo.load_demo``): the local-extractor run audited
by the two local heuristic judges. Idempotent.

The demo's local heuristic-baseline extraction is a Celery job (``grading.runs.demo``); when it has not
finished yet, the audit is launched on the job and waits for its run (it looks again every 15 s on the
worker). Measured on the seed-42, 100-contract sample (2 cores): extraction about 3 minutes, then the audit
flags ~800 candidates and both local judges rule on all of them in about 45 s (the MiniLM embeddings of
each candidate and of 12 CUAD examples per clause type).
"""

from __future__ import annotations

import pathlib

from grading.audits.judging.judges import DESCRIPTION, EXEMPLARS_METHOD, parse_choice
from grading.audits.services import audit_create
from grading.dataset.models import Sample
from grading.dataset.selectors import dataset_current
from grading.runs.demo import load_console_demo
from grading.runs.models import ConsoleJob


def _local_job(sample: Sample) -> ConsoleJob | None:
    return (
        ConsoleJob.objects.filter(kind=ConsoleJob.Kind.EXTRACT, provider="local", sample=sample)
        .exclude(status=ConsoleJob.Status.FAILED)
        .order_by("created_at", "id")
        .first()
    )


def load_audit_demo(*, data_dir: pathlib.Path, stdout) -> None:
    dataset = dataset_current()
    sample = Sample.objects.filter(dataset=dataset).order_by("-created_at", "-id").first() if dataset else None
    if sample is None:
        stdout.write("grading audit: no sample; run grading.demo.load_demo first\n")
        return
    job = _local_job(sample)
    if job is None:
        # The console demo queues the local extraction job (idempotently); the audit needs its run.

        load_console_demo(data_dir=data_dir, stdout=stdout)
        job = _local_job(sample)
    if job is None:
        stdout.write("grading audit: no local extraction job to audit\n")
        return
    audit, created = audit_create(
        run=job.run if job.run_id else None,
        job=None if job.run_id else job,
        sample=sample,
        judge_a=parse_choice(DESCRIPTION),
        judge_b=parse_choice(EXEMPLARS_METHOD),
    )
    target = f"run #{audit.run_id}" if audit.run_id else f"the run of extraction job #{job.pk} (when it finishes)"
    verb = "queued" if created else f"already {audit.status}"
    stdout.write(
        f"grading audit: label audit #{audit.pk} of {target} with the two local heuristic judges {verb}; "
        f"page /cuad/audits/{audit.pk}/\n"
    )
