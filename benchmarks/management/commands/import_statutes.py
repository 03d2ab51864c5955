"""Import official statute files (or snapshot an official URL) into immutable snapshots."""

from __future__ import annotations

from pathlib import Path

from django.core.management.base import BaseCommand, CommandError

from benchmarks.corpus import ParseError, services


class Command(BaseCommand):
    help = "Import statute sources: --format {nrs-html,hrs-json,uslm-xml} PATH... or --url URL."

    def add_arguments(self, parser):
        parser.add_argument("--format", required=True, choices=services.FORMATS, dest="fmt")
        parser.add_argument("paths", nargs="*", type=Path, help="files or directories")
        parser.add_argument("--url", action="append", default=[], help="official URL to fetch and snapshot")
        parser.add_argument("--hrs-index", default="", help="index-meta.json path (or URL with --url)")

    def handle(self, *args, fmt, paths, url, hrs_index, **options):
        if not paths and not url:
            raise CommandError("give at least one PATH or --url")
        try:
            outcomes = []
            if paths:
                outcomes += services.statutes_import(fmt=fmt, paths=paths,
                                                     hrs_index=Path(hrs_index) if hrs_index and not url else None)
            for one in url:
                outcomes += services.statutes_import_url(fmt=fmt, url=one, hrs_index_url=hrs_index)
        except (services.ImportProblem, ParseError) as exc:
            raise CommandError(str(exc)) from exc
        for outcome in outcomes:
            snap = outcome.snapshot
            verb = "imported" if outcome.created else "unchanged (no-op)"
            self.stdout.write(f"{verb}: {snap.corpus} {snap.source_key} sha256={snap.sha256[:16]}… "
                              f"{snap.provision_count} sections, parser {snap.parser_name} v{snap.parser_version}")
