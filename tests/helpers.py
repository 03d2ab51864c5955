"""Small helpers shared by tests."""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any


def wait_until(predicate: Callable[[], object], *, timeout: float = 60.0, interval: float = 0.2) -> object:
    """Poll ``predicate`` until it returns something truthy; fail the test after ``timeout`` seconds.

    Used to wait for a real Celery worker. It bounds a wait; it never asserts a speed.
    """
    deadline = time.monotonic() + timeout
    while True:
        value = predicate()
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"condition not met within {timeout} s: {predicate}")
        time.sleep(interval)


def shown_hashes(item_public_id: str) -> dict[str, str]:
    """The hashes of an item's texts as its page and API show them: what every grading submit sends back."""
    from reviewapp.review.models import ReviewItem
    from reviewapp.review.services import item_shown_hashes

    return item_shown_hashes(ReviewItem.objects.get(public_id=item_public_id))


@contextmanager
def rows_for_the_module(django_db_blocker: Any) -> Iterator[None]:
    """Hold an open transaction for a whole test module, rolled back after its last test.

    For a module-scoped fixture that builds its rows once (inside ``django_db_blocker.unblock()``) instead of once
    per test, as Django's ``TestCase.setUpTestData`` does: each test still runs in its own savepoint
    (pytest-django's ``db``), so what one test writes is undone before the next. Tests must re-read model
    instances by key (the rows are shared, the Python objects would carry one test's changes into the next), and a
    module using it must not use ``transactional_db`` (``only_savepoint_tests`` checks that).
    """
    from django.db import transaction

    with django_db_blocker.unblock():
        outer = transaction.atomic()
        outer.__enter__()
    try:
        yield
    finally:
        with django_db_blocker.unblock():
            transaction.set_rollback(True)
            outer.__exit__(None, None, None)


def only_savepoint_tests(request: Any) -> None:
    """Refuse a test that would flush or commit inside a module's open transaction (``rows_for_the_module``)."""
    if "transactional_db" in request.fixturenames or "live_server" in request.fixturenames:
        raise AssertionError(f"{request.node.nodeid}: a transactional test cannot share the module's rows")
