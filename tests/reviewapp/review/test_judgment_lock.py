"""The judgment moves only from the revision a decision was read on (the race: tests/trust/load/test_load_races.py)."""

from __future__ import annotations

import pytest
from django.db import transaction

from reviewapp.review.assignment.services import pool_assign
from reviewapp.review.judgments.models import Judgment, JudgmentRevision
from reviewapp.review.pools.services import pool_create_model
from reviewapp.review.workspace.services import (
    JudgmentChanged,
    item_shown_hashes,
    judgment_advance,
    judgment_lock,
    judgment_submit,
)

pytestmark = pytest.mark.django_db

ITEM = {"query_id": "q1", "doc_id": "d1", "query_text": "When is a deposit returned?", "source_heading": "Sec. 1",
        "source_text": "The landlord shall return the deposit.", "passage_caption": "Sec. 1",
        "passage_text": "The landlord shall return the deposit."}


@pytest.fixture
def item(reviewer_user):
    pool = pool_create_model(name="lock", kind="passage", items=[ITEM], declared_rule="test: one item")
    pool_assign(pool=pool, reviewers=[reviewer_user], per_item=1)
    return pool.items.get()


def _save(item, reviewer, grades, *, complete=False):
    return judgment_submit(item=item, reviewer=reviewer, grades=grades, complete=complete,
                                    shown=item_shown_hashes(item))


def test_the_lock_reads_the_current_revision_as_it_is_now(item, reviewer_user):
    _save(item, reviewer_user, {"section": 1, "passage": 1})
    latest = _save(item, reviewer_user, {"section": 2, "passage": 2}, complete=True).revision
    judgment = judgment_lock(item=item, reviewer=reviewer_user)
    assert judgment.current == latest and judgment.current.status == JudgmentRevision.COMPLETE


def test_a_judgment_moved_on_since_the_decision_is_not_advanced(item, reviewer_user):
    first = _save(item, reviewer_user, {"section": 1, "passage": 1}).revision
    _save(item, reviewer_user, {"section": 2, "passage": 2})
    judgment = Judgment.objects.get(item=item, reviewer=reviewer_user)
    with pytest.raises(JudgmentChanged), transaction.atomic():
        decided = JudgmentRevision.objects.create(judgment=judgment, number=judgment.revision_count + 1,
                                                  status="draft", grades={"section": 0, "passage": 0},
                                                  **item_shown_hashes(item))
        judgment_advance(judgment=judgment, decided_on=first, revision=decided)
    assert JudgmentRevision.objects.filter(judgment=judgment).count() == 2  # rolled back with the refusal
    judgment.refresh_from_db()
    assert judgment.current.grades == {"section": 2, "passage": 2}
