"""Validate and freeze a suite file (JSON or YAML)."""

from __future__ import annotations

from pathlib import Path

from django.core.management.base import BaseCommand, CommandError

from benchmarks.suites.files import SuiteInvalid
from benchmarks.suites.services import suite_import


class Command(BaseCommand):
    help = "Validate and freeze a benchmark suite file (see benchmarks/suites/README.md)."

    def add_arguments(self, parser):
        parser.add_argument("file", type=Path)
        parser.add_argument("--frozen-by", default="", help="who froze it (recorded)")

    def handle(self, *args, file: Path, frozen_by: str, **options):
        if not file.is_file():
            raise CommandError(f"{file}: no such file")
        try:
            suite, created = suite_import(raw=file.read_bytes(), filename=str(file), frozen_by=frozen_by)
        except SuiteInvalid as exc:
            raise CommandError(str(exc)) from exc
        verb = "frozen" if created else "already frozen (no-op)"
        self.stdout.write(f"{verb}: {suite} sha256={suite.sha256} sources={suite.sources_sha256[:16]}… "
                          f"{suite.queries.count()} queries")
