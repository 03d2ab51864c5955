"""Import a Label Studio JSON export or Argilla records into a review pool as a label source that is not blind.

    manage.py import_labels --pool <pool id> --tool label-studio tasks.json
    manage.py import_labels --pool <pool id> --tool argilla records.json   (or the zipped to_disk directory)

Nothing is written unless the whole file is accepted; a refusal names the task or record and the field.
"""

from __future__ import annotations

from pathlib import Path

from django.core.exceptions import ObjectDoesNotExist
from django.core.management.base import BaseCommand, CommandError

from reviewapp.review.exchange import services
from reviewapp.review.exchange.argilla import UNSTATED_READINGS
from reviewapp.review.exchange.texts import ExchangeError
from reviewapp.review.pools.selectors import pool_model_get


class Command(BaseCommand):
    help = "Import Label Studio or Argilla annotations into a pool (not blind; counted by no human-label metric)."

    def add_arguments(self, parser):
        parser.add_argument("file", help="Label Studio JSON export (tasks), Argilla records.json or its zip")
        parser.add_argument("--pool", required=True, help="the pool's public id")
        parser.add_argument("--tool", required=True, choices=services.TOOLS)
        parser.add_argument("--by", default="", help="who imports (recorded with the import)")
        parser.add_argument("--unstated-status", choices=UNSTATED_READINGS, default=None,
                            help="how to read Argilla responses that carry no status (its to_disk leaves it out); "
                                 "without it such a file is refused")

    def handle(self, *args, **options):
        path = Path(options["file"])
        try:
            pool = pool_model_get(public_id=options["pool"])
        except ObjectDoesNotExist:
            raise CommandError(f"--pool: no pool {options['pool']!r}") from None
        try:
            content = path.read_bytes()
        except OSError as error:
            raise CommandError(f"{path}: {error.strerror}") from None
        try:
            document = services.document_read(content, tool=options["tool"])
            result = services.annotations_import(pool=pool, tool=options["tool"], document=document,
                                                 filename=path.name, imported_by=options["by"],
                                                 unstated=options["unstated_status"])
        except ExchangeError as error:
            raise CommandError(f"{path.name}: {error}") from None
        self.stdout.write(f"pool {pool.public_id}: {services.import_report(result, tool=options['tool'])}\n")
