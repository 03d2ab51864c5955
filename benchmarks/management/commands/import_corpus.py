"""Import a corpus file (JSON Lines or CSV, one provision per line; docs/corpus-format.md) or an eCFR XML file as a
code's snapshot."""

from __future__ import annotations

from pathlib import Path

from django.core.management.base import BaseCommand, CommandError

from benchmarks.corpus import ParseError, services


class Command(BaseCommand):
    help = ("Import FILE (.jsonl or .csv, docs/corpus-format.md; or CFR XML, eCFR or the annual edition, .xml) as a "
            "snapshot of the code --code ID.")

    def add_arguments(self, parser):
        parser.add_argument("file", type=Path)
        parser.add_argument("--code", default="",
                            help="the code's short id, e.g. cfr14 (2-16 of a-z 0-9 -); required but for eCFR XML, "
                                 "which is cfr and its title number by default")
        parser.add_argument("--format", default="", choices=["", *services.CORPUS_FORMATS], dest="fmt",
                            help="jsonl, csv or ecfr-xml (eCFR or the CFR annual edition); by default by the extension")
        parser.add_argument("--citation-pattern", default="",
                            help="regular expression with a group (?P<number>...) finding the code's citations")
        parser.add_argument("--citation-form", default="", help='how a citation is stored, e.g. "12 CFR § {number}"')

    def handle(self, *args, file: Path, code: str, fmt: str, citation_pattern: str, citation_form: str, **options):
        if not file.is_file():
            raise CommandError(f"{file}: no such file")
        fmt = fmt or services.corpus_format(file.name)
        if not code and fmt != "ecfr-xml":
            raise CommandError("--code is required for a JSON Lines or CSV corpus file")
        try:
            with file.open("rb") as source:  # read in chunks and line by line, never whole
                outcome = services.corpus_file_import(code=code, raw=source, filename=file.name,
                                                      retrieved_from=str(file), citation_pattern=citation_pattern,
                                                      citation_form=citation_form, fmt=fmt)
        except (services.ImportProblem, ParseError) as exc:
            raise CommandError(str(exc)) from exc
        snap = outcome.snapshot
        verb = "imported" if outcome.created else "unchanged (no-op)"
        self.stdout.write(f"{verb}: {snap.corpus} {snap.source_key} sha256={snap.sha256[:16]}… "
                          f"{snap.provision_count} sections, parser {snap.parser_name} v{snap.parser_version}")
