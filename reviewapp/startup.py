"""How a process of the project starts: Django set up without the garbage collector running meanwhile.

Setting up Django here (settings, every app's models, the URL tables and warm-up in a web master) allocates some
hundreds of thousands of objects that live as long as the process. CPython's collector runs every 700 net
allocations and walks the young objects each time, and its older generations again and again as they grow: during
start-up that is work with nothing to find (measured: about a tenth of `manage.py check`'s CPU). So the collector
is paused while the process starts, then turned back on with every object made so far frozen (``gc.freeze``):
later collections skip them, and in a gunicorn --preload master the forked workers do not touch (and so copy)
those pages when they collect. Nothing else changes: cycles made after start-up are collected as before.
"""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager

from scoring.collector import collector_paused


@contextmanager
def starting() -> Iterator[None]:
    """Pause the collector for a process's start-up; on leaving, freeze what was made and collect as before."""
    with collector_paused():
        try:
            yield
        finally:
            gc.freeze()  # before the collector is back on: its first collection already skips them
