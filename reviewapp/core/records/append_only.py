"""Append-only tables, enforced by the database itself: the one place that writes (and lifts) their triggers.

The ORM already refuses ``save`` of an existing row, ``delete`` and ``QuerySet.update/delete`` on these models;
that protects against the product's own code, not against raw SQL, a shell, or a future path that bypasses
the model. Each append-only table therefore carries two triggers, created by its app's migration through
:func:`append_only_triggers`:

- SQLite: ``BEFORE UPDATE`` / ``BEFORE DELETE`` triggers that ``SELECT RAISE(ABORT, ...)``;
- PostgreSQL: one plpgsql function raising an exception, and ``BEFORE UPDATE`` / ``BEFORE DELETE`` row triggers;
  and, because row triggers do not fire on ``TRUNCATE`` (``TRUNCATE ... CASCADE`` would empty the table in one
  statement), a ``BEFORE TRUNCATE`` statement trigger with its own function. SQLite has no TRUNCATE. Tables made
  append-only before the statement trigger existed get it from :func:`append_only_truncate_guards`.

One table may declare a single allowed update (receipts: the one completion of a ``sent`` receipt, with the
request columns unchanged); everything else is refused.

The only way past the triggers is :func:`append_only_bypassed`, a per-connection switch used where a whole
database is wiped on purpose (``manage.py flush``, which the test runner also uses between transactional
tests; on PostgreSQL it TRUNCATEs, which the statement trigger lets through only under the switch). On SQLite
the switch is a function registered on every connection Django opens (a connection that lacks it, e.g. the
``sqlite3`` shell, cannot update or delete these rows at all); on PostgreSQL it is the transaction-local setting
``app.append_only_bypass``.

A later migration that rebuilds one of these tables on SQLite (``ALTER`` by copy) drops its triggers:
``tests/reviewapp/core/records/test_append_only_db.py`` checks every table on the migrated database, so such a
migration fails CI until it recreates them with the same helper.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

from django.apps import apps
from django.db import migrations, transaction

from reviewapp.core.models import AppendOnlyQuerySet

BYPASS_FUNCTION = "append_only_bypass"
PG_SETTING = "app.append_only_bypass"
PG_FUNCTION = "append_only_refuse"
PG_TRUNCATE_FUNCTION = "append_only_refuse_truncate"


@dataclass(frozen=True)
class AllowedUpdate:
    """The one update a table allows: when ``old_condition`` holds and ``frozen`` columns keep their values."""

    old_condition: str  # SQL over OLD, e.g. "OLD.status = 'sent'"
    frozen: Sequence[str] = field(default_factory=tuple)


def _names(table: str) -> tuple[str, str]:
    return f"{table}_append_only_no_update", f"{table}_append_only_no_delete"


def _truncate_name(table: str) -> str:
    return f"{table}_append_only_no_truncate"


def _sqlite_sql(table: str, message: str, allowed: AllowedUpdate | None) -> list[str]:
    no_update, no_delete = _names(table)
    update_when = f"NOT {BYPASS_FUNCTION}()"
    if allowed is not None:
        changed = " OR ".join(f'NEW."{col}" IS NOT OLD."{col}"' for col in allowed.frozen) or "0"
        update_when += f" AND (NOT ({allowed.old_condition}) OR {changed})"
    quoted = message.replace("'", "''")
    return [
        f'DROP TRIGGER IF EXISTS "{no_update}"',
        f'DROP TRIGGER IF EXISTS "{no_delete}"',
        f'CREATE TRIGGER "{no_update}" BEFORE UPDATE ON "{table}" FOR EACH ROW WHEN {update_when} '
        f"BEGIN SELECT RAISE(ABORT, '{quoted}: rows are never updated'); END",
        f'CREATE TRIGGER "{no_delete}" BEFORE DELETE ON "{table}" FOR EACH ROW WHEN NOT {BYPASS_FUNCTION}() '
        f"BEGIN SELECT RAISE(ABORT, '{quoted}: rows are never deleted'); END",
    ]


def _pg_function_sql() -> str:
    # TG_ARGV[0] is the table's message; the bypass setting is transaction-local (SET LOCAL / set_config(.., true)).
    return f"""
