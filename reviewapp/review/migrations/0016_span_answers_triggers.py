from django.db import migrations

from reviewapp.core.append_only import append_only_triggers


class Migration(migrations.Migration):
    """SQLite added the ``spans`` columns of 0015 by copying both tables, which dropped their append-only triggers:
    put them back (on PostgreSQL this re-creates the same triggers)."""

    dependencies = [
        ('reviewapp', '0015_span_answers'),
    ]

    operations = [
        append_only_triggers("reviewapp_adjudication", message="rulings are append-only"),
        append_only_triggers("reviewapp_judgmentrevision", message="judgment revisions are append-only"),
    ]
