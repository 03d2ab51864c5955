from __future__ import annotations

import sys
from pathlib import Path

from django.core.management.base import BaseCommand, CommandError

from grading.contracts.extract import EXTENSIONS
from grading.contracts.services import contract_import, contract_set_get_or_create


def _files(paths: list[str]) -> list[Path]:
    """Files named, and the contract files (by extension) inside folders named, in a stable order."""
    found: list[Path] = []
    for raw in paths:
        path = Path(raw)
        if path.is_dir():
            found.extend(sorted(p for p in path.rglob("*") if p.is_file() and p.suffix.lower() in EXTENSIONS))
        else:
            found.append(path)
    return found


class Command(BaseCommand):
    help = ("Import a firm's contracts (PDF, DOCX, plain text, HTML; files or folders) into a contract set, "
            "created if new. Every readable file is imported; each refused file is named on stderr with its "
            "reason, one line a file. Exits 0 when at least one file imported or was already there.")

    requires_system_checks: list[str] = []

    def add_arguments(self, parser):
        parser.add_argument("paths", nargs="+", help="contract files or folders holding them")
        parser.add_argument("--set", dest="set_name", required=True, help="the contract set's name")

    def handle(self, *args, paths: list[str], set_name: str, **options):
        try:
            contract_set, created = contract_set_get_or_create(name=set_name, description="")
        except ValueError as exc:
            raise CommandError(str(exc)) from exc
        if created:
            self.stdout.write(f"created contract set {contract_set.name!r}")
        counts = {"imported": 0, "duplicate": 0, "refused": 0}
        for path in _files(paths):
            try:
                data = path.read_bytes()
            except OSError as exc:
                counts["refused"] += 1
                self.stderr.write(f"{path}: cannot be read ({exc.strerror or exc})")
                continue
            outcome = contract_import(contract_set=contract_set, filename=path.name, data=data)
            counts[outcome.status] += 1
            line = f"{path}: {outcome.detail}"
            (self.stderr if outcome.status == "refused" else self.stdout).write(line)
        self.stdout.write(f"{counts['imported']} imported, {counts['duplicate']} already in the set (nothing new "
                          f"stored), {counts['refused']} refused")
        if counts["imported"] + counts["duplicate"] == 0:
            sys.stdout.flush()
            raise CommandError("no file imported")
