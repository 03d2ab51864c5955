"""Writes of the reviewer's workspace beyond saving a judgment: skip for later, and back.

A skip is a private marker on the reviewer's own assignment: it moves the item to the end of their order and says
nothing about the item. (Undo is a judgment's revision: ``judgments.services.judgment_undo``.)
"""

from __future__ import annotations

from django.contrib.auth.models import User
from django.db import transaction

from reviewapp.review.assignment.models import Assignment, AssignmentSkip
from reviewapp.review.assignment.queue_order import assignment_skip_mark
from reviewapp.review.errors import NotAssigned
from reviewapp.review.judgments.models import ReviewItem


def _own_assignment(*, reviewer: User, item: ReviewItem) -> Assignment:
    assignment = Assignment.objects.filter(item=item, reviewer=reviewer).first()
    if assignment is None:
        raise NotAssigned(item.public_id)
    return assignment


@transaction.atomic
def assignment_skip_set(*, reviewer: User, item: ReviewItem, skipped: bool) -> bool:
    """Mark (or unmark) the reviewer's item as skipped for later. Returns True when something changed."""
    assignment = _own_assignment(reviewer=reviewer, item=item)
    if skipped:
        _, changed = AssignmentSkip.objects.get_or_create(assignment=assignment)
    else:
        changed = AssignmentSkip.objects.filter(assignment=assignment).delete()[0] > 0
    if changed:
        assignment_skip_mark(assignment=assignment, skipped=skipped)
    return changed
