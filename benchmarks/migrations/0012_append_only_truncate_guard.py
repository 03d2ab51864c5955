"""The held-out exposure ledger and declared comparisons refuse TRUNCATE in the database
itself: on PostgreSQL a statement trigger, because row triggers do not fire on TRUNCATE.

See reviewapp.core.records.append_only; SQLite has no TRUNCATE, so there this migration does nothing."""

from django.db import migrations

from reviewapp.core.records.append_only import append_only_truncate_guards


class Migration(migrations.Migration):
    dependencies = [("benchmarks", "0011_declared_comparison")]

    operations = [
        append_only_truncate_guards({
            "benchmarks_heldoutexposure": "the held-out exposure ledger is append-only",
            "benchmarks_declaredcomparison": "declared comparisons are append-only",
        }),
    ]
