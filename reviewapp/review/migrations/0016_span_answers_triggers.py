from django.db import migrations

from reviewapp.core.append_only import append_only_triggers


class Migration(migrations.Migration):
    """0015 adds ``spans`` to two append-only tables; SQLite adds a column with a callable default by copying the
    table, which drops its triggers (the raw UPDATE and DELETE went through): put them back, as 0014 did."""

    dependencies = [
        ('reviewapp', '0015_span_answers'),
    ]

    operations = [
        append_only_triggers("reviewapp_judgmentrevision", message="judgment revisions are append-only"),
        append_only_triggers("reviewapp_adjudication", message="rulings are append-only"),
    ]
