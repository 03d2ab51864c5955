"""Launch an extraction run on a CUAD sample (the console's "Launch" form, from a shell)."""

from __future__ import annotations

import time

from django.core.management.base import BaseCommand, CommandError

from grading.dataset.models import Sample
from grading.dataset.selectors import dataset_get, sample_default
from grading.runs.jobs import PROVIDERS, JobError, extraction_job_create, job_extract_execute
from grading.runs.models import ConsoleJob
from reviewapp.jobs.controls import job_finish_command


class Command(BaseCommand):
    help = (
        "Extract clauses from a CUAD sample on Celery: --provider local (offline heuristic baseline, MiniLM ONNX), "
        "openai_compatible or anthropic (structured verbatim quotes, receipts, budget, no automatic retries)."
    )

    def add_arguments(self, parser):
        parser.add_argument("--provider", choices=PROVIDERS, default="local")
        parser.add_argument("--model", default="", help="model id for openai_compatible / anthropic")
        parser.add_argument("--sample", type=int, default=None, help="sample id (default: the latest sample)")
        parser.add_argument("--limit", type=int, default=None, help="only the first N contracts of the sample")
        parser.add_argument("--max-requests", type=int, default=None, help="budget: attempted requests")
        parser.add_argument("--max-input-tokens", type=int, default=None, help="budget: reported input tokens")
        parser.add_argument("--base-url", default="", help="endpoint base (default from settings; no credentials)")
        parser.add_argument("--inline", action="store_true", help="run in this process instead of on a worker")
        parser.add_argument("--wait", action="store_true", help="wait for the worker and print the outcome")
        parser.add_argument("--dataset", default=None, metavar="ID",
                            help="extract on this loaded dataset's sample (e.g. a firm's gold set: all its contracts)")

    def handle(self, *args, **o):
        sample = (
            Sample.objects.filter(pk=o["sample"]).first()
            if o["sample"]
            else sample_default(dataset=dataset_get(dataset_id=o["dataset"])) if o["dataset"]
            else sample_default()
        )
        if sample is None:
            raise CommandError("no sample; run load_cuad and sample_cuad (or make demo) first")
        try:
            job = extraction_job_create(
                sample=sample,
                provider=o["provider"],
                model_id=o["model"],
                limit=o["limit"],
                max_requests=o["max_requests"],
                max_input_tokens=o["max_input_tokens"],
                base_url=o["base_url"],
                queue=not o["inline"],
            )
        except JobError as exc:
            raise CommandError(str(exc)) from exc
        where = job.provider_setup.get("base_url", "")
        self.stdout.write(f"job {job.pk}: {job.provider} {job.model_id}" + (f" at {where}" if where else "")
                          + f", {job.total} contracts")
        if o["inline"]:
            job_extract_execute(job_id=job.pk)
        elif o["wait"]:
            while not ConsoleJob.objects.get(pk=job.pk).is_finished:
                time.sleep(1)
        else:
            self.stdout.write(f"queued on the worker; progress at /cuad/runs/jobs/{job.pk}/")
            return
        job = ConsoleJob.objects.get(pk=job.pk)  # a fresh instance: provider_setup is read again
        self.stdout.write(f"job {job.pk} {job.status}: {job.stage}"
                          + ("; simulated provider (the loopback test server's answers, not a model's)"
                             if job.simulated else ""))
        if job.error:
            finish = job_finish_command(job)
            raise CommandError(job.error if "To finish:" in job.error or not finish
                               else f"{job.error} To finish: {finish}")
        self.stdout.write(f"run {job.run_id}: /cuad/scorecard/?run={job.run_id}")
