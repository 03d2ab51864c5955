"""Assignment's part of a pool's page (registered in ``apps.ready``; see ``pools.panels``): whom an admin may
assign, and the judgments of the same texts in other pools that serve this one (judge once).
"""

from __future__ import annotations

from typing import Any

from reviewapp.review.assignment.reuse import pool_reuse_counts
from reviewapp.review.assignment.selectors import reviewer_candidates
from reviewapp.review.pools.models import ReviewPool


def pool_page_panel(pool: ReviewPool) -> dict[str, Any]:
    return {"candidates": reviewer_candidates(), "reuse": pool_reuse_counts(pool=pool)}
