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


def shown_hashes(item_public_id: str) -> dict[str, str]:
    """The hashes of an item's texts as its page and API show them: what every grading submit sends back."""
    from reviewapp.review.models import ReviewItem
    from reviewapp.review.services import item_shown_hashes

    return item_shown_hashes(ReviewItem.objects.get(public_id=item_public_id))
