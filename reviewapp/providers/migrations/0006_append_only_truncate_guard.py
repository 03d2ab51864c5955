"""Budget raises and receipts refuse TRUNCATE in the database
itself: on PostgreSQL a statement trigger, because row triggers do not fire on TRUNCATE.

See reviewapp.core.records.append_only; SQLite has no TRUNCATE, so there this migration does nothing."""

from django.db import migrations

from reviewapp.core.records.append_only import append_only_truncate_guards


class Migration(migrations.Migration):
    dependencies = [("providers", "0005_simulated_provider")]

    operations = [
        append_only_truncate_guards({
            "providers_budgetraise": "budget raises are append-only",
            "providers_receipt": "receipts are append-only (completed once, while sent)",
        }),
    ]
