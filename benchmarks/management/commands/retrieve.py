"""Make a keyword retrieval run for a frozen suite (bm25-v1 by default: the same on every database)."""

from __future__ import annotations

from django.core.management.base import BaseCommand, CommandError

from benchmarks.retrieval.engines import CONFIGURATIONS, DEFAULT_CONFIGURATION
from benchmarks.retrieval.selectors import retrieval_run_summary
from benchmarks.retrieval.services import retrieval_run_create
from benchmarks.suites.selectors import suite_latest


class Command(BaseCommand):
    help = "Retrieve k keyword candidates per query of a suite (NAME or NAME@VERSION)."

    def add_arguments(self, parser):
        parser.add_argument("--suite", required=True)
        parser.add_argument("--k", type=int, default=30)
        parser.add_argument("--config", default=DEFAULT_CONFIGURATION, choices=sorted(CONFIGURATIONS),
                            help=f"default {DEFAULT_CONFIGURATION} (engine-independent); keyword-v1 and heading-v1 "
                                 "are engine-dependent baselines")

    def handle(self, *args, suite: str, k: int, config: str, **options):
        found = suite_latest(name=suite)
        if found is None:
            raise CommandError(f"no frozen suite {suite!r}; import it with import_suite first")
        try:
            run = retrieval_run_create(suite=found, configuration=config, k=k)
        except ValueError as exc:
            raise CommandError(str(exc)) from exc
        summary = retrieval_run_summary(run=run)
        self.stdout.write(
            f"retrieval run #{run.pk}: {run.status} engine={run.engine} config={run.configuration} k={run.k} "
            f"queries={summary.queries} fallbacks={summary.fallbacks} short={summary.short} "
            f"failures={summary.failures} target coverage={summary.targets_found}/{summary.targets_total}"
        )
        if run.error:
            raise CommandError(f"run #{run.pk} failed: {run.error}")
