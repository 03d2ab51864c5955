"""The held-out exposure ledger refuses UPDATE and DELETE in the database itself (see reviewapp.core.records.append_only)."""

from django.db import migrations

from reviewapp.core.records.append_only import append_only_triggers


class Migration(migrations.Migration):
    dependencies = [("benchmarks", "0007_target_confirmation")]

    operations = [
        append_only_triggers("benchmarks_heldoutexposure", message="the held-out exposure ledger is append-only"),
    ]
