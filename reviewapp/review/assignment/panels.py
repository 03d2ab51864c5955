"""Assignment's part of a pool's page (registered in ``apps.ready``; see ``pools.panels``): whom an admin may
assign, and the judgments of the same texts in other pools that serve this one (judge once); on the known-answer
page, how many reviewers hold each known-answer item and how much of a queue mixing may fill.
"""

from __future__ import annotations

from collections import Counter
from typing import Any

from reviewapp.review.assignment.models import Assignment
from reviewapp.review.assignment.reuse import pool_reuse_counts
from reviewapp.review.assignment.selectors import reviewer_candidates
from reviewapp.review.assignment.services import DEFAULT_SHARE, MAX_SHARE
from reviewapp.review.pools.known_answers import known_answer_item_pks
from reviewapp.review.pools.models import ReviewPool


def pool_page_panel(pool: ReviewPool) -> dict[str, Any]:
    return {"candidates": reviewer_candidates(), "reuse": pool_reuse_counts(pool=pool)}


def known_answer_panel(pool: ReviewPool) -> dict[str, Any]:
    """Assignments of each known-answer item (by public id) and the share bounds of the mix form."""
    item_ids = Assignment.objects.filter(item__in=known_answer_item_pks(pool=pool)).values_list("item__public_id",
                                                                                                flat=True)
    return {"assigned": dict(Counter(item_ids)), "default_share": round(DEFAULT_SHARE * 100),
            "max_share": round(MAX_SHARE * 100)}
