"""A snapshot's ``raw`` bytes become the last column of its row on SQLite.

SQLite writes a ``zeroblob(N)`` without holding its N bytes only when it ends the row; the import inserts one and
streams the file into it (benchmarks.corpus.bulk), so in the middle of the row it cost twice the file in memory.
The table is rebuilt with the same rows (Django's own SQLite rebuild, as any altered column gets); the
self-referencing ``companion_id`` still follows ``raw`` (the rebuild puts it last), which costs nothing when it is
NULL (no byte of the row) and only an HRS volume, read whole anyway, has one. PostgreSQL's rows are written by COPY
and keep their column order.
"""

from django.db import migrations, models


def _raw_last(apps, schema_editor):
    if schema_editor.connection.vendor == "sqlite":
        schema_editor._remake_table(apps.get_model("benchmarks", "SourceSnapshot"))


class Migration(migrations.Migration):

    dependencies = [
        ("benchmarks", "0013_merge_20261204_2307"),
    ]

    operations = [
        # The field moves to the end of the model's state (nothing happens to the database here) ...
        migrations.SeparateDatabaseAndState(state_operations=[
            migrations.RemoveField(model_name="sourcesnapshot", name="raw"),
            migrations.AddField(model_name="sourcesnapshot", name="raw", field=models.BinaryField(),
                                preserve_default=False),
        ]),
        # ... and the SQLite table is rebuilt in that order, its rows copied.
        migrations.RunPython(_raw_last, migrations.RunPython.noop, elidable=False),
    ]
