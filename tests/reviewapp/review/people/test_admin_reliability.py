"""Adjudication's "next disagreement" walk, a pool's versioned guidelines for reviewers, and known-answer items:
each reviewer's accuracy with an interval, mixed into queues, never counted in labels, agreement or metrics."""

from __future__ import annotations

import json

import pytest
from scipy.stats import binomtest

from reviewapp.review.agreement import disagreements, exports
from reviewapp.review.agreement import selectors as agreement
from reviewapp.review.agreement.judgments import pool_completed_judgments
from reviewapp.review.agreement.selectors import pool_labels
from reviewapp.review.assignment.models import Assignment
from reviewapp.review.assignment.services import assignment_sort_key, known_answer_mix
from reviewapp.review.judgments.models import ReviewItem
from reviewapp.review.pools import guidelines, known_answers
from reviewapp.review.pools.models import KnownAnswer, PoolGuidelines
from reviewapp.review.pools.services import pool_new_version
from reviewapp.review.workspace.services import judgment_reopen, judgment_submit
from tests.helpers import shown_hashes
from tests.reviewapp.review.conftest import make_items, make_pool

pytestmark = pytest.mark.django_db


def _grade(item, reviewer, section: int, passage: int = 1, *, complete: bool = True):
    return judgment_submit(item=item, reviewer=reviewer, grades={"section": section, "passage": passage},
                                    complete=complete, shown=shown_hashes(item.public_id))


@pytest.fixture
def judged(reviewer_user, reviewer2_user):
    """Six items both reviewers hold; they disagree on the section grade of items 0, 2 and 4."""
    pool = make_pool(reviewers=[reviewer_user, reviewer2_user], items=make_items(2, 3))
    items = list(pool.items.order_by("query_id", "doc_id"))
    for n, item in enumerate(items):
        _grade(item, reviewer_user, 2)
        _grade(item, reviewer2_user, 3 if n % 2 == 0 else 2)
    return pool, items


# --- next disagreement -------------------------------------------------------------------------------------------


def test_next_disagreement_walks_the_open_items_in_order_and_counts_what_is_left(admin_client_, admin_user_, judged):
    pool, items = judged
    expected = [items[0].public_id, items[2].public_id, items[4].public_id]
    assert disagreements.pool_open_disagreements(pool=pool) == expected
    base = f"/review/agreement/{pool.public_id}"
    first = admin_client_.get(f"{base}/disagreements/next/")
    assert first["Location"] == f"{base}/items/{expected[0]}/adjudicate/"
    page = admin_client_.get(first["Location"]).content.decode()
    assert "3 open disagreements in this pool, this one included" in page
    assert f"{base}/items/{expected[1]}/adjudicate/" in page  # the "next" link
    # Record a ruling and go straight on.
    ruled = admin_client_.post(first["Location"], {"section": "2", "then": "next"})
    assert ruled["Location"] == f"{base}/disagreements/next/?after={expected[0]}"
    assert admin_client_.get(ruled["Location"])["Location"] == f"{base}/items/{expected[1]}/adjudicate/"
    assert disagreements.disagreement_next(pool=pool, after=expected[0]).remaining == 2
    # Past the last one it wraps round; once all are ruled, it says so and goes back to the pool.
    assert disagreements.disagreement_next(pool=pool, after=expected[2]).item_id == expected[1]
    for item_id in expected[1:]:
        admin_client_.post(f"{base}/items/{item_id}/adjudicate/", {"section": "3"})
    done = admin_client_.get(f"{base}/disagreements/next/", follow=True)
    assert "No open disagreements left" in done.content.decode()
    # Rulings are the admin's own rows; the reviewers' revisions are untouched.
    assert all(r.status == "complete" for r in pool_completed_judgments(pool=pool))


# --- guidelines --------------------------------------------------------------------------------------------------


def test_guidelines_are_versioned_escaped_and_shown_on_the_reviewers_item_page(admin_client_, reviewer_client,
                                                                            pool, reviewer_user):
    url = f"/review/pools/{pool.public_id}/guidelines/"
    assert admin_client_.post(url, {"text": "   "}).status_code == 400
    admin_client_.post(url, {"text": "Grade 3: the section answers the question.\n\nExample: a deposit rule."})
    admin_client_.post(url, {"text": "Version two <script>alert(1)</script>"})
    admin_client_.post(url, {"text": "Version two <script>alert(1)</script>"})  # same text: no new version
    assert list(PoolGuidelines.objects.filter(pool=pool).values_list("version", flat=True)) == [1, 2]
    item_id = Assignment.objects.filter(reviewer=reviewer_user, pool=pool).first().item.public_id
    page = reviewer_client.get(f"/review/workspace/items/{item_id}/").content.decode()
    assert "Guidelines (version 2)" in page
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in page and "<script>alert(1)" not in page
    assert reviewer_client.post(url, {"text": "mine"}).status_code == 403
    with pytest.raises(Exception, match="append-only"):
        PoolGuidelines.objects.get(pool=pool, version=1).save()


