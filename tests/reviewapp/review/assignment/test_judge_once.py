"""Judge once: a reviewer's judgment of the same texts serves every pool holding them, for that reviewer only."""

from __future__ import annotations

import json

import pytest

from reviewapp.review.agreement.exports import pool_jsonl
from reviewapp.review.agreement.judgments import pool_completed_judgments, pool_judgments
from reviewapp.review.agreement.selectors import pool_labels
from reviewapp.review.assignment.models import Assignment, JudgmentReuse
from reviewapp.review.assignment.reuse import completed_judges, pool_reuse_counts
from reviewapp.review.assignment.services import item_rebind, pool_assign_detail
from reviewapp.review.judgments.models import Judgment, JudgmentRevision
from reviewapp.review.kinds import kinds_all
from reviewapp.review.pools.services import pool_create_model
from reviewapp.review.workspace.queue import reviewer_queues
from reviewapp.review.workspace.services import judgment_reopen, judgment_submit
from tests.conftest import make_user
from tests.reviewapp.review.conftest import make_items, make_pool

pytestmark = pytest.mark.django_db


@pytest.fixture
def third(django_user_model):
    return make_user(django_user_model, "tess_reviewer", "reviewer")


def _second_pool(items, name="second pool"):
    return pool_create_model(name=name, kind="passage", items=items, declared_rule="the same texts again",
                                reviewers_per_item=2)


def _complete(pool, reviewer, n, grade=2):
    """``reviewer`` completes their first ``n`` items of ``pool`` (by query and doc id) with ``grade``."""
    items = pool.items.filter(assignments__reviewer=reviewer).order_by("query_id", "doc_id")[:n]
    for item in items:
        judgment_submit(item=item, reviewer=reviewer, grades={"section": grade, "passage": grade},
                                 complete=True)
    return list(items)


def test_a_second_pool_of_the_same_texts_adds_only_new_items_and_says_how_many_were_reused(
        reviewer_user, reviewer2_user):
    first = make_pool(reviewers=[reviewer_user, reviewer2_user])  # 12 items, both reviewers on each
    _complete(first, reviewer_user, 5)
    _complete(first, reviewer2_user, 3)
    extra = [dict(item, doc_id=f"NEW-{n}", passage_text=f"A new passage {n}.") for n, item in
             enumerate(make_items(n_queries=1, per_query=2))]
    second = _second_pool(make_items() + extra)

    result = pool_assign_detail(pool=second, reviewers=[reviewer_user, reviewer2_user])

    assert (result.assigned, result.reused, result.reused_complete) == (4, 24, 8)
    assert result.per_reviewer[reviewer_user.pk] == {"assigned": 2, "reused": 12}
    # each reviewer's queue of the second pool holds only the two new items
    for reviewer in (reviewer_user, reviewer2_user):
        queue = next(q for q in reviewer_queues(reviewer=reviewer) if q.pool_id == second.public_id)
        held = set(Assignment.objects.filter(pool=second, reviewer=reviewer).values_list("item__doc_id", flat=True))
        assert queue.total == 2 and held == {"NEW-0", "NEW-1"}
    # the 8 completed judgments count in the second pool at once, once each, with their provenance
    counted = pool_completed_judgments(pool=second)
    assert len(counted) == 8
    assert len({(r.reviewer_id, r.item_id) for r in counted}) == 8
    assert all(r.reused_from["pool"] == first.public_id for r in counted)
    revisions = {(j.reviewer_id, j.item.doc_id): (j.pk, j.current.number)
                 for j in Judgment.objects.filter(item__pool=first).select_related("item", "current")}
    for record in counted:
        assert (record.reused_from["judgment"], record.reused_from["revision"]) == revisions[
            (record.reviewer_id, record.doc_id)]
    agreed = [label for label in pool_labels(pool=second) if label.state == "agreed"]
    assert len(agreed) == 3 and all(len(label.grades) == 2 for label in agreed)
    # nothing was copied: the second pool has no judgment rows of its own
    assert not Judgment.objects.filter(item__pool=second).exists()
    assert pool_reuse_counts(pool=second) == {"links": 24, "items": 12, "complete": 8}
    lines = [json.loads(line) for line in pool_jsonl(pool=second)]
    assert len(lines) == 8 and all(line["reused_from"]["pool"] == first.public_id for line in lines)
    # assigning again adds nothing
    again = pool_assign_detail(pool=second, reviewers=[reviewer_user, reviewer2_user])
    assert (again.assigned, again.reused) == (0, 0)


