"""The trust tests share one world per module (built inside a transaction that is rolled back at the end), and the
race tests one gunicorn per session."""

from __future__ import annotations

import os

import pytest
from django.db import transaction


@pytest.fixture(scope="module")
def world(django_db_setup, django_db_blocker, tmp_path_factory):
    """Real objects of every job (see fixtures.build_world); each test still runs in its own savepoint."""
    from tests.trust.fixtures import build_world

    with django_db_blocker.unblock():
        atomic = transaction.atomic()
        atomic.__enter__()
        try:
            yield build_world(tmp_path_factory.mktemp("trust-world"))
        finally:
            transaction.set_rollback(True)
            atomic.__exit__(None, None, None)


@pytest.fixture(scope="session")
def race_server(django_db_setup, django_db_blocker):
    """gunicorn (2 gthread workers x 4 threads) on the test database, started once for every race test module."""
    from django.db import connection

    from tests.conftest import _database_url_for_worker
    from tests.trust.race import ACCOUNT_LIMIT, LOGIN_LIMIT, gunicorn

    if connection.vendor != "postgresql":  # the race modules are marked postgresql, so never collected there
        pytest.fail("race tests need PostgreSQL: SQLite serialises every write, so no two requests overlap")
    if not os.environ.get("REDIS_URL"):
        pytest.fail("race tests need REDIS_URL: the login limit is counted in the shared cache of every worker")
    env = {"LOGIN_RATE_LIMIT": str(LOGIN_LIMIT), "LOGIN_ACCOUNT_RATE_LIMIT": str(ACCOUNT_LIMIT),
           # The test client stands behind one trusted proxy: X-Forwarded-For names each attempt's address.
           "TRUSTED_PROXY_COUNT": "1",
           # No provider is configured: a budget raise's resume is refused after the raise, so nothing is queued.
           "ANTHROPIC_API_KEY": "", "OPENROUTER_API_KEY": "", "OPENAI_COMPATIBLE_API_KEY": ""}
    with django_db_blocker.unblock():
        database_url = _database_url_for_worker()
    with gunicorn(database_url=database_url, env=env) as running:
        yield running
