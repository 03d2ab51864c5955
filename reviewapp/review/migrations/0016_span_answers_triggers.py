"""The append-only triggers of revisions and rulings again: adding ``spans`` (0015) rebuilt both tables on SQLite.

SQLite adds a column with a callable default by copying the table, and the copy has no triggers; PostgreSQL keeps
them (the statements are idempotent there). Reversed, nothing is dropped: the triggers predate 0015.
"""

from django.db import migrations

from reviewapp.core.append_only import append_only_triggers


def _recreate(table: str, message: str) -> migrations.RunPython:
    return migrations.RunPython(append_only_triggers(table, message=message).code, migrations.RunPython.noop,
                                elidable=False)


class Migration(migrations.Migration):

    dependencies = [
        ("reviewapp", "0015_span_answers"),
    ]

    operations = [
        _recreate("reviewapp_judgmentrevision", "judgment revisions are append-only"),
        _recreate("reviewapp_adjudication", "rulings are append-only"),
    ]