def test_each_guidelines_version_counts_the_judgments_completed_under_it(admin_user_, pool, reviewer_user):
    items = [a.item for a in Assignment.objects.filter(pool=pool, reviewer=reviewer_user).order_by("sort_key")]
    guidelines.guidelines_publish(pool=pool, text="First version.", by=admin_user_)
    _grade(items[0], reviewer_user, 2)
    _grade(items[1], reviewer_user, 2)
    guidelines.guidelines_publish(pool=pool, text="Second version.", by=admin_user_)
    _grade(items[2], reviewer_user, 1)
    history = guidelines.pool_guidelines_history(pool=pool)
    assert [(v.version, v.completed_under) for v in history] == [(2, 1), (1, 2)]


def test_a_new_version_of_a_pool_keeps_its_guidelines(admin_user_, pool):
    guidelines.guidelines_publish(pool=pool, text="Read the whole section first.", by=admin_user_)
    new = pool_new_version(pool=pool, reviewers_per_item=1, created_by=admin_user_)
    assert guidelines.pool_guidelines(pool=new).text == "Read the whole section first."


# --- known-answer items ---------------------------------------------------------------------------------------------


def test_accuracy_on_known_answer_items_has_a_wilson_interval(admin_client_, admin_user_, judged, reviewer_user,
                                                              reviewer2_user):
    pool, items = judged
    # Expected section grade 2 on all six: reviewer 1 matches 6 of 6, reviewer 2 matches 3 of 6.
    for item in items:
        known_answers.known_answer_set(item=item, expected={"section": 2}, by=admin_user_)
    rows = {row.username: row for row in known_answers.reviewer_accuracy(pool=pool)}
    one, two = rows[reviewer_user.username].accuracy, rows[reviewer2_user.username].accuracy
    assert (one.successes, one.n, two.successes, two.n) == (6, 6, 3, 6)
    reference = binomtest(3, 6).proportion_ci(method="wilson")
    assert (two.low, two.high) == pytest.approx((reference.low, reference.high))
    page = admin_client_.get(f"/review/pools/{pool.public_id}/known-answers/").content.decode()
    assert "3 of 6 correct (50%; 95% interval 19–81%)" in page
    assert "6 of 6 correct (100%; 95% interval 61–100%)" in page
    workload_page = admin_client_.get("/review/people/workload/").content.decode()
    assert "3 of 6 correct" in workload_page
    pool_page = admin_client_.get(f"/review/pools/{pool.public_id}/").content.decode()
    assert "3 of 6 correct (50%; 95% interval 19–81%)" in pool_page  # next to agreement


def test_known_answer_items_never_count_in_labels_agreement_or_disagreements(admin_user_, judged):
    pool, items = judged
    assert len(pool_labels(pool=pool)) == 6
    known_answers.known_answer_set(item=items[0], expected={"section": 2}, by=admin_user_)
    labels = pool_labels(pool=pool)
    assert items[0].public_id not in {label.item_id for label in labels} and len(labels) == 5
    assert items[0].public_id not in {r.item_id for r in pool_completed_judgments(pool=pool)}
    assert items[0].public_id not in disagreements.pool_open_disagreements(pool=pool)
    section = next(a for a in agreement.pool_agreement(pool=pool, replicates=50) if a.grade_type == "section")
    assert section.alpha_items == 5
    # The raw export keeps the reviewers' judgments on it, marked, so nobody re-counts them as labels.
    rows = [json.loads(line) for line in exports.pool_jsonl(pool=pool)]
    assert len(rows) == 12
    assert {r["item"] for r in rows if r["known_answer"]} == {items[0].public_id}
    # Withdrawn: it counts again (rows are appended, never changed).
    known_answers.known_answer_withdraw(item=items[0], by=admin_user_)
    assert len(pool_labels(pool=pool)) == 6
    assert KnownAnswer.objects.filter(item=items[0]).count() == 2
    with pytest.raises(Exception, match="append-only"):
        KnownAnswer.objects.filter(item=items[0]).first().save()


def test_an_adjudicated_item_becomes_a_known_answer_item_from_the_admin_page(admin_client_, judged, reviewer2_user):
    pool, items = judged
    judgment_reopen(item=items[0], reviewer=reviewer2_user)
    _grade(items[0], reviewer2_user, 3, passage=2)  # disputed on the passage grade too: both are ruled on
    admin_client_.post(f"/review/agreement/{pool.public_id}/items/{items[0].public_id}/adjudicate/",
                       {"section": "3", "passage": "1"})
    page = admin_client_.get(f"/review/pools/{pool.public_id}/known-answers/").content.decode()
    assert items[0].public_id in page
    response = admin_client_.post(f"/review/pools/{pool.public_id}/known-answers/",
                                  {"action": "set", "item": items[0].public_id})
    assert response.status_code == 302
    assert known_answers.known_answers_of(pool=pool) == {items[0].pk: {"section": 3, "passage": 1}}


