"""The trust tests share one world per module: built inside a transaction that is rolled back at the end."""

from __future__ import annotations

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
