"""Judgment revisions, rulings, guidelines, known answers, the account audit log and imported labels refuse
TRUNCATE in the database itself: on PostgreSQL a statement trigger, because row triggers do not fire on TRUNCATE.

See reviewapp.core.records.append_only; SQLite has no TRUNCATE, so there this migration does nothing."""

from django.db import migrations

from reviewapp.core.records.append_only import append_only_truncate_guards


class Migration(migrations.Migration):
    dependencies = [("reviewapp", "0017_queue_order_and_tally")]

    operations = [
        append_only_truncate_guards({
            "reviewapp_judgmentrevision": "judgment revisions are append-only",
            "reviewapp_adjudication": "rulings are append-only",
            "reviewapp_poolguidelines": "guidelines versions are append-only",
            "reviewapp_knownanswer": "known answers are append-only",
            "reviewapp_accountaudit": "the account audit log is append-only",
            "reviewapp_labelimport": "label imports are append-only",
            "reviewapp_importedannotation": "imported annotations are append-only",
        }),
    ]
