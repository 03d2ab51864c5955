"""Exchange's part of the pool pages (registered in ``apps.ready``; see ``pools.panels``): the label sources a
pool may be declared from, on the list; the labels imported into a pool, on its page.
"""

from __future__ import annotations

from typing import Any

from reviewapp.review.exchange.selectors import label_source_list, pool_label_imports
from reviewapp.review.pools.models import ReviewPool


def pool_list_panel() -> dict[str, Any]:
    return {"label_sources": label_source_list()}


def pool_page_panel(pool: ReviewPool) -> dict[str, Any]:
    return {"label_imports": pool_label_imports(pool=pool)}
