"""manage.py import_all IN.jsonl: restore a backup made by export_all into an empty database."""

from __future__ import annotations

from pathlib import Path

from django.core.management.base import BaseCommand, CommandError

from reviewapp.core.backup import BackupError, backup_import


class Command(BaseCommand):
    help = ("Restore a backup written by export_all into an EMPTY database (run 'manage.py migrate' first). "
            "Primary keys are kept, so every hash, export and report figure is identical; the restore is one "
            "transaction and a cut or edited file is refused with nothing written.")

    def add_arguments(self, parser):
        parser.add_argument("path", help="backup file written by export_all")

    def handle(self, *args, path: str, **options):
        file = Path(path)
        if not file.is_file():
            raise CommandError(f"{file}: no such file")
        try:
            with file.open("rb") as handle:
                summary = backup_import(lines=handle)
        except BackupError as error:
            raise CommandError(f"{file}: {error}") from error
        for label, n in summary.counts.items():
            if n:
                self.stdout.write(f"  {label:<36} {n:>9}")
        self.stdout.write(self.style.SUCCESS(
            f"restored {sum(summary.counts.values())} rows from {file} (sha256 {summary.sha256})"))