def test_a_judgment_completed_later_in_the_first_pool_serves_the_second_too(reviewer_user, reviewer2_user):
    first = make_pool(reviewers=[reviewer_user, reviewer2_user])
    second = _second_pool(make_items())
    assert pool_assign_detail(pool=second, reviewers=[reviewer_user, reviewer2_user]).reused_complete == 0
    _complete(first, reviewer_user, 4, grade=3)
    _complete(first, reviewer2_user, 4, grade=3)
    labels = [label for label in pool_labels(pool=second) if label.is_grade]
    assert len(labels) == 4 and {label.value for label in labels} == {3}


def test_one_reviewers_judgment_never_serves_another_reviewer(reviewer_user, reviewer2_user, third):
    first = make_pool(reviewers=[reviewer_user], per_item=1)
    _complete(first, reviewer_user, 12)
    second = _second_pool(make_items())

    result = pool_assign_detail(pool=second, reviewers=[reviewer2_user, third])

    assert (result.assigned, result.reused) == (24, 0)
    assert pool_completed_judgments(pool=second) == []
    assert not any(label.is_grade for label in pool_labels(pool=second))
    # even a link written by hand for another reviewer reads only that reviewer's own judgment: none
    source = first.items.get(doc_id="DOCMARK-0-0")
    target = second.items.get(doc_id="DOCMARK-0-0")
    Assignment.objects.filter(pool=second, reviewer=reviewer2_user, item=target).delete()
    JudgmentReuse.objects.create(item=target, reviewer=reviewer2_user, source_item=source)
    assert [r for r in pool_judgments(second) if r.item_id == target.public_id] == []
    # a third pool for the first reviewer and a reviewer who holds the texts (unjudged) in the second pool:
    # each serves the third pool with their own judgment only; only the first reviewer's count so far
    third_pool = _second_pool(make_items(), name="third pool")
    mixed = pool_assign_detail(pool=third_pool, reviewers=[reviewer_user, third])
    assert (mixed.assigned, mixed.reused, mixed.reused_complete) == (0, 24, 12)
    assert {r.reviewer_id for r in pool_completed_judgments(pool=third_pool)} == {reviewer_user.pk}
    assert not any(label.is_grade for label in pool_labels(pool=third_pool))  # one reviewer is not two


def test_other_texts_or_another_kind_are_never_reused(reviewer_user, reviewer2_user):
    first = make_pool(reviewers=[reviewer_user, reviewer2_user])
    _complete(first, reviewer_user, 12)
    _complete(first, reviewer2_user, 12)
    changed = make_items()
    changed[0] = dict(changed[0], passage_text=changed[0]["passage_text"] + " (amended)")
    second = _second_pool(changed)
    result = pool_assign_detail(pool=second, reviewers=[reviewer_user, reviewer2_user])
    assert (result.assigned, result.reused) == (2, 22)
    amended = second.items.get(doc_id=changed[0]["doc_id"])
    assert not JudgmentReuse.objects.filter(item=amended).exists()
    assert len(pool_completed_judgments(pool=second)) == 22

    # texts that change after the link: the reused judgment is stale in the second pool, as it would be natively
    item = second.items.get(doc_id="DOCMARK-1-1")
    item_rebind(item=item, passage_text="Another passage altogether.")
    records = [r for r in pool_judgments(second) if r.item_id == item.public_id]
    assert len(records) == 2 and all(r.stale for r in records)
    assert len(pool_completed_judgments(pool=second)) == 20

    other_kind = next(key for key in kinds_all() if key != "passage")
    third_pool = pool_create_model(name="another scale", kind=other_kind, items=make_items(),
                                      declared_rule="the same texts on another scale", reviewers_per_item=2)
    other = pool_assign_detail(pool=third_pool, reviewers=[reviewer_user, reviewer2_user])
    # another scale is another question, and the same texts are never shown twice to one reviewer
    assert (other.assigned, other.reused, other.refused) == (0, 0, 24)


