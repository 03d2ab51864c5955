"""The judge-once key holds everything that defines a grade's meaning; one function puts items before reviewers."""

from __future__ import annotations

from collections import Counter

import pytest
from django.db import IntegrityError, transaction

from reviewapp.review.agreement.judgments import pool_completed_judgments
from reviewapp.review.assignment.models import Assignment, JudgmentReuse
from reviewapp.review.assignment.services import assignments_place, known_answer_mix, pool_assign_detail
from reviewapp.review.errors import ReviewError
from reviewapp.review.pools import guidelines, known_answers
from reviewapp.review.pools.services import pool_create_model
from reviewapp.review.workspace.services import judgment_submit
from tests.reviewapp.review.conftest import make_items, make_pool

pytestmark = pytest.mark.django_db


def _judged_first(reviewer_user, reviewer2_user):
    first = make_pool(reviewers=[reviewer_user, reviewer2_user])
    for item in first.items.all():
        for reviewer in (reviewer_user, reviewer2_user):
            judgment_submit(item=item, reviewer=reviewer, grades={"section": 3, "passage": 3},
                                     complete=True)
    return first


def _pool(items, *, instructions="", name="second"):
    return pool_create_model(name=name, kind="passage", items=items, declared_rule="the same texts again",
                                reviewers_per_item=2, instructions=instructions)


def _texts_held_twice() -> list:
    counts = Counter(Assignment.objects.values_list("reviewer_id", "item__query_hash", "item__source_hash",
                                                    "item__passage_hash"))
    return [key for key, n in counts.items() if n > 1]


def test_pools_with_other_instructions_share_no_judgments_and_repeat_no_texts(reviewer_user, reviewer2_user):
    _judged_first(reviewer_user, reviewer2_user)
    second = _pool(make_items(), instructions="Grade 3 only when the passage never mentions deposits.")

    result = pool_assign_detail(pool=second, reviewers=[reviewer_user, reviewer2_user])

    assert (result.assigned, result.reused, result.refused) == (0, 0, 24)
    assert not JudgmentReuse.objects.filter(item__pool=second).exists()
    assert pool_completed_judgments(pool=second) == []
    assert _texts_held_twice() == []


def test_pools_with_the_same_texts_and_rules_share_judgments(reviewer_user, reviewer2_user):
    _judged_first(reviewer_user, reviewer2_user)
    second = _pool(make_items())
    result = pool_assign_detail(pool=second, reviewers=[reviewer_user, reviewer2_user])
    assert (result.assigned, result.reused, result.reused_complete, result.refused) == (0, 24, 24, 0)
    assert len(pool_completed_judgments(pool=second)) == 24


def test_pools_under_other_guidelines_share_no_judgments(reviewer_user, reviewer2_user, admin_user_):
    _judged_first(reviewer_user, reviewer2_user)
    second = _pool(make_items())
    guidelines.guidelines_publish(pool=second, text="A deposit clause is never useful.", by=admin_user_)
    result = pool_assign_detail(pool=second, reviewers=[reviewer_user, reviewer2_user])
    assert (result.reused, result.refused) == (0, 24)


def test_a_link_stops_serving_when_one_pool_publishes_other_guidelines(reviewer_user, reviewer2_user, admin_user_):
    first = _judged_first(reviewer_user, reviewer2_user)
    second = _pool(make_items())
    pool_assign_detail(pool=second, reviewers=[reviewer_user, reviewer2_user])
    assert len(pool_completed_judgments(pool=second)) == 24
    guidelines.guidelines_publish(pool=first, text="Grade the section only.", by=admin_user_)
    assert pool_completed_judgments(pool=second) == []
    guidelines.guidelines_publish(pool=second, text="Grade the section only.", by=admin_user_)
    assert len(pool_completed_judgments(pool=second)) == 24


def test_known_answer_mixing_never_repeats_texts_a_reviewer_holds_elsewhere(reviewer_user, reviewer2_user,
                                                                           admin_user_):
    make_pool(reviewers=[reviewer_user, reviewer2_user])
    extra = [dict(item, doc_id=f"NEW-{n}", passage_text=f"A new passage {n}.")
             for n, item in enumerate(make_items(n_queries=1, per_query=4))]
    second = _pool(make_items() + extra)
    pool_assign_detail(pool=second, reviewers=[reviewer_user, reviewer2_user])
    shared = second.items.filter(doc_id__startswith="DOCMARK").order_by("doc_id")[:2]
    for item in shared:
        known_answers.known_answer_set(item=item, expected={"passage": 2}, by=admin_user_)

    mixed = known_answer_mix(pool=second, share=0.5)

    assert mixed.added == 0
    assert _texts_held_twice() == []


def test_the_placement_refuses_an_account_that_sees_model_output(admin_user_, stakeholder_user, reviewer_user):
    pool = make_pool(reviewers=[reviewer_user], per_item=1)
    for user in (admin_user_, stakeholder_user):
        with pytest.raises(ReviewError):
            assignments_place(pool=pool, reviewer=user, items=list(pool.items.all()))
    assert not Assignment.objects.filter(reviewer__in=[admin_user_, stakeholder_user]).exists()


def test_the_database_refuses_the_same_texts_twice_to_one_reviewer(reviewer_user):
    first = make_pool(reviewers=[reviewer_user], per_item=1)
    second = _pool(make_items())
    item = second.items.get(doc_id="DOCMARK-0-0")
    with pytest.raises(IntegrityError), transaction.atomic():
        Assignment.objects.create(item=item, pool=second, reviewer=reviewer_user, sort_key="0" * 64)
    assert first.items.count() == 12
