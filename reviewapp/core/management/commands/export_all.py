"""manage.py export_all OUT.jsonl: back up every label, judgment, receipt and run (see reviewapp/backup.py)."""

from __future__ import annotations

import sys
from pathlib import Path

from django.core.management.base import BaseCommand

from reviewapp.core.backup import backup_export


class Command(BaseCommand):
    help = ("Write a backup of everything people made (statute snapshots, suites, runs, receipts, CUAD data and "
            "grades, audits, review pools, judgments with every revision, users) to one JSON Lines file; "
            "'-' writes to stdout. Restore with import_all into an empty database.")

    def add_arguments(self, parser):
        parser.add_argument("out", help="file to write (.jsonl), or - for stdout")

    def handle(self, *args, out: str, **options):
        if out == "-":
            summary = backup_export(out=sys.stdout.buffer)
            sys.stdout.buffer.flush()
            return
        path = Path(out)
        partial = path.with_name(path.name + ".partial")
        with partial.open("wb") as handle:
            summary = backup_export(out=handle)
        partial.replace(path)  # a backup that stopped half-way never looks complete
        for label, n in summary.counts.items():
            if n:
                self.stdout.write(f"  {label:<36} {n:>9}")
        self.stdout.write(self.style.SUCCESS(
            f"wrote {path} ({sum(summary.counts.values())} rows, sha256 {summary.sha256})"))
