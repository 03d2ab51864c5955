from __future__ import annotations

from pathlib import Path

from django.conf import settings
from django.core.management.base import BaseCommand

from grading.scorecard.bench import run_benchmark


class Command(BaseCommand):
    help = "Time grading of a 100-contract, 41-category run and re-classification (writes to the current database)."

    def add_arguments(self, parser):
        parser.add_argument("--data-dir", default=None)

    def handle(self, *args, data_dir: str | None, **options):
        # Kept on the command for perf/cuad/bench_cuad_grading.py, which reports the headline figures.
        self.figures = run_benchmark(data_dir=Path(data_dir or settings.DATA_DIR), stdout=self.stdout)
