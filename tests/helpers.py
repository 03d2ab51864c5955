"""Small helpers shared by tests."""

from __future__ import annotations

import time
from collections.abc import Callable


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
