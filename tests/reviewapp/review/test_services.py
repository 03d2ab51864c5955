"""Pools, assignments, append-only judgments, stale marking and the label rule, through the services."""

from __future__ import annotations

from collections import Counter

import pytest
from django.contrib.auth.models import Group

from reviewapp.core.auth.roles import ensure_role_groups
from reviewapp.review.agreement import exports
from reviewapp.review.agreement import selectors as agreement
from reviewapp.review.agreement.disagreements import adjudication_record
from reviewapp.review.agreement.judgments import pool_completed_judgments, pool_stale_judgments
from reviewapp.review.agreement.models import Adjudication
from reviewapp.review.agreement.selectors import pool_labels
from reviewapp.review.assignment.models import Assignment
from reviewapp.review.assignment.services import item_rebind, pool_assign
from reviewapp.review.errors import NotAssigned, ReviewError
from reviewapp.review.exchange.selectors import label_source_labels, label_source_list
from reviewapp.review.exchange.services import label_source_import
from reviewapp.review.judgments.hashes import passage_hash_of, query_hash_of
from reviewapp.review.judgments.models import Judgment, JudgmentRevision, ReviewItem
from reviewapp.review.pools.services import pool_create_model
from reviewapp.review.workspace.queue import reviewer_queues
from reviewapp.review.workspace.services import judgment_reopen, judgment_submit
from tests.reviewapp.review.conftest import make_items, make_pool


def _reviewers(django_user_model, n):
    ensure_role_groups()
    group = Group.objects.get(name="reviewer")
    users = []
    for i in range(n):
        user = django_user_model.objects.create_user(username=f"rev{i}", password="x-long-password")
        user.groups.add(group)
        users.append(user)
    return users


def test_it_refuses_a_bad_item_and_writes_nothing(db):
    items = make_items()
    items[5] = {**items[5], "query_text": ""}
    with pytest.raises(ReviewError, match=r"items\[5\]\.query_text"):
        pool_create_model(name="p", kind="passage", items=items, declared_rule="explicit list")
    assert ReviewItem.objects.count() == 0


def test_it_refuses_an_unknown_kind_and_a_missing_rule(db):
    with pytest.raises(ReviewError, match="kind"):
        pool_create_model(name="p", kind="nope", items=make_items(), declared_rule="x")
    with pytest.raises(ReviewError, match="declared_rule"):
        pool_create_model(name="p", kind="passage", items=make_items(), declared_rule=" ")


def test_it_records_the_pool_as_declared_with_hashes(db):
    pool = pool_create_model(
        name="p", kind="passage", items=make_items(), declared_rule="union of top 5", declared_params={"k": 5}
    )
    assert pool.declared_rule == "union of top 5"
    assert pool.declared_params == {"k": 5}
    item = pool.items.get(doc_id="DOCMARK-0-0")
    assert item.query_hash == query_hash_of(item.query_text)
    assert item.passage_hash == passage_hash_of(item.passage_caption, item.passage_text)
    assert len(item.public_id) >= 20


def test_it_balances_assignments_across_reviewers(django_user_model, db):
    people = _reviewers(django_user_model, 5)
    pool = make_pool(reviewers=people, items=make_items(n_queries=5, per_query=5), per_item=2)
    per_reviewer = Counter(Assignment.objects.filter(pool=pool).values_list("reviewer_id", flat=True))
    assert sum(per_reviewer.values()) == 50
    assert max(per_reviewer.values()) - min(per_reviewer.values()) <= 1
    per_item = Counter(Assignment.objects.filter(pool=pool).values_list("item_id", flat=True))
    assert set(per_item.values()) == {2}
    # running it again adds nothing
    assert pool_assign(pool=pool, reviewers=people) == 0


def test_it_refuses_to_assign_to_a_non_reviewer(admin_user_, reviewer_user, db):
    pool = pool_create_model(name="p", kind="passage", items=make_items(), declared_rule="x")
    with pytest.raises(ReviewError, match="can see model output"):
        pool_assign(pool=pool, reviewers=[admin_user_, reviewer_user])


def test_each_save_is_a_new_revision_and_reopen_keeps_history(pool, reviewer_user):
    item = pool.items.first()
    judgment_submit(item=item, reviewer=reviewer_user, grades={"section": 2}, complete=False)
    judgment_submit(item=item, reviewer=reviewer_user, grades={"section": 2, "passage": "u"}, complete=True)
    judgment_reopen(item=item, reviewer=reviewer_user)
    revisions = list(JudgmentRevision.objects.filter(judgment__item=item).order_by("number"))
    assert [(r.number, r.status) for r in revisions] == [(1, "draft"), (2, "complete"), (3, "draft")]
    assert revisions[1].grades == {"section": 2, "passage": "unknown"}
    judgment = Judgment.objects.get(item=item, reviewer=reviewer_user)
    assert judgment.current_id == revisions[2].pk
    # reopened -> no longer counts
    assert pool_completed_judgments(pool=pool) == []


