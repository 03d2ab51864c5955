"""Agreement's part of the pool pages (registered in ``apps.ready``; see ``pools.panels``): progress, agreement,
disagreements, labels and their counts on a pool's page; the adjudicated items offered as known answers.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from reviewapp.review.agreement.exports import pool_admin_held_complete, pool_idp_complete
from reviewapp.review.agreement.judgments import pool_judgments
from reviewapp.review.agreement.selectors import (
    LABEL_RULE,
    pool_adjudication_item,
    pool_agreement,
    pool_disagreements,
    pool_document_citations,
    pool_labels,
    pool_progress,
)
from reviewapp.review.pools.known_answers import pool_known_answers
from reviewapp.review.pools.models import ReviewPool


def pool_page_panel(pool: ReviewPool) -> dict[str, Any]:
    labels = pool_labels(pool=pool)
    judgments = pool_judgments(pool)
    return {
        # Judgments of texts changed since (left out of every metric), and judge once: judgments of the same
        # texts made in other pools and serving this one (with provenance).
        "stale": [r for r in judgments if r.stale],
        "reused": [r for r in judgments if r.reused_from],
        "progress": pool_progress(pool=pool),
        "agreement": pool_agreement(pool=pool),
        "admin_held": pool_admin_held_complete(pool=pool),
        "through_idp": pool_idp_complete(pool=pool),
        "disagreements": pool_disagreements(pool=pool),
        "documents": pool_document_citations(pool=pool),
        "label_rule": LABEL_RULE,
        "labels": labels,
        "label_counts": {
            state: sum(1 for label in labels if label.state == state)
            for state in ("adjudicated", "agreed", "unresolved")
        },
    }


def known_answer_panel(pool: ReviewPool) -> dict[str, Any]:
    """Candidates: items with a current ruling (an adjudicated answer) not yet used as known answers."""
    known_ids = {row.item_id for row in pool_known_answers(pool=pool)}
    return {"ruled": [label for label in pool_labels(pool=pool)
                      if label.state == "adjudicated" and isinstance(label.value, int)
                      and label.item_id not in known_ids]}


def item_rulings(pool: ReviewPool, item_id: str) -> Mapping[str, Any]:
    return pool_adjudication_item(pool=pool, item_id=item_id).rulings