CREATE OR REPLACE FUNCTION {PG_FUNCTION}() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF coalesce(current_setting('{PG_SETTING}', true), '') = 'on' THEN
        IF TG_OP = 'DELETE' THEN RETURN OLD; END IF;
        RETURN NEW;
    END IF;
    RAISE EXCEPTION '%: rows are never %', TG_ARGV[0], CASE WHEN TG_OP = 'DELETE' THEN 'deleted' ELSE 'updated' END
        USING ERRCODE = 'restrict_violation';
END
$$"""


def _pg_truncate_sql(table: str, message: str) -> list[str]:
    quoted = message.replace("'", "''")
    name = _truncate_name(table)
    return [
        f"""
CREATE OR REPLACE FUNCTION {PG_TRUNCATE_FUNCTION}() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF coalesce(current_setting('{PG_SETTING}', true), '') = 'on' THEN
        RETURN NULL;
    END IF;
    RAISE EXCEPTION '%: the table is never truncated', TG_ARGV[0] USING ERRCODE = 'restrict_violation';
END
$$""",
        f'DROP TRIGGER IF EXISTS "{name}" ON "{table}"',
        f'CREATE TRIGGER "{name}" BEFORE TRUNCATE ON "{table}" FOR EACH STATEMENT '
        f"EXECUTE FUNCTION {PG_TRUNCATE_FUNCTION}('{quoted}')",
    ]


def _pg_sql(table: str, message: str, allowed: AllowedUpdate | None) -> list[str]:
    no_update, no_delete = _names(table)
    quoted = message.replace("'", "''")
    update_when = ""
    if allowed is not None:
        changed = " OR ".join(f'NEW."{col}" IS DISTINCT FROM OLD."{col}"' for col in allowed.frozen) or "false"
        update_when = f" WHEN (NOT ({allowed.old_condition}) OR {changed})"
    return [
        _pg_function_sql(),
        f'DROP TRIGGER IF EXISTS "{no_update}" ON "{table}"',
        f'DROP TRIGGER IF EXISTS "{no_delete}" ON "{table}"',
        f'CREATE TRIGGER "{no_update}" BEFORE UPDATE ON "{table}" FOR EACH ROW{update_when} '
        f"EXECUTE FUNCTION {PG_FUNCTION}('{quoted}')",
        f'CREATE TRIGGER "{no_delete}" BEFORE DELETE ON "{table}" FOR EACH ROW '
        f"EXECUTE FUNCTION {PG_FUNCTION}('{quoted}')",
        *_pg_truncate_sql(table, message),
    ]


def trigger_sql(vendor: str, *, table: str, message: str, allowed: AllowedUpdate | None = None) -> list[str]:
    """The statements that make ``table`` append-only on this database engine."""
    if vendor == "sqlite":
        return _sqlite_sql(table, message, allowed)
    if vendor == "postgresql":
        return _pg_sql(table, message, allowed)
    raise NotImplementedError(f"append-only triggers are written for sqlite and postgresql, not {vendor}")


def drop_sql(vendor: str, *, table: str) -> list[str]:
    no_update, no_delete = _names(table)
    if vendor != "postgresql":
        return [f'DROP TRIGGER IF EXISTS "{no_update}"', f'DROP TRIGGER IF EXISTS "{no_delete}"']
    return [f'DROP TRIGGER IF EXISTS "{name}" ON "{table}"' for name in (no_update, no_delete, _truncate_name(table))]


def append_only_triggers(
    table: str, *, message: str, allowed: AllowedUpdate | None = None
) -> migrations.RunPython:
    """A migration operation creating (and, reversed, dropping) the append-only triggers of ``table``."""

    def forwards(apps: Any, schema_editor: Any) -> None:
        for sql in trigger_sql(schema_editor.connection.vendor, table=table, message=message, allowed=allowed):
            schema_editor.execute(sql, params=None)

    def backwards(apps: Any, schema_editor: Any) -> None:
        for sql in drop_sql(schema_editor.connection.vendor, table=table):
            schema_editor.execute(sql, params=None)

    return migrations.RunPython(forwards, backwards, elidable=False)


def append_only_truncate_guards(messages: dict[str, str]) -> migrations.RunPython:
    """A migration operation giving tables made append-only earlier (table -> message) their TRUNCATE guard.

    PostgreSQL only (SQLite has no TRUNCATE); reversed, it drops the guard again.
    """
    def forwards(apps: Any, schema_editor: Any) -> None:
        if schema_editor.connection.vendor == "postgresql":
            for table, message in messages.items():
                for sql in _pg_truncate_sql(table, message):
                    schema_editor.execute(sql, params=None)

    def backwards(apps: Any, schema_editor: Any) -> None:
        if schema_editor.connection.vendor == "postgresql":
            for table in messages:
                schema_editor.execute(f'DROP TRIGGER IF EXISTS "{_truncate_name(table)}" ON "{table}"', params=None)

    return migrations.RunPython(forwards, backwards, elidable=False)


def expected_triggers(vendor: str, table: str) -> set[str]:
    """The append-only triggers ``table`` carries on this engine (PostgreSQL adds the TRUNCATE guard)."""
    names = set(_names(table))
    return names | {_truncate_name(table)} if vendor == "postgresql" else names


def triggers_present(connection: Any, table: str) -> set[str]:
    """Names of this table's append-only triggers that exist in the database (for checks and tests)."""
    wanted = expected_triggers(connection.vendor, table)
    with connection.cursor() as cursor:
        if connection.vendor == "sqlite":
            cursor.execute("SELECT name FROM sqlite_master WHERE type = 'trigger' AND tbl_name = %s", [table])
        else:
            cursor.execute("SELECT tgname FROM pg_trigger WHERE tgrelid = %s::regclass AND NOT tgisinternal",
                           [f'"{table}"'])
        return {row[0] for row in cursor.fetchall()} & wanted