def test_double_submitting_the_same_state_makes_no_duplicate(pool, reviewer_user):
    item = pool.items.first()
    first = judgment_submit(item=item, reviewer=reviewer_user, grades={"section": 1, "passage": 0},
                                     complete=True)
    second = judgment_submit(item=item, reviewer=reviewer_user, grades={"section": "1", "passage": "0"},
                                      complete=True)
    assert first.created and not second.created
    assert second.revision.pk == first.revision.pk
    assert JudgmentRevision.objects.filter(judgment__item=item).count() == 1


def test_unknown_stays_unknown_and_never_becomes_zero(pool, reviewer_user, reviewer2_user):
    item = pool.items.first()
    judgment_submit(item=item, reviewer=reviewer_user, grades={"section": "u", "passage": "u"},
                             complete=True)
    judgment_submit(item=item, reviewer=reviewer2_user, grades={"section": "unknown", "passage": 0},
                             complete=True)
    record = next(r for r in pool_completed_judgments(pool=pool) if r.reviewer_id == reviewer_user.pk)
    assert record.grades == {"section": "unknown", "passage": "unknown"}
    label = next(lab for lab in pool_labels(pool=pool) if lab.item_id == item.public_id)
    assert label.state == "unresolved" and label.value is None
    assert f"{item.doc_id} 0" not in exports.pool_qrels(pool=pool)
    assert item.doc_id not in exports.pool_qrels(pool=pool)


def test_complete_needs_every_grade_answered(pool, reviewer_user):
    with pytest.raises(ReviewError, match="passage"):
        judgment_submit(item=pool.items.first(), reviewer=reviewer_user, grades={"section": 3},
                                 complete=True)


def test_a_grade_off_the_scale_is_refused(pool, reviewer_user):
    with pytest.raises(ReviewError, match=r"grades\.section"):
        judgment_submit(item=pool.items.first(), reviewer=reviewer_user, grades={"section": 4},
                                 complete=False)


def test_an_unassigned_reviewer_cannot_judge(pool, django_user_model):
    (outsider,) = _reviewers(django_user_model, 1)
    with pytest.raises(NotAssigned):
        judgment_submit(item=pool.items.first(), reviewer=outsider, grades={}, complete=False)


def test_a_changed_source_makes_judgments_stale_and_excluded(pool, reviewer_user, reviewer2_user):
    item = pool.items.first()
    for user in (reviewer_user, reviewer2_user):
        judgment_submit(item=item, reviewer=user, grades={"section": 3, "passage": 3}, complete=True)
    assert len(pool_completed_judgments(pool=pool)) == 2
    assert f"{item.query_id} 0 {item.doc_id} 3" in exports.pool_qrels(pool=pool)

    item_rebind(item=item, source_text=item.source_text + " (amended)")

    assert pool_completed_judgments(pool=pool) == []
    stale = pool_stale_judgments(pool=pool)
    assert {s.reviewer_username for s in stale} == {reviewer_user.username, reviewer2_user.username}
    assert item.doc_id not in exports.pool_qrels(pool=pool)
    assert agreement.pool_progress(pool=pool).stale == 2
    # the reviewer sees that they must grade again, and a new save is bound to the new hashes
    queue = reviewer_queues(reviewer=reviewer_user)[0]
    assert any(entry.needs_regrade for entry in queue.entries)
    judgment_submit(item=item, reviewer=reviewer_user, grades={"section": 3, "passage": 3}, complete=True)
    assert len(pool_completed_judgments(pool=pool)) == 1
    assert JudgmentRevision.objects.filter(judgment__item=item, judgment__reviewer=reviewer_user).count() == 2


def test_the_label_rule_is_adjudicated_else_agreed_else_unresolved(pool, reviewer_user, reviewer2_user,
                                                                   admin_user_):
    a, b, c = list(pool.items.order_by("doc_id"))[:3]
    for user, grade in ((reviewer_user, 2), (reviewer2_user, 2)):
        judgment_submit(item=a, reviewer=user, grades={"section": 1, "passage": grade}, complete=True)
    for user, grade in ((reviewer_user, 1), (reviewer2_user, 3)):
        judgment_submit(item=b, reviewer=user, grades={"section": 1, "passage": grade}, complete=True)
    judgment_submit(item=c, reviewer=reviewer_user, grades={"section": 1, "passage": 3}, complete=True)
    labels = {lab.item_id: lab for lab in pool_labels(pool=pool, grade_type="passage")}
    assert (labels[a.public_id].state, labels[a.public_id].value) == ("agreed", 2)
    assert (labels[b.public_id].state, labels[b.public_id].reason) == ("unresolved", "reviewers disagree")
    assert labels[c.public_id].state == "unresolved"  # one of two judgments
    disagreements = agreement.pool_disagreements(pool=pool)
    assert [(d.item_id, d.grade_type) for d in disagreements] == [(b.public_id, "passage")]

    adjudication_record(item=b, grade_type="passage", value="3", adjudicator=admin_user_)
    labels = {lab.item_id: lab for lab in pool_labels(pool=pool, grade_type="passage")}
    assert (labels[b.public_id].state, labels[b.public_id].value) == ("adjudicated", 3)
    qrels = exports.pool_qrels(pool=pool, grade_type="passage").splitlines()
    assert sorted(qrels) == sorted([f"{a.query_id} 0 {a.doc_id} 2", f"{b.query_id} 0 {b.doc_id} 3"])


