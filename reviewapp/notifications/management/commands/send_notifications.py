from __future__ import annotations

from django.core.management.base import BaseCommand

from reviewapp.notifications.services import notices_send


class Command(BaseCommand):
    help = ("Send the email notices due now (new items assigned, reminders, disagreements waiting); celery beat "
            "runs the same every NOTIFY_SECONDS. Each notice is sent once.")

    def add_arguments(self, parser):
        parser.add_argument("--dry-run", action="store_true", help="list what would be sent; send nothing")

    def handle(self, *args, dry_run: bool = False, **options):
        report = notices_send(dry_run=dry_run)
        for pending in report.pending:
            self.stdout.write(f"{pending.kind}: {pending.email}: {pending.subject}")
        if dry_run:
            self.stdout.write(f"{len(report.pending)} notice(s) due; nothing sent (--dry-run)")
        else:
            self.stdout.write(f"{report.sent} sent, {report.failed} failed, {report.skipped} sent by another "
                              "sender")
