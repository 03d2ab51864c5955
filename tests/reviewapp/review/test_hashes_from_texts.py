"""Hashes are computed by the server from the stored texts: a caller's hash is a check, never a value."""

from __future__ import annotations

import json

import pytest

from reviewapp.review.agreement.judgments import pool_completed_judgments
from reviewapp.review.agreement.selectors import pool_labels
from reviewapp.review.assignment.models import JudgmentReuse
from reviewapp.review.assignment.services import item_rebind, pool_assign_detail
from reviewapp.review.errors import ReviewError
from reviewapp.review.judgments.hashes import item_hashes
from reviewapp.review.judgments.models import ReviewItem
from reviewapp.review.pools.services import pool_create_model
from reviewapp.review.workspace.services import judgment_submit
from tests.reviewapp.review.conftest import make_items, make_pool

pytestmark = pytest.mark.django_db


def _forged_items(pool) -> list[dict]:
    """New texts carrying the hashes of the judged items of ``pool`` (the attack of the finding)."""
    out = []
    for n, item in enumerate(pool.items.order_by("query_id", "doc_id")):
        out.append({"query_id": item.query_id, "doc_id": item.doc_id, "query_text": item.query_text,
                    "source_heading": item.source_heading, "source_text": item.source_text,
                    "passage_caption": item.passage_caption, "passage_text": f"Deposits are never returned ({n}).",
                    "query_hash": item.query_hash, "source_hash": item.source_hash,
                    "passage_hash": item.passage_hash})
    return out


def _judged_pool(reviewer_user, reviewer2_user):
    pool = make_pool(reviewers=[reviewer_user, reviewer2_user])
    for item in pool.items.all():
        for reviewer in (reviewer_user, reviewer2_user):
            judgment_submit(item=item, reviewer=reviewer, grades={"section": 3, "passage": 3},
                                     complete=True)
    return pool


def test_it_refuses_a_pool_whose_hashes_were_copied_onto_other_texts(reviewer_user, reviewer2_user):
    first = _judged_pool(reviewer_user, reviewer2_user)
    with pytest.raises(ReviewError, match=r"passage_hash does not match the passage text"):
        pool_create_model(name="forged", kind="passage", items=_forged_items(first), declared_rule="copied")


def test_the_declaration_form_refuses_copied_hashes_naming_the_field(admin_client_, reviewer_user, reviewer2_user):
    first = _judged_pool(reviewer_user, reviewer2_user)
    lines = "\n".join(json.dumps(item) for item in _forged_items(first))
    response = admin_client_.post("/review/pools/new/", {
        "name": "forged", "kind": "passage", "declared_rule": "copied", "reviewers_per_item": "2", "items": lines})
    assert response.status_code == 400
    assert b"passage_hash does not match the passage text" in response.content


def test_the_api_refuses_copied_hashes_naming_the_field(admin_client_, reviewer_user, reviewer2_user):
    first = _judged_pool(reviewer_user, reviewer2_user)
    payload = {"name": "forged", "kind": "passage", "declared_rule": "copied", "items": _forged_items(first)}
    response = admin_client_.post("/api/v1/review/pools/", payload, content_type="application/json")
    assert response.status_code == 400
    assert "passage_hash does not match the passage text" in response.json()["detail"]


def test_hashes_sent_as_a_check_that_match_are_accepted():
    items = make_items(n_queries=1, per_query=2)
    checked = [dict(item, **item_hashes(**{k: item[k] for k in ("query_text", "source_heading", "source_text",
                                                                  "passage_caption", "passage_text")}))
               for item in items]
    pool = pool_create_model(name="checked", kind="passage", items=checked, declared_rule="explicit")
    assert pool.items.count() == 2


def test_no_write_path_stores_a_hash_that_is_not_the_texts(reviewer_user):
    pool = make_pool(reviewers=[reviewer_user], per_item=1)
    item = ReviewItem.objects.create(pool=pool, query_id="q", doc_id="d", query_text="Q?", source_text="S.",
                                     passage_text="P.", query_hash="f" * 64, source_hash="f" * 64,
                                     passage_hash="f" * 64)
    item.refresh_from_db()
    assert item.passage_hash == item_hashes(query_text="Q?", source_heading="", source_text="S.",
                                            passage_caption="", passage_text="P.")["passage_hash"]
    ReviewItem.objects.bulk_create([ReviewItem(pool=pool, query_id="q", doc_id="e", query_text="Q?",
                                               passage_text="P2.", query_hash="f" * 64, source_hash="f" * 64,
                                               passage_hash="f" * 64)])
    assert ReviewItem.objects.get(pool=pool, doc_id="e").passage_hash != "f" * 64
    with pytest.raises(ReviewError, match=r"passage_hash does not match the passage text"):
        item_rebind(item=item, passage_text="Other.", passage_hash=item.passage_hash)


def test_judge_once_never_links_judgments_across_different_texts(reviewer_user, reviewer2_user):
    first = _judged_pool(reviewer_user, reviewer2_user)
    honest = [{k: v for k, v in item.items() if not k.endswith("_hash")} for item in _forged_items(first)]
    second = pool_create_model(name="other texts", kind="passage", items=honest, declared_rule="other texts")
    pool_assign_detail(pool=second, reviewers=[reviewer_user, reviewer2_user])
    assert not JudgmentReuse.objects.filter(item__pool=second).exists()
    assert pool_completed_judgments(pool=second) == []
    assert not any(label.is_grade for label in pool_labels(pool=second))
