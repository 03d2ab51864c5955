"""Small helpers shared by tests."""

from __future__ import annotations

import sys
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any, TypeVar

T = TypeVar("T")


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


class Gate:
    """A loopback responder that holds requests ``first`` to ``last`` (1-based; ``last`` None: every later one)
    until ``release`` is set, and sets ``reached`` when the first of them arrives: a request kept in flight for
    exactly as long as a test needs, where a fixed latency only made it likely."""

    def __init__(self, responder: Callable[..., Any], *, first: int, last: int | None = None,
                 timeout: float = 180.0) -> None:
        self.responder, self.first, self.last, self.timeout = responder, first, last, timeout
        self.seen = 0
        self.reached, self.release = threading.Event(), threading.Event()
        self._lock = threading.Lock()

    def __call__(self, path: str, headers: dict[str, str], body: bytes) -> Any:
        with self._lock:
            self.seen += 1
            held = self.first <= self.seen and (self.last is None or self.seen <= self.last)
        if held:
            self.reached.set()
            self.release.wait(timeout=self.timeout)
        return self.responder(path, headers, body)


def cache_clear() -> None:
    """Forget the Django cache's own keys (login counters, throttles) and nothing else.

    ``cache.clear()`` on Redis is FLUSHDB of the whole database. The broker has a database of its own (the cache
    takes the one after REDIS_URL's), but another run sharing this Redis may keep its messages in the cache's (a
    REDIS_URL one lower), and a test on one pytest worker would wipe them (a task sent and never received). Only
    the keys the cache itself names are deleted here.
    """
    from django.core.cache import caches
    from django.core.cache.backends.redis import RedisCache

    cache = caches["default"]
    if not isinstance(cache, RedisCache):
        cache.clear()  # a per-process cache: nobody else's keys live in it
        return
    client = cache._cache.get_client(write=True)
    keys = list(client.scan_iter(match=cache.make_key("*"), count=1000))
    if keys:
        client.delete(*keys)


def shown_hashes(item_public_id: str) -> dict[str, str]:
    """The hashes of an item's texts as its page and API show them: what every grading submit sends back."""
    from reviewapp.review.judgments.models import ReviewItem
    from reviewapp.review.workspace.services import item_shown_hashes

    return item_shown_hashes(ReviewItem.objects.get(public_id=item_public_id))


@contextmanager
def rows_for_the_module(django_db_blocker: Any, build: Callable[[], T]) -> Iterator[T]:
    """Rows made by ``build`` once for a whole test module, in a transaction rolled back after its last test.

    For a module-scoped fixture, as Django's ``TestCase.setUpTestData``: each test still runs in its own
    savepoint (pytest-django's ``db``), so what one test writes is undone before the next. ``build`` should return
    keys, not model instances: tests re-read the rows (the Python objects would carry one test's changes into the
    next). A module using it must not use ``transactional_db`` (``only_savepoint_tests`` checks that).
    """
    from django.db import transaction

    with django_db_blocker.unblock():
        outer = transaction.atomic()
        outer.__enter__()
        try:
            built = build()
        except BaseException:
            outer.__exit__(*sys.exc_info())
            raise
    try:
        yield built
    finally:
        with django_db_blocker.unblock():
            transaction.set_rollback(True)
            outer.__exit__(None, None, None)


def only_savepoint_tests(request: Any) -> None:
    """Refuse a test that would flush or commit inside a module's open transaction (``rows_for_the_module``)."""
    if "transactional_db" in request.fixturenames or "live_server" in request.fixturenames:
        raise AssertionError(f"{request.node.nodeid}: a transactional test cannot share the module's rows")