def register_sqlite_bypass(sender: Any, connection: Any, **kwargs: Any) -> None:
    """``connection_created`` receiver: give each SQLite connection the function its triggers consult."""
    if connection.vendor != "sqlite":
        return
    connection.connection.create_function(
        BYPASS_FUNCTION, 0, lambda: 1 if getattr(connection, "append_only_bypass", False) else 0,
    )


@contextlib.contextmanager
def append_only_bypassed(connection: Any) -> Iterator[None]:
    """Lift the append-only triggers on this connection for the duration (a whole-database wipe only).

    On PostgreSQL the setting lasts until the end of the current transaction at most, so a caller outside a
    transaction gets one for the duration.
    """
    if connection.vendor == "sqlite":
        connection.ensure_connection()
        previous = getattr(connection, "append_only_bypass", False)
        connection.append_only_bypass = True
        try:
            yield
        finally:
            connection.append_only_bypass = previous
        return
    with transaction.atomic(using=connection.alias):
        with connection.cursor() as cursor:
            cursor.execute("SELECT set_config(%s, 'on', true)", [PG_SETTING])
        # On an error the savepoint's rollback undoes the setting; on success it is switched off here, so an
        # enclosing transaction does not keep it.
        yield
        with connection.cursor() as cursor:
            cursor.execute("SELECT set_config(%s, '', true)", [PG_SETTING])


# The append-only table whose one allowed update (a receipt's completion while 'sent') rules out the ORM's
# refusing manager: listed by name, so that the list below stays whole.
WITH_ALLOWED_UPDATE = ("providers.Receipt",)


def append_only_models() -> list[Any]:
    """Every model whose rows are append-only: those whose manager is ``AppendOnlyQuerySet`` (every
    ``AppendOnlyModel``: the ORM refuses updates and deletes) and those of ``WITH_ALLOWED_UPDATE``. The one list
    the tests of the promise read (the database triggers, the stateful engine test), so that a new append-only
    table joins them by being one."""
    found = [m for m in apps.get_models() if isinstance(m._default_manager.get_queryset(), AppendOnlyQuerySet)]
    return sorted({*found, *(apps.get_model(label) for label in WITH_ALLOWED_UPDATE)}, key=lambda m: m._meta.label)
