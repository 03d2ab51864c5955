"""An index over the review items' query texts for the reviewer's queue search, built by the database in use.

The search matches each word as a substring of the query text, any case. PostgreSQL: a pg_trgm GIN index on
``UPPER(query_text)``, the expression Django's ``icontains`` compares, so the planner may find the matching items
by index instead of reading every item. SQLite: an external-content FTS5 table with the trigram tokenizer (the
same substring semantics, case folded) kept in sync by triggers, rebuilt from the items that exist. Words under
three characters have no trigram; the queue filters them on the rows the other words (or the reviewer's own
queue) left. On PostgreSQL, extended statistics tell the planner that a pool's assignments belong to few
reviewers (see below). All are created idempotently.
"""

from django.db import migrations

SQLITE_FORWARD = [
    """CREATE VIRTUAL TABLE IF NOT EXISTS reviewapp_reviewitem_trgm USING fts5(
        query_text, content='reviewapp_reviewitem', content_rowid='id', tokenize='trigram')""",
    """CREATE TRIGGER IF NOT EXISTS reviewapp_reviewitem_trgm_ai AFTER INSERT ON reviewapp_reviewitem BEGIN
        INSERT INTO reviewapp_reviewitem_trgm(rowid, query_text) VALUES (new.id, new.query_text);
    END""",
    """CREATE TRIGGER IF NOT EXISTS reviewapp_reviewitem_trgm_ad AFTER DELETE ON reviewapp_reviewitem BEGIN
        INSERT INTO reviewapp_reviewitem_trgm(reviewapp_reviewitem_trgm, rowid, query_text)
        VALUES ('delete', old.id, old.query_text);
    END""",
    """CREATE TRIGGER IF NOT EXISTS reviewapp_reviewitem_trgm_au AFTER UPDATE OF query_text ON reviewapp_reviewitem
    BEGIN
        INSERT INTO reviewapp_reviewitem_trgm(reviewapp_reviewitem_trgm, rowid, query_text)
        VALUES ('delete', old.id, old.query_text);
        INSERT INTO reviewapp_reviewitem_trgm(rowid, query_text) VALUES (new.id, new.query_text);
    END""",
    "INSERT INTO reviewapp_reviewitem_trgm(reviewapp_reviewitem_trgm) VALUES ('rebuild')",
]
SQLITE_BACKWARD = [
    "DROP TRIGGER IF EXISTS reviewapp_reviewitem_trgm_au",
    "DROP TRIGGER IF EXISTS reviewapp_reviewitem_trgm_ad",
    "DROP TRIGGER IF EXISTS reviewapp_reviewitem_trgm_ai",
    "DROP TABLE IF EXISTS reviewapp_reviewitem_trgm",
]
POSTGRES_FORWARD = [
    "CREATE EXTENSION IF NOT EXISTS pg_trgm",
    """CREATE INDEX IF NOT EXISTS reviewapp_reviewitem_query_trgm ON reviewapp_reviewitem
        USING GIN (UPPER(query_text) gin_trgm_ops)""",
    # A pool's assignments belong to few reviewers: without this the planner multiplies the two selectivities,
    # expects a few hundred rows where a queue has 10,000, and sorts them all instead of walking the queue index.
    """CREATE STATISTICS IF NOT EXISTS reviewapp_assignment_reviewer_pool (dependencies, ndistinct)
        ON reviewer_id, pool_id FROM reviewapp_assignment""",
]
POSTGRES_BACKWARD = [
    "DROP STATISTICS IF EXISTS reviewapp_assignment_reviewer_pool",
    "DROP INDEX IF EXISTS reviewapp_reviewitem_query_trgm",
]


def _run(statements_by_vendor):
    def apply(apps, schema_editor):
        statements = statements_by_vendor.get(schema_editor.connection.vendor, [])
        with schema_editor.connection.cursor() as cursor:
            for sql in statements:
                cursor.execute(sql)

    return apply


class Migration(migrations.Migration):
    dependencies = [("reviewapp", "0017_queue_order_and_tally")]

    operations = [
        migrations.RunPython(
            _run({"sqlite": SQLITE_FORWARD, "postgresql": POSTGRES_FORWARD}),
            _run({"sqlite": SQLITE_BACKWARD, "postgresql": POSTGRES_BACKWARD}),
        ),
    ]
