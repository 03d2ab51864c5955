"""Revisions and rulings are evidence: the ORM inserts them and refuses every update or delete of one."""

from __future__ import annotations

import pytest

from reviewapp.core.models import AppendOnlyError
from reviewapp.review.agreement import disagreements
from reviewapp.review.agreement.models import Adjudication
from reviewapp.review.judgments.models import JudgmentRevision
from reviewapp.review.workspace.services import judgment_reopen, judgment_submit
from tests.helpers import shown_hashes

pytestmark = pytest.mark.django_db


def test_a_revision_or_a_ruling_cannot_be_edited_or_deleted_through_the_orm(pool, reviewer_user, reviewer2_user,
                                                                            admin_user_):
    item = pool.items.order_by("id").first()
    judgment_submit(item=item, reviewer=reviewer_user, grades={"section": 2, "passage": 1},
                             complete=True, shown=shown_hashes(item.public_id))
    judgment_submit(item=item, reviewer=reviewer2_user, grades={"section": 1, "passage": 1},
                    complete=True, shown=shown_hashes(item.public_id))  # a disagreement, for the ruling to resolve
    disagreements.adjudication_record(item=item, grade_type="section", value=3, adjudicator=admin_user_)
    revision = JudgmentRevision.objects.get(judgment__item=item, judgment__reviewer=reviewer_user)
    ruling = Adjudication.objects.get(item=item)

    revision.grades = {"section": 0, "passage": 0}
    with pytest.raises(AppendOnlyError, match="append-only"):
        revision.save()
    ruling.value = 0
    with pytest.raises(AppendOnlyError, match="append-only"):
        ruling.save()
    for queryset in (JudgmentRevision.objects.filter(pk=revision.pk), Adjudication.objects.filter(pk=ruling.pk)):
        with pytest.raises(AppendOnlyError, match="never updated"):
            queryset.update(note="forged")
        with pytest.raises(AppendOnlyError, match="never deleted"):
            queryset.delete()

    assert JudgmentRevision.objects.get(pk=revision.pk).grades == {"section": 2, "passage": 1}
    assert Adjudication.objects.get(pk=ruling.pk).value == 3
    # A later state is still a new row.
    judgment_reopen(item=item, reviewer=reviewer_user)
    rows = JudgmentRevision.objects.filter(judgment__item=item, judgment__reviewer=reviewer_user)
    held = rows.count()
    judgment_submit(item=item, reviewer=reviewer_user, grades={"section": 1, "passage": 1},
                             complete=False, shown=shown_hashes(item.public_id))
    assert rows.count() == held + 1
