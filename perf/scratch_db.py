"""Scratch databases for the benches: a fresh name per run (prefix + random suffix), dropped only by that run.

Fixed names (``bench_review``) or Django's ``test_<name>`` with autoclobber
would drop a database that someone else on a shared PostgreSQL is using (a
test run, another bench). Here every run creates its own database, fails if
the name is somehow taken, and drops only what it created.
"""

from __future__ import annotations

import re
import secrets
from collections.abc import Iterator
from contextlib import contextmanager


def scratch_name(prefix: str) -> str:
    name = f"{prefix}_{secrets.token_hex(5)}"
    if not re.fullmatch(r"[a-z_][a-z0-9_]{0,62}", name):
        raise SystemExit(f"refusing odd database name {name!r}")
    return name


@contextmanager
def scratch_postgres(server_url: str, *, prefix: str) -> Iterator[str]:
    """URL of a new database on the server of ``server_url`` (its own path is ignored); dropped on exit."""
    import psycopg

    base = server_url.rsplit("/", 1)[0]
    name = scratch_name(prefix)
    with psycopg.connect(f"{base}/postgres", autocommit=True) as conn:
        conn.execute(f"CREATE DATABASE {name}")  # an error, never an adoption, if the name exists
    try:
        yield f"{base}/{name}"
    finally:
        with psycopg.connect(f"{base}/postgres", autocommit=True) as conn:
            conn.execute(f"DROP DATABASE IF EXISTS {name} WITH (FORCE)")


@contextmanager
def scratch_test_database(prefix: str) -> Iterator[None]:
    """Django's test database for a bench, under a name this run made up (PostgreSQL) or in memory (SQLite)."""
    from django.db import connection

    old_name = connection.settings_dict["NAME"]
    if connection.vendor == "postgresql":
        name = scratch_name(prefix)
        with connection._nodb_cursor() as cursor:
            cursor.execute(f"CREATE DATABASE {name}")  # fails if taken: nothing of anyone else's is reused
        connection.settings_dict["TEST"]["NAME"] = name
        # keepdb: use the database just created instead of dropping and recreating it.
        connection.creation.create_test_db(verbosity=0, autoclobber=False, keepdb=True)
    else:
        connection.creation.create_test_db(verbosity=0, autoclobber=False, keepdb=False)
    try:
        yield
    finally:
        connection.creation.destroy_test_db(old_name, verbosity=0, keepdb=False)
