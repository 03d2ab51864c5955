"""The stored order, states and tallies the queue pages read stay what a fresh count of the queue says.

After every kind of write that moves an item in a reviewer's queue (a draft, a completion, a reopen, an undo, a skip
and its undo, new texts for an item, an unassignment), the stored columns and the tallies equal those
``queue_rebuild`` writes from scratch, and the pages show the same order and positions as ``reviewer_queues`` (the
whole queue read in ``REVIEWER_ORDER``).
"""

from __future__ import annotations

import pytest

from reviewapp.review.assignment.models import Assignment, QueueTally
from reviewapp.review.assignment.queue_order import queue_rebuild
from reviewapp.review.assignment.services import assignment_unassign, item_rebind
from reviewapp.review.judgments.models import ReviewItem
from reviewapp.review.workspace.queue import reviewer_queue_pages, reviewer_queues
from reviewapp.review.workspace.selectors import reviewer_item
from reviewapp.review.workspace.services import (
    assignment_skip_set,
    item_shown_hashes,
    judgment_reopen,
    judgment_submit,
    judgment_undo,
)
from tests.reviewapp.review.conftest import make_items, make_pool

pytestmark = pytest.mark.django_db


def _stored() -> tuple[list, list]:
    rows = sorted(Assignment.objects.values_list("pk", "shuffle_place", "seq", "state"))
    tallies = sorted(QueueTally.objects.values_list("reviewer_id", "pool_id", "todo", "draft", "complete",
                                                    "skipped", "skip_marks"))
    return rows, tallies


def _assert_in_step(*reviewers) -> None:
    kept = _stored()
    for reviewer_id, pool_id in set(Assignment.objects.values_list("reviewer_id", "pool_id")):
        queue_rebuild(reviewer_id=reviewer_id, pool_id=pool_id)
    assert _stored() == kept
    for reviewer in reviewers:
        for whole, page in zip(reviewer_queues(reviewer=reviewer),
                               reviewer_queue_pages(reviewer=reviewer, page_size=1000), strict=True):
            assert [(e.item_id, e.position, e.state) for e in whole.entries] == \
                [(e.item_id, e.position, e.state) for e in page.entries]
            assert {state: sum(1 for e in whole.entries if e.state == state) for state in page.counts} == page.counts
            for entry in whole.entries:
                view = reviewer_item(reviewer=reviewer, item_id=entry.item_id)
                assert (view.position, view.total) == (entry.position, len(whole.entries))


def _item(reviewer, n: int) -> ReviewItem:
    entry = reviewer_queues(reviewer=reviewer)[0].entries[n]
    return ReviewItem.objects.get(public_id=entry.item_id)


def _grade(item, reviewer, *, complete: bool) -> None:
    judgment_submit(item=item, reviewer=reviewer, grades={"section": 2, "passage": 1}, complete=complete,
                             shown=item_shown_hashes(item))


def test_every_write_that_moves_an_item_keeps_the_stored_order_and_tallies_equal_to_a_recount(
        reviewer_user, reviewer2_user):
    pool = make_pool(reviewers=[reviewer_user, reviewer2_user], items=make_items(n_queries=4, per_query=3))
    _assert_in_step(reviewer_user, reviewer2_user)

    _grade(_item(reviewer_user, 0), reviewer_user, complete=False)
    _grade(_item(reviewer_user, 1), reviewer_user, complete=True)
    _grade(_item(reviewer_user, 2), reviewer_user, complete=True)
    _assert_in_step(reviewer_user, reviewer2_user)

    judgment_reopen(item=_item(reviewer_user, 2), reviewer=reviewer_user)
    judgment_undo(item=_item(reviewer_user, 0), reviewer=reviewer_user)
    _assert_in_step(reviewer_user)

    for n in (3, 1, 5):  # an open one, a completed one, another open one: skipped in that order
        assignment_skip_set(reviewer=reviewer_user, item=_item(reviewer_user, n), skipped=True)
    _assert_in_step(reviewer_user)
    assert [e.state for e in reviewer_queues(reviewer=reviewer_user)[0].entries][-3:] == \
        ["skipped", "complete", "skipped"]
    skipped_last = reviewer_queues(reviewer=reviewer_user)[0].entries[-1]
    assignment_skip_set(reviewer=reviewer_user,
                                  item=ReviewItem.objects.get(public_id=skipped_last.item_id), skipped=False)
    _assert_in_step(reviewer_user)

    # New texts for the completed item (skipped for later before it was completed): the judgment goes stale, and
    # the item is open again, still at the end of the queue.
    done = next(e for e in reviewer_queues(reviewer=reviewer_user)[0].entries if e.state == "complete")
    item = ReviewItem.objects.get(public_id=done.item_id)
    before = reviewer_queue_pages(reviewer=reviewer_user)[0].counts
    item_rebind(item=item, passage_text=item.passage_text + " (amended)")
    after = reviewer_queue_pages(reviewer=reviewer_user)[0].counts
    assert (after["complete"], after["skipped"]) == (before["complete"] - 1, before["skipped"] + 1)
    _assert_in_step(reviewer_user, reviewer2_user)

    assignment_unassign(pool=pool, reviewer=reviewer2_user)
    assert not QueueTally.objects.filter(reviewer=reviewer2_user).exists()  # nothing judged: nothing kept
    _assert_in_step(reviewer_user, reviewer2_user)