def test_bad_known_answer_input_is_refused_naming_the_field(admin_client_, pool):
    url = f"/review/pools/{pool.public_id}/known-answers/"
    item = pool.items.first()
    cases = [({"action": "set", "item": "nope"}, "item:"),
             ({"action": "set", "item": item.public_id, "section": "9"}, "section:"),
             ({"action": "explode"}, "item:")]
    for data, field in cases:
        response = admin_client_.post(url, data)
        assert response.status_code == 400 and field in response.content.decode(), data
    for share in ("80", "ten"):
        response = admin_client_.post(f"/review/assignment/{pool.public_id}/known-answers/mix/", {"share": share})
        assert response.status_code == 400 and "share:" in response.content.decode(), share
    assert not KnownAnswer.objects.exists()


def test_mixing_gives_each_reviewer_known_answer_items_in_their_own_keyed_order(admin_user_, reviewer_user,
                                                                               reviewer2_user):
    pool = make_pool(reviewers=[reviewer_user, reviewer2_user], items=make_items(4, 6), per_item=1)
    held = {r.pk: set(Assignment.objects.filter(pool=pool, reviewer=r).values_list("item_id", flat=True))
            for r in (reviewer_user, reviewer2_user)}
    # Known answers on items reviewer 1 does not hold.
    targets = [item for item in pool.items.order_by("id") if item.pk not in held[reviewer_user.pk]][:4]
    for item in targets:
        known_answers.known_answer_set(item=item, expected={"section": 1}, by=admin_user_)
    mixed = known_answer_mix(pool=pool, share=0.2)
    mine = Assignment.objects.filter(pool=pool, reviewer=reviewer_user).select_related("item")
    added = [a for a in mine if a.item_id not in held[reviewer_user.pk]]
    # 12 ordinary items, share 20%: floor(0.2 * 12 / 0.8) = 3 known-answer items.
    assert len(added) == 3 and mixed.added >= 3
    for a in added:
        assert a.sort_key == assignment_sort_key(pool_public_id=pool.public_id, reviewer_id=reviewer_user.pk,
                                                          item_public_id=a.item.public_id)
    # Mixing again adds nothing (the share is already met).
    assert known_answer_mix(pool=pool, share=0.2).added == 0
    assert ReviewItem.objects.filter(pool=pool).count() == 24


def test_mixing_from_the_page_lands_on_assignment_and_the_page_counts_holders(admin_client_, admin_user_,
                                                                            reviewer_user, reviewer2_user):
    pool = make_pool(reviewers=[reviewer_user, reviewer2_user], items=make_items(4, 6), per_item=1)
    target = pool.items.order_by("id").first()
    known_answers.known_answer_set(item=target, expected={"section": 1}, by=admin_user_)
    before = Assignment.objects.filter(item=target).count()
    old = admin_client_.post(f"/review/pools/{pool.public_id}/known-answers/", {"action": "mix", "share": "50"})
    assert old.status_code == 308 and old["Location"] == f"/review/assignment/{pool.public_id}/known-answers/mix/"
    response = admin_client_.post(old["Location"], {"share": "50"})
    assert response.status_code == 302 and response["Location"] == f"/review/pools/{pool.public_id}/known-answers/"
    after = Assignment.objects.filter(item=target).count()
    assert after == 2 > before
    page = admin_client_.get(response["Location"])
    assert page.context["assigned"] == {target.public_id: 2}
    assert f'<td class="num">{after}</td>' in page.content.decode()


def test_mixing_gives_nothing_to_a_reviewer_who_may_no_longer_grade(admin_user_, reviewer_user, reviewer2_user):
    pool = make_pool(reviewers=[reviewer_user, reviewer2_user], items=make_items(3, 4), per_item=1)
    theirs = set(Assignment.objects.filter(pool=pool, reviewer=reviewer2_user).values_list("item_id", flat=True))
    for item in pool.items.exclude(pk__in=theirs)[:3]:
        known_answers.known_answer_set(item=item, expected={"section": 1}, by=admin_user_)
    reviewer2_user.is_active = False
    reviewer2_user.save()
    assert known_answer_mix(pool=pool, share=0.5).added == 0
    held = Assignment.objects.filter(pool=pool, reviewer=reviewer2_user).values_list("item_id", flat=True)
    assert set(held) == theirs
