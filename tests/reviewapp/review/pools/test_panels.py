"""The pool pages get their panels from the nouns above pools, registered at startup: none may go missing.

A template renders a missing variable as nothing, so a panel that was not registered would leave a page silently
blank where its reads belong; these tests look at the context the pages were rendered with.
"""

from __future__ import annotations

import pytest

from reviewapp.review.pools.models import ReviewPool
from reviewapp.review.pools.panels import _merged

POOL_PAGE_PANEL_KEYS = {
    # agreement
    "progress", "agreement", "admin_held", "through_idp", "disagreements", "documents", "label_rule", "labels",
    "label_counts",
    # assignment
    "candidates", "reuse",
    # exchange
    "label_imports",
}


def test_a_pools_page_is_rendered_with_the_panels_of_agreement_assignment_and_exchange(pool: ReviewPool,
                                                                                      admin_client_):
    context = admin_client_.get(f"/review/pools/{pool.public_id}/").context
    assert set(context.keys()) >= POOL_PAGE_PANEL_KEYS
    # Nothing graded yet: every item's label is unresolved, counted from the labels of the same panel.
    assert context["label_counts"] == {"adjudicated": 0, "agreed": 0, "unresolved": len(context["labels"])}
    assert len(context["labels"]) == pool.items.count() > 0


def test_the_pool_list_and_the_known_answer_page_get_their_panels_too(pool: ReviewPool, admin_client_):
    assert "label_sources" in admin_client_.get("/review/pools/").context
    assert admin_client_.get(f"/review/pools/{pool.public_id}/known-answers/").context["ruled"] == []


def test_two_panels_filling_the_same_entry_are_refused():
    with pytest.raises(RuntimeError, match="label_imports"):
        _merged([{"label_imports": []}, {"label_imports": []}])