def test_a_reviewer_holding_the_texts_in_two_pools_counts_once(reviewer_user, reviewer2_user):
    first = make_pool(reviewers=[reviewer_user, reviewer2_user])
    _complete(first, reviewer_user, 12, grade=1)
    _complete(first, reviewer2_user, 12, grade=1)
    second = _second_pool(make_items())
    pool_assign_detail(pool=second, reviewers=[reviewer_user, reviewer2_user])
    third_pool = _second_pool(make_items(), name="third pool")
    result = pool_assign_detail(pool=third_pool, reviewers=[reviewer_user, reviewer2_user])
    # the third pool links to the first pool's native judgments, never to the second pool's links
    assert result.reused == 24
    assert set(JudgmentReuse.objects.filter(item__pool=third_pool).values_list("source_item__pool", flat=True)) == {
        first.pk}
    labels = pool_labels(pool=third_pool)
    assert all(label.state == "agreed" and label.grades == (1, 1) for label in labels)
    # a native judgment in the same pool wins over a link: still one record per reviewer and item
    item = third_pool.items.get(doc_id="DOCMARK-2-3")
    JudgmentReuse.objects.filter(item=item, reviewer=reviewer_user).delete()
    # (a row from before texts keys were stored: the database refuses such a repeat now)
    Assignment.objects.bulk_create([Assignment(item=item, pool=third_pool, reviewer=reviewer_user, sort_key="0" * 64)])
    judgment_submit(item=item, reviewer=reviewer_user, grades={"section": 1, "passage": 1}, complete=True)
    JudgmentReuse.objects.create(item=item, reviewer=reviewer_user, source_item=first.items.get(doc_id="DOCMARK-2-3"))
    records = [r for r in pool_judgments(third_pool) if r.item_id == item.public_id]
    assert sorted((r.reviewer_id, r.reused_from is None) for r in records) == sorted(
        [(reviewer_user.pk, True), (reviewer2_user.pk, False)])


def test_completed_judges_are_counted_per_reviewer_on_current_texts_only(reviewer_user, reviewer2_user):
    first = make_pool(reviewers=[reviewer_user, reviewer2_user])
    done = _complete(first, reviewer_user, 2)
    keys = [(i.query_hash, i.source_hash, i.passage_hash) for i in first.items.all()]
    judges = completed_judges(kind="passage", keys=keys)
    assert judges == {
        (i.query_hash, i.source_hash, i.passage_hash): {reviewer_user.pk} for i in done}
    assert completed_judges(kind="passage", keys=keys, reviewer_ids=[reviewer2_user.pk]) == {}
    judgment_reopen(item=done[0], reviewer=reviewer_user)
    assert len(completed_judges(kind="passage", keys=keys)) == 1
    assert JudgmentRevision.objects.filter(judgment__item=done[0]).count() == 2  # append-only


def test_admins_see_each_reused_judgments_provenance_and_reviewers_do_not(
        reviewer_user, reviewer2_user, admin_client_, reviewer_client):
    first = make_pool(reviewers=[reviewer_user, reviewer2_user])
    done = _complete(first, reviewer_user, 2)
    second = _second_pool(make_items())
    admin_client_.post(f"/review/assignment/{second.public_id}/assign/",
                       {"reviewers": [reviewer_user.pk, reviewer2_user.pk], "per_item": 2})
    page = admin_client_.get(f"/review/pools/{second.public_id}/").content.decode()
    assert "24 links over 12 items; 2 complete now." in page
    judgments = {j.item_id: j for j in Judgment.objects.filter(item__in=done, reviewer=reviewer_user)}
    for item in done:
        assert f"{judgments[item.pk].pk} / 1" in page and item.doc_id in page
    assert page.count(f'href="/review/pools/{first.public_id}/"') == 2
    export = b"".join(admin_client_.get(f"/review/agreement/{second.public_id}/judgments.jsonl").streaming_content)
    assert export.count(first.public_id.encode()) == 2
    # the reviewer's queue: nothing of the second pool to do twice, and no word of where a judgment serves
    home = reviewer_client.get("/review/workspace/").content.decode()
    assert second.public_id not in home and "reused" not in home.lower()


def test_a_reviewer_taken_off_the_first_pool_before_judging_gets_the_item_back_in_the_second(
        reviewer_user, reviewer2_user, third):
    from reviewapp.review.assignment.services import assignment_unassign

    first = make_pool(reviewers=[reviewer_user, reviewer2_user])
    _complete(first, reviewer2_user, 3)
    second = _second_pool(make_items())
    assert pool_assign_detail(pool=second, reviewers=[reviewer_user, reviewer2_user]).reused == 24
    assignment_unassign(pool=first, reviewer=reviewer2_user)  # their 9 unjudged items go; 3 judged stay

    again = pool_assign_detail(pool=second, reviewers=[reviewer_user, third])

    # the 9 links that can no longer serve are gone and those items get a reviewer again; the judged 3 stay
    assert (again.assigned, again.reused) == (9, 0)
    assert JudgmentReuse.objects.filter(item__pool=second, reviewer=reviewer2_user).count() == 3
    assert Assignment.objects.filter(pool=second, reviewer=third).count() == 9
    assert len(pool_completed_judgments(pool=second)) == 3
