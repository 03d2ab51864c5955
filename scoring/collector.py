"""CPython's cycle collector paused while a process builds a large structure that holds no reference cycle.

The collector runs every 700 net allocations and walks its older generations again and again as they grow: while
a process reads a 50,000-query run or sets Django up, that is work with nothing to find, and it grows faster than
the work (12.7x CPU per 10x of queries for ``relevance_metrics`` at 50k). Used by the TREC file reader
(``scoring.ir.trec_cli``), the BM25 index build (``benchmarks.retrieval.bm25``) and start-up
(``reviewapp.startup``). Standard library only.
"""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager


@contextmanager
def collector_paused() -> Iterator[None]:
    """The collector off inside, and on again on leaving (an exception included) if it was on before.

    Any cycle made meanwhile is collected by the first collection once it is back on.
    """
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()
