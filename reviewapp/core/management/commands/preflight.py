"""Checks the database, the broker and the data directory; one line per problem."""

from django.core.management.base import BaseCommand, CommandError

from reviewapp.core.health import check_broker, check_data_dir, check_database

ADVICE = {
    "database": "Check DATABASE_URL (unset it for the embedded SQLite default) and that the server runs.",
    "broker": "Check REDIS_URL (unset it for the embedded filesystem broker) and that Redis runs.",
    "data_dir": (
        "Set DATA_DIR to the folder holding cuad/CUAD_v1.json and statutes/ (see README, 'Data'): "
        "CUAD v1 from the Atticus Project's CUAD_v1.zip, Nevada NRS chapter pages, Hawaii HRS, US Code XML."
    ),
}


class Command(BaseCommand):
    help = "Check that the database, the task broker and DATA_DIR are usable."

    def add_arguments(self, parser):
        parser.add_argument("--skip-data", action="store_true", help="do not require DATA_DIR")

    def handle(self, *args, **options):
        checks = [check_database(), check_broker()]
        if not options["skip_data"]:
            checks.append(check_data_dir())
        failed = [check for check in checks if not check.ok]
        for check in checks:
            self.stdout.write(f"{check.name}: {'ok' if check.ok else 'DOWN'} ({check.detail})")
        if failed:
            raise CommandError(" ".join(f"{c.name} is down: {c.detail}. {ADVICE[c.name]}" for c in failed))
