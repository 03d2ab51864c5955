from __future__ import annotations

from django.core.management.base import BaseCommand, CommandError

from grading.dataset.cuad_file import CuadFileError
from grading.dataset.services import CuadLoadError, cuad_load


class Command(BaseCommand):
    help = "Load the official CUAD v1 (CUAD_v1.json or the CUAD_v1.zip holding it); every span is checked. Idempotent."

    # No system checks before it runs: they import the whole URL config (every view, the API schema tooling),
    # ~0.5 s of CPU in a command that reads one file and writes rows. `manage.py check` and CI run them.
    requires_system_checks: list[str] = []

    def add_arguments(self, parser):
        parser.add_argument("path", help="CUAD_v1.json or CUAD_v1.zip")

    def handle(self, *args, path: str, **options):
        try:
            result = cuad_load(path=path)
        except (CuadFileError, CuadLoadError) as exc:
            raise CommandError(str(exc)) from exc
        d = result.dataset
        verb = "loaded" if result.created else "already loaded"
        self.stdout.write(
            f"{verb}: {d.source_name} sha256 {d.sha256}: {d.n_contracts} contracts, "
            f"{d.categories.count()} categories, {d.n_spans} spans (all checked against their text) "
            f"in {result.seconds:.2f} s"
        )
