"""manage.py export_gold --set NAME [--version N] --out FILE [--format cuad|csv]"""

from __future__ import annotations

from pathlib import Path

from django.core.management.base import BaseCommand, CommandError

from grading.contracts.gold.exports import GoldExportError, gold_csv, gold_cuad_json
from grading.contracts.gold.selectors import GoldSetMissing, gold_set_by_name


class Command(BaseCommand):
    help = ("Write a frozen gold set of a contract set as CUAD's own JSON (what load_cuad and grade_cuad --cuad read) "
            "or as CSV (one row per contract x category x span). Default: the latest version.")

    requires_system_checks: list[str] = []

    def create_parser(self, prog_name, subcommand, **kwargs):
        # `--version N` names the gold set version (the interface the issue fixes); Django's own --version (its
        # release) is replaced rather than refused as a conflict.
        return super().create_parser(prog_name, subcommand, conflict_handler="resolve", **kwargs)

    def add_arguments(self, parser):
        parser.add_argument("--set", required=True, dest="set_name", help="the contract set's name")
        parser.add_argument("--version", type=int, default=None, help="the gold set version (default: the latest)")
        parser.add_argument("--out", required=True, help="the file to write")
        parser.add_argument("--format", choices=("cuad", "csv"), default="cuad")

    def handle(self, *args, **o):
        try:
            gold_set = gold_set_by_name(name=o["set_name"], version=o["version"])
            body = gold_csv(gold_set) if o["format"] == "csv" else gold_cuad_json(gold_set)
        except (GoldSetMissing, GoldExportError) as exc:
            raise CommandError(str(exc)) from exc
        out = Path(o["out"])
        try:
            out.write_bytes(body)
        except OSError as exc:
            raise CommandError(f"{out}: {exc.strerror}") from exc
        counts = gold_set.counts
        self.stdout.write(
            f"wrote {out} ({o['format']}, {len(body)} bytes): {gold_set.contract_set.name} gold v{gold_set.version} "
            f"sha256 {gold_set.sha256}, {counts.get('contracts')} contracts x {counts.get('categories')} categories, "
            f"{counts.get('spans')} spans"
        )
