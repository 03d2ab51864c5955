"""Contract texts compressed with lz4 on PostgreSQL, where the server supports it.

CUAD's 510 contracts are 40 MB of text, every one large enough to be TOASTed; with PostgreSQL's default
compression (pglz) storing them took about 1 s of server CPU, three times SQLite's whole insert. lz4 stores
them in a third of that and no larger. Only values written afterwards are affected (a stored text keeps its
compression and reads back the same). SQLite, a server older than PostgreSQL 14 or one built without lz4:
nothing changes.
"""

from django.db import DatabaseError, migrations, transaction


def _set_compression(apps, schema_editor, method: str) -> None:
    connection = schema_editor.connection
    if connection.vendor != "postgresql" or connection.pg_version < 140000:
        return
    Contract = apps.get_model("grading", "Contract")
    table = schema_editor.quote_name(Contract._meta.db_table)
    column = schema_editor.quote_name(Contract._meta.get_field("text").column)
    try:
        with transaction.atomic(using=schema_editor.connection.alias):  # a savepoint: lz4 is optional at build
            schema_editor.execute(f"ALTER TABLE {table} ALTER COLUMN {column} SET COMPRESSION {method}")
    except DatabaseError:
        pass


def lz4(apps, schema_editor):
    _set_compression(apps, schema_editor, "lz4")


def server_default(apps, schema_editor):
    _set_compression(apps, schema_editor, "default")


class Migration(migrations.Migration):
    dependencies = [("grading", "0006_extraction_run_scope")]

    operations = [migrations.RunPython(lz4, server_default, elidable=False)]