def test_a_ruling_is_refused_naming_the_item_unless_its_reviewers_dispute_it_and_then_nothing_is_written(
        pool, reviewer_user, reviewer2_user, admin_user_):
    agreed, disputed, single = list(pool.items.order_by("doc_id"))[:3]
    for user, passage in ((reviewer_user, 2), (reviewer2_user, 2)):
        judgment_submit(item=agreed, reviewer=user, grades={"section": 1, "passage": passage}, complete=True)
    for user, passage in ((reviewer_user, 1), (reviewer2_user, 3)):
        judgment_submit(item=disputed, reviewer=user, grades={"section": 1, "passage": passage}, complete=True)
    judgment_submit(item=single, reviewer=reviewer_user, grades={"section": 1, "passage": 3}, complete=True)
    judgment_submit(item=single, reviewer=reviewer2_user, grades={"section": 1, "passage": 0}, complete=False)

    with pytest.raises(ReviewError, match=f"item {agreed.public_id} \\(passage\\): a ruling resolves a "
                                          "disagreement, and there is none: the 2 reviewers who completed it agree"):
        adjudication_record(item=agreed, grade_type="passage", value=3, adjudicator=admin_user_)
    with pytest.raises(ReviewError, match=f"item {single.public_id} \\(passage\\): .* none: 1 reviewer completed"):
        adjudication_record(item=single, grade_type="passage", value=3, adjudicator=admin_user_)
    with pytest.raises(ReviewError, match="none: the 2 reviewers who completed it agree"):  # per grade type
        adjudication_record(item=disputed, grade_type="section", value=3, adjudicator=admin_user_)
    assert not Adjudication.objects.exists()
    labels = {lab.item_id: lab for lab in pool_labels(pool=pool, grade_type="passage")}
    assert (labels[agreed.public_id].state, labels[single.public_id].state) == ("agreed", "unresolved")

    ruling = adjudication_record(item=disputed, grade_type="passage", value=2, adjudicator=admin_user_)
    assert list(Adjudication.objects.all()) == [ruling]
    labels = {lab.item_id: lab for lab in pool_labels(pool=pool, grade_type="passage")}
    assert (labels[disputed.public_id].state, labels[disputed.public_id].value) == ("adjudicated", 2)


def test_a_reviewer_cannot_adjudicate(pool, reviewer_user):
    with pytest.raises(ReviewError, match="may not adjudicate"):
        adjudication_record(item=pool.items.first(), grade_type="passage", value=1, adjudicator=reviewer_user)


def test_provisional_label_sources_are_kept_apart_from_passage_labels(pool, admin_user_):
    labels = [{"query_id": f"q{i}", "doc_id": f"s{i}", "grade_type": "section", "value": i % 4} for i in range(60)]
    label_source_import(name="source-derived sections", labels=labels, created_by=admin_user_)
    (summary,) = label_source_list()
    assert summary.provisional and summary.labels == 60 and summary.grade_types == ["section"]
    assert all(lab.provisional for lab in label_source_labels(name="source-derived sections"))
    # none of them is a passage label of the pool
    assert exports.pool_qrels(pool=pool) == ""
    assert all(lab.state == "unresolved" for lab in pool_labels(pool=pool))
    with pytest.raises(ReviewError, match="exists already"):
        label_source_import(name="source-derived sections", labels=labels)


def test_a_clause_pool_grades_yes_no_unknown(reviewer_user, reviewer2_user):
    items = [
        {"query_id": "Non-Compete", "doc_id": f"contract-{i}", "query_text": "Non-Compete: restricts competing.",
         "source_heading": "Contract excerpt", "source_text": "The parties agree ...",
         "passage_text": f"Clause {i}"}
        for i in range(3)
    ]
    pool = make_pool(reviewers=[reviewer_user, reviewer2_user], kind="clause", items=items)
    item = pool.items.order_by("doc_id").first()
    for user in (reviewer_user, reviewer2_user):
        judgment_submit(item=item, reviewer=user, grades={"clause": "y"}, complete=True)
    with pytest.raises(ReviewError):
        judgment_submit(item=item, reviewer=reviewer_user, grades={"clause": 2}, complete=True)
    assert exports.pool_qrels(pool=pool) == f"Non-Compete 0 {item.doc_id} 1\n"


def test_queues_are_shuffled_per_reviewer_and_stable(pool, reviewer_user, reviewer2_user):
    first = [e.item_id for e in reviewer_queues(reviewer=reviewer_user)[0].entries]
    again = [e.item_id for e in reviewer_queues(reviewer=reviewer_user)[0].entries]
    other = [e.item_id for e in reviewer_queues(reviewer=reviewer2_user)[0].entries]
    assert first == again
    assert sorted(first) == sorted(other) and first != other
    by_public = {i.public_id: i.external_ref["rank"] for i in pool.items.all()}
    assert [by_public[i] for i in first] != sorted(by_public[i] for i in first)
