"""Run an offline CUAD baseline on a sample and store it as a graded run (no provider, no worker)."""

from __future__ import annotations

from django.core.management.base import BaseCommand, CommandError

from grading.baselines.services import BASELINES, baseline_run_create
from grading.dataset.models import Sample
from grading.dataset.selectors import sample_default


class Command(BaseCommand):
    help = (
        "Build an offline CUAD baseline on a sample and import it as an extraction run: --system nearest "
        "(nearest labelled example, TF-IDF, cross-validated by contract) or rules (clause-heading/keyword rules). "
        "The local MiniLM extractor is `extract_cuad --provider local`."
    )

    def add_arguments(self, parser):
        parser.add_argument("--system", choices=BASELINES, action="append",
                            help="the baseline(s) to build (default: all of them)")
        parser.add_argument("--sample", type=int, default=None, help="sample id (default: the latest sample)")
        parser.add_argument("--rebuild", action="store_true",
                            help="build again even when this sample already has the baseline's run")

    def handle(self, *args, **o):
        sample = Sample.objects.filter(pk=o["sample"]).first() if o["sample"] else sample_default()
        if sample is None:
            raise CommandError(f"no sample {o['sample']}" if o["sample"] else "no sample: run sample_cuad first")
        for key in o["system"] or BASELINES:
            result = baseline_run_create(sample=sample, key=key, rebuild=o["rebuild"])
            verb = "stored" if result.created else "already stored"
            self.stdout.write(
                f"{result.system.name}: run #{result.run.pk} {verb} ({result.run.n_extractions} extractions"
                f"{f', built in {result.seconds:.1f} s' if result.seconds else ''}) on sample #{sample.pk}\n"
                f"  {result.system.line}"
            )
