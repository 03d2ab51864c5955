"""Full-text index over provisions, built by the database in use.

SQLite: an external-content FTS5 table (heading, body) kept in sync by
triggers, so every import is indexed in the same transaction. PostgreSQL: a
stored generated tsvector column (heading weight A, body weight B) with a GIN
index; the database computes it on insert. Both are created idempotently
(IF NOT EXISTS) and the SQLite table is rebuilt from the provisions, so
running this on a database that already holds provisions indexes them too.
"""

from django.db import migrations

SQLITE_FORWARD = [
    """CREATE VIRTUAL TABLE IF NOT EXISTS benchmarks_provision_fts USING fts5(
        heading, body, content='benchmarks_provision', content_rowid='id',
        tokenize='porter unicode61 remove_diacritics 2')""",
    """CREATE TRIGGER IF NOT EXISTS benchmarks_provision_fts_ai AFTER INSERT ON benchmarks_provision BEGIN
        INSERT INTO benchmarks_provision_fts(rowid, heading, body) VALUES (new.id, new.heading, new.body);
    END""",
    """CREATE TRIGGER IF NOT EXISTS benchmarks_provision_fts_ad AFTER DELETE ON benchmarks_provision BEGIN
        INSERT INTO benchmarks_provision_fts(benchmarks_provision_fts, rowid, heading, body)
        VALUES ('delete', old.id, old.heading, old.body);
    END""",
    """CREATE TRIGGER IF NOT EXISTS benchmarks_provision_fts_au AFTER UPDATE ON benchmarks_provision BEGIN
        INSERT INTO benchmarks_provision_fts(benchmarks_provision_fts, rowid, heading, body)
        VALUES ('delete', old.id, old.heading, old.body);
        INSERT INTO benchmarks_provision_fts(rowid, heading, body) VALUES (new.id, new.heading, new.body);
    END""",
    "INSERT INTO benchmarks_provision_fts(benchmarks_provision_fts) VALUES ('rebuild')",
]
SQLITE_BACKWARD = [
    "DROP TRIGGER IF EXISTS benchmarks_provision_fts_au",
    "DROP TRIGGER IF EXISTS benchmarks_provision_fts_ad",
    "DROP TRIGGER IF EXISTS benchmarks_provision_fts_ai",
    "DROP TABLE IF EXISTS benchmarks_provision_fts",
]
POSTGRES_FORWARD = [
    """ALTER TABLE benchmarks_provision ADD COLUMN IF NOT EXISTS search_tsv tsvector
        GENERATED ALWAYS AS (
            setweight(to_tsvector('english', coalesce(heading, '')), 'A')
            || setweight(to_tsvector('english', coalesce(body, '')), 'B')
        ) STORED""",
    "CREATE INDEX IF NOT EXISTS benchmarks_provision_search_tsv ON benchmarks_provision USING GIN (search_tsv)",
]
POSTGRES_BACKWARD = [
    "DROP INDEX IF EXISTS benchmarks_provision_search_tsv",
    "ALTER TABLE benchmarks_provision DROP COLUMN IF EXISTS search_tsv",
]


def _run(statements_by_vendor):
    def apply(apps, schema_editor):
        statements = statements_by_vendor.get(schema_editor.connection.vendor, [])
        with schema_editor.connection.cursor() as cursor:
            for sql in statements:
                cursor.execute(sql)

    return apply


class Migration(migrations.Migration):
    dependencies = [("benchmarks", "0001_initial")]

    operations = [
        migrations.RunPython(
            _run({"sqlite": SQLITE_FORWARD, "postgresql": POSTGRES_FORWARD}),
            _run({"sqlite": SQLITE_BACKWARD, "postgresql": POSTGRES_BACKWARD}),
        ),
    ]
