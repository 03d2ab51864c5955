"""The migrated SQLite test database, built once and copied into each test process.

Every pytest-xdist process used to run all migrations into its own in-memory database (about 10 s of CPU each,
every run). The first process to need it migrates as before and saves the result to a file under var/; every
other process, in this run and later ones, copies that file into its in-memory database with SQLite's backup API,
which copies pages, so the tables, indexes and append-only triggers arrive exactly as the migrations made them.

The file is named by a hash of what decides its contents: every migration file, every apps.py (post_migrate
grants the admin role its permissions from the product apps), the module that grants them, and the Django and
SQLite versions. A change to any of them builds a new file. PostgreSQL, a file-backed SQLite test database and
--no-migrations keep pytest-django's own setup unchanged.
"""

from __future__ import annotations

import fcntl
import hashlib
import inspect
import sqlite3
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parent.parent
TEMPLATE_DIR = REPO_ROOT / "var" / "test-db"


def template_applies(connection, *, use_migrations: bool, keepdb: bool) -> bool:
    """Only an in-memory SQLite test database built by migrations is copied from the template."""
    return (
        connection.vendor == "sqlite"
        and use_migrations
        and not keepdb
        and connection.creation.is_in_memory_db(connection.creation._get_test_db_name())
    )


def _sources() -> list[Path]:
    from django.apps import apps

    from reviewapp.core.auth import roles as access

    files: set[Path] = {Path(inspect.getfile(access))}
    for config in apps.get_app_configs():
        root = Path(config.path)
        if root.is_relative_to(REPO_ROOT):
            files.update(root.glob("apps.py"))
            files.update(root.glob("migrations/*.py"))
    return sorted(files)


def template_key() -> str:
    import django

    digest = hashlib.sha256(f"{django.__version__}|{sqlite3.sqlite_version}".encode())
    for path in _sources():
        digest.update(path.relative_to(REPO_ROOT).as_posix().encode() + b"\0" + path.read_bytes() + b"\0")
    return digest.hexdigest()[:16]


@contextmanager
def _locked() -> Iterator[None]:
    TEMPLATE_DIR.mkdir(parents=True, exist_ok=True)
    with open(TEMPLATE_DIR / ".lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(lock, fcntl.LOCK_UN)


def setup_from_template(connection, *, setup_databases, serialized: bool, verbosity: int) -> list:
    """Create the in-memory test database for ``connection`` from the template (built first if missing);
    return the old-config list ``teardown_databases`` expects."""
    from django.conf import settings

    template = TEMPLATE_DIR / f"migrated-{template_key()}.sqlite3"
    with _locked():
        if not template.is_file():
            # Build it the ordinary way, then keep a copy: this process's own database is the migrated one.
            old_config = setup_databases(verbosity=verbosity, interactive=False, aliases={connection.alias},
                                         serialized_aliases={connection.alias} if serialized else set())
            partial = template.with_suffix(".partial")
            partial.unlink(missing_ok=True)
            connection.ensure_connection()
            target = sqlite3.connect(partial)
            try:
                connection.connection.backup(target)
            finally:
                target.close()
            for stale in TEMPLATE_DIR.glob("migrated-*.sqlite3"):
                stale.unlink()
            partial.replace(template)
            return old_config
        old_name = connection.settings_dict["NAME"]
        test_name = connection.creation._create_test_db(verbosity=0, autoclobber=True, keepdb=False)
        connection.close()
        connection.settings_dict["NAME"] = test_name
        settings.DATABASES[connection.alias]["NAME"] = test_name
        connection.ensure_connection()
        source = sqlite3.connect(f"file:{template}?mode=ro", uri=True)
        try:
            source.backup(connection.connection)
        finally:
            source.close()
    if serialized:
        connection._test_serialized_contents = connection.creation.serialize_db_to_string()
    return [(connection, old_name, True)]
