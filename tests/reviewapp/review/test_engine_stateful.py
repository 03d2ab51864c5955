"""A stateful property test of the whole review engine: random sequences of every feature's actions, and the
label promises checked after each step.

The machine (``EngineMachine``) drives declare (sometimes with forged hashes), assign, reassign, judge-once
reuse (the same few texts recur across pools with the same or other instructions, guidelines and kinds),
re-binding an item to new texts, known answers and their mixing, autosave, complete, undo, reopen, rulings,
invitations (make, accept, revoke), deactivate and reactivate, guidelines, a new pool version, suite target
confirmation, exports, held-out human-label figures and declaring a comparison of the benchmark's systems,
API tokens made after each way of signing in, clause labels of a firm's contract set, rulings on them (only
real disputes) and freezing its gold set, and tries the forbidden operations (raw SQL on revisions, assigning an
admin, grading with another item's hashes). After every step it checks:

1. each counted judgment's hashes are the hashes of the texts its author was shown (by
   ``selectors.reviewer_item``, the one reader of what a reviewer sees), and a judgment counted in another
   pool through judge-once was made under that pool's judge-once key (texts, scale, context, instructions,
   guidelines);
2. no reviewer holds the same texts twice;
3. no account that sees model output holds an assignment or authors a judgment;
4. every held-out computation has its ledger row, and no declared system was scored before its declaration;
5. append-only rows never change (a receipt may change once, from ``sent``);
6. what a token saves carries the sign-in of the session that made the token; every gold-set entry's procedure
   (lawyers blind, adjudicated dispute, an admin's own label) is what happened to its item, counted so; and the
   provenance sentences the statute and CUAD summaries print are the one provenance function's output for
   the world (``reviewapp.core.records.provenance``), over origins the test derives from the raw rows.

Examples are independent: the world every example starts from (accounts, a suite with a rerank run and its
review pool) is built once per test, and each example runs inside a savepoint rolled back at its end.
"""

from __future__ import annotations

import contextlib
import dataclasses
import json
import os
from collections import Counter, defaultdict
from typing import Any

import pytest
from django.db import DatabaseError, connection, transaction
from hypothesis import HealthCheck, seed, settings
from hypothesis import strategies as st
from hypothesis.stateful import (
    RuleBasedStateMachine,
    initialize,
    invariant,
    precondition,
    rule,
    run_state_machine_as_test,
)

pytestmark = pytest.mark.django_db

# A tiny vocabulary, so that the same texts recur across pools (judge once, never twice).
QUERIES = ["When is a deposit returned?", "Who gives notice?"]
SOURCES = [("Sec. 1 Deposits", "A deposit is returned within 30 days."),
           ("Sec. 2 Notice", "The landlord gives notice in writing.")]
PASSAGES = [("Sec. 1", "A deposit is returned within 30 days."), ("Sec. 2", "The landlord gives notice.")]
INSTRUCTIONS = ["", "Grade the passage strictly."]
GUIDELINES = ["Grade 3 whenever the passage mentions deposits.", "Never grade 3 for a mention alone."]
KINDS = ["passage", "passage", "target"]
GRADES = [0, 1, 2, 3, "unknown"]
# Contracts labelled with spans (clause categories); the pools of them are kept apart from ``pools``.
CONTRACTS = ["Governing law.  This Agreement is governed by Nevada law.\n\nNotice: thirty days.",
             "  The laws of Hawaii govern.\nEither party may end it at any time.  "]

# A fixed budget: CI runs the same sequences every time (derandomize), well under a minute on SQLite.
BUDGET = settings(max_examples=20, stateful_step_count=25, deadline=None, derandomize=True,
                  suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much,
                                         HealthCheck.function_scoped_fixture])

def _append_only_labels() -> tuple[str, ...]:
    # Every append-only table of every feature (reviewapp.core.records.append_only.append_only_models): a new one
    # joins the invariant by being append-only.
    from reviewapp.core.records.append_only import append_only_models

    return tuple(m._meta.label for m in append_only_models())


# What the examples reached (asserted at the end, so that a change that starves a feature fails loudly).
REACHED: Counter[str] = Counter()


def _item_spec(index: int, q: int, s: int, p: int) -> dict[str, Any]:
    return {"query_id": f"q{q}", "doc_id": f"d{index}", "query_text": QUERIES[q],
            "source_heading": SOURCES[s][0], "source_text": SOURCES[s][1],
            "passage_caption": PASSAGES[p][0], "passage_text": PASSAGES[p][1]}


def _grades(kind: str, a: int, b: int) -> dict[str, Any]:
    if kind == "contract_clause":
        # Without spans only absent (or unknown) is a whole answer; the span rules answer present.
        return {"presence": "unknown" if GRADES[a] == "unknown" else 0}
    if kind == "target":
        return {"target": GRADES[a] if GRADES[a] in (0, 1, "unknown") else a % 2}
    return {"section": GRADES[a], "passage": GRADES[b]}


def _rows(label: str) -> dict[int, tuple]:
    from django.apps import apps

    model = apps.get_model(label)
    names = [f.attname for f in model._meta.concrete_fields]
    return {row[0]: row for row in model._base_manager.order_by("pk").values_list("pk", *names[1:])}


class World:
    """What every example starts from (built once per test, outside the examples' savepoints)."""

    reviewers: list[int]
    model_seeing: list[int]  # admin (staff), stakeholder, superuser
    admin: int
    rerank_run: int
    bench_pool: int
    heldout_qids: set[str]
    contract_set: int  # a firm's contracts, labelled for a gold set by reviewers 0 and 1
    gold_pool: int


def build_world(django_user_model) -> World:
    from benchmarks.labels.pools import review_pool_declare
    from benchmarks.suites.models import SuiteQuery
    from tests.benchmarks.labels.fixtures import rerank_world
    from tests.factories import make_user

    world = World()
    reviewers = [make_user(django_user_model, f"rev{i}", "reviewer") for i in range(4)]
    admin = make_user(django_user_model, "adm", "admin", staff=True)
    stakeholder = make_user(django_user_model, "stake", "stakeholder")
    root = django_user_model.objects.create_superuser(username="root", password="pw-root")
    # Reviewers 0-2 have signed in with their own password; reviewer 3 never signed in (invitations may go to it).
    django_user_model.objects.filter(pk__in=[r.pk for r in reviewers[:3]]).update(last_login="2026-01-01T00:00Z")
    run = rerank_world(seed=7, queries=6)
    pool = review_pool_declare(rerank_run=run, k=3, reviewers=reviewers[:2]).pool
    world.reviewers = [r.pk for r in reviewers]
    world.model_seeing = [admin.pk, stakeholder.pk, root.pk]
    world.admin = admin.pk
    world.rerank_run = run.pk
    world.bench_pool = pool.pk
    world.heldout_qids = set(SuiteQuery.objects.filter(suite=run.suite, split="heldout").values_list("qid", flat=True))
    from reviewapp.review.assignment.services import pool_assign
    from tests.grading.contracts.gold_support import cuad_fixture_set

    contract_set, gold_pool = cuad_fixture_set(name="Firm set (machine)")
    pool_assign(pool=gold_pool, reviewers=reviewers[:2], per_item=2)
    world.contract_set = contract_set.pk
    world.gold_pool = gold_pool.pk
    return world


# derandomize alone seeds from this file's source, so any edit of the file drew other sequences, and whether the
# budget reached each promise (the REACHED asserts below) changed with it; a fixed seed keeps the sequences.
SEED = int(os.environ.get("ENGINE_SEED", "1"))


@seed(SEED)
class EngineMachine(RuleBasedStateMachine):
    world: World  # set by the test

    def __init__(self) -> None:
        super().__init__()
        from django.contrib.auth import get_user_model

        from benchmarks.reports.models import HeldoutExposure

        self._atomic = transaction.atomic()
        self._atomic.__enter__()
        self.User = get_user_model()
        self.admin = self.User.objects.get(pk=self.world.admin)
        self.reviewer_ids = list(self.world.reviewers)
        self.pools: list[int] = [self.world.bench_pool]
        # (reviewer, item pk) -> every (hashes, judge-once key) the reviewer completed it on, as shown to them
        self.shown: dict[tuple[int, int], set[tuple[tuple[str, str, str], str]]] = defaultdict(set)
        self.links: dict[int, tuple[str, str]] = {}  # user pk -> (uidb64, token) of the latest invitation made
        self.dead_links: list[tuple[int, tuple[str, str]]] = []
        self.heldout_computations = 0
        self.ledger_before = HeldoutExposure.objects.count()
        self.snapshots = {label: _rows(label) for label in _append_only_labels()}
        self.span_pools: list[int] = []
        self.span_texts: dict[str, str] = {}  # source hash -> the contract text a reviewer was shown under it
        # The latest frozen gold set of this example, with the origin of its labels as the test derived it from
        # the raw rows at the freeze, and a run graded against it (for the CUAD summary).
        self.gold: tuple[int, Any, int | None] | None = None
        # Reading a summary is slow (a bootstrap): each is read again only after something it states changed.
        self.cuad_due = False
        self.statute_due = False

    def teardown(self) -> None:
        transaction.set_rollback(True)
        self._atomic.__exit__(None, None, None)

    # ------------------------------------------------------------------ helpers

    def _user(self, pk: int):
        return self.User.objects.get(pk=pk)

    def _active_reviewers(self) -> list:
        return list(self.User.objects.filter(pk__in=self.reviewer_ids, is_active=True).order_by("pk"))

    def _pool(self, n: int):
        from reviewapp.review.pools.models import ReviewPool

        return ReviewPool.objects.get(pk=self.pools[n % len(self.pools)])

    def _pick(self, i: int):
        from reviewapp.review.assignment.models import Assignment

        pks = list(Assignment.objects.order_by("pk").values_list("pk", flat=True))
        return Assignment.objects.select_related("item__pool", "reviewer").get(pk=pks[i % len(pks)])

    def _show(self, assignment) -> dict[str, str]:
        """What the reviewer is shown, through the one reader of it; the hashes of those texts."""
        from reviewapp.review.judgments.hashes import item_hashes
        from reviewapp.review.workspace.selectors import reviewer_item

        view = reviewer_item(reviewer=assignment.reviewer, item_id=assignment.item.public_id)
        return item_hashes(query_text=view.query_text, source_heading=view.source_heading,
                           source_text=view.source_text, passage_caption=view.passage_caption,
                           passage_text=view.passage_text)

    def _key(self, item) -> str:
        from reviewapp.review.assignment.reuse import item_key, pool_rules

        return item_key(rules=pool_rules(pool=item.pool), item=item)

    # ------------------------------------------------------------------ declare, assign, reassign

    TEXTS = st.lists(st.tuples(st.integers(0, 1), st.integers(0, 1), st.integers(0, 1)), min_size=1, max_size=4,
                     unique=True)

    @initialize(first=TEXTS, second=TEXTS, instructions=st.sampled_from(INSTRUCTIONS),
                who=st.sets(st.integers(0, 3), min_size=1, max_size=3))
    def two_pools_over_the_same_few_texts(self, first, second, instructions, who):
        """Every example starts with two assigned pools drawn from the same few texts (judge once or refuse)."""
        self.declare(kind="passage", instructions="", texts=first, per_item=1, forge=None, assign_to=who)
        self.declare(kind="passage", instructions=instructions, texts=second, per_item=1, forge=None,
                     assign_to=who)

    @rule(kind=st.sampled_from(KINDS), instructions=st.sampled_from(INSTRUCTIONS), texts=TEXTS,
          per_item=st.integers(1, 2), forge=st.sampled_from([None, None, "query_hash", "source_hash", "passage_hash"]),
          assign_to=st.sets(st.integers(0, 3), max_size=3))
    def declare(self, kind, instructions, texts, per_item, forge, assign_to):
        from reviewapp.review.errors import ReviewError
        from reviewapp.review.pools.models import ReviewPool
        from reviewapp.review.pools.services import pool_create_model

        items = [_item_spec(i, *t) for i, t in enumerate(texts)]
        if forge is not None:
            # A hash copied from other texts (finding 2 of the integrity issue): refused, naming the field.
            other = _item_spec(0, 1 - texts[0][0], 1 - texts[0][1], 1 - texts[0][2])
            from reviewapp.review.judgments.hashes import item_hashes

            items[0][forge] = item_hashes(**{f: other[f] for f in ("query_text", "source_heading", "source_text",
                                                                  "passage_caption", "passage_text")})[forge]
            before = ReviewPool.objects.count()
            with pytest.raises(ReviewError, match=rf"items\[0\]\.{forge} does not match"):
                pool_create_model(name="forged", kind=kind, items=items, declared_rule="random")
            assert ReviewPool.objects.count() == before
            REACHED["forged hashes refused"] += 1
            return
        pool = pool_create_model(name=f"pool {len(self.pools)}", kind=kind, items=items, declared_rule="random",
                           reviewers_per_item=per_item, instructions=instructions)
        self.pools.append(pool.pk)
        if assign_to:
            self.assign(pool_n=len(self.pools) - 1, who=assign_to, per_item=per_item)

    @rule(n=st.integers(0, 20))
    def declare_copy_of_benchmark_items(self, n):
        """The benchmark pool's texts again, under the same or other instructions and source context."""
        from reviewapp.review.pools.models import ReviewPool
        from reviewapp.review.pools.services import pool_create_model

        bench = ReviewPool.objects.get(pk=self.world.bench_pool)
        items = list(bench.items.order_by("query_id", "doc_id"))[n % 3::3][:4]
        pool = pool_create_model(
            name="copy", kind="passage", declared_rule="copy", reviewers_per_item=1,
            instructions=bench.instructions if n % 2 else "Other instructions.",
            items=[{"query_id": i.query_id, "doc_id": i.doc_id, "query_text": i.query_text,
                    "source_heading": i.source_heading, "source_text": i.source_text,
                    "passage_caption": i.passage_caption, "passage_text": i.passage_text,
                    "external_ref": i.external_ref if n % 4 < 2 else {}} for i in items])
        self.pools.append(pool.pk)

    @rule(pool_n=st.integers(0, 20), who=st.sets(st.integers(0, 3), min_size=1, max_size=4),
          per_item=st.integers(1, 2))
    def assign(self, pool_n, who, per_item):
        from reviewapp.review.assignment.services import pool_assign
        from reviewapp.review.errors import ReviewError

        pool = self._pool(pool_n)
        people = [self._user(self.reviewer_ids[i]) for i in sorted(who)]
        try:
            from reviewapp.review.assignment.models import JudgmentReuse

            links = JudgmentReuse.objects.count()
            pool_assign(pool=pool, reviewers=people, per_item=min(per_item, len(people)))
            REACHED["judge-once links made"] += JudgmentReuse.objects.count() - links
        except ReviewError as error:
            # Only an inactive reviewer is a reason to refuse the plain reviewers given here.
            assert any(not p.is_active for p in people), error

    @rule(pool_n=st.integers(0, 20), who=st.integers(0, 2))
    def assign_an_account_that_sees_model_output(self, pool_n, who):
        from reviewapp.review.assignment.models import Assignment
        from reviewapp.review.assignment.services import pool_assign
        from reviewapp.review.errors import ReviewError

        pool = self._pool(pool_n)
        before = Assignment.objects.count()
        with pytest.raises(ReviewError, match="can see model output"):
            pool_assign(pool=pool, reviewers=[self._user(self.world.model_seeing[who])], per_item=1)
        assert Assignment.objects.count() == before

    @rule(pool_n=st.integers(0, 20), a=st.integers(0, 3), b=st.integers(0, 3))
    def reassign(self, pool_n, a, b):
        from reviewapp.review.assignment.services import assignment_reassign
        from reviewapp.review.errors import ReviewError

        if a == b:
            return
        to = self._user(self.reviewer_ids[b])
        try:
            assignment_reassign(pool=self._pool(pool_n), from_reviewer=self._user(self.reviewer_ids[a]),
                                to_reviewer=to)
        except ReviewError:
            assert not to.is_active

    @rule(pool_n=st.integers(0, 20), per_item=st.integers(1, 3))
    def new_pool_version(self, pool_n, per_item):
        from reviewapp.review.pools.services import pool_new_version

        self.pools.append(pool_new_version(pool=self._pool(pool_n), reviewers_per_item=per_item,
                                           created_by=self.admin).pk)

    @rule(pool_n=st.integers(0, 20), text=st.sampled_from(GUIDELINES))
    def publish_guidelines(self, pool_n, text):
        from reviewapp.review.pools.guidelines import guidelines_publish

        guidelines_publish(pool=self._pool(pool_n), text=text, by=self.admin)

    @rule(i=st.integers(0, 10**6), p=st.integers(0, 1))
    def rebind_item(self, i, p):
        """The job's texts changed: the item follows; judgments made on the old texts become stale."""
        from reviewapp.review.assignment.services import item_rebind
        from reviewapp.review.judgments.models import ReviewItem

        items = list(ReviewItem.objects.filter(pool_id__in=self.pools[1:]).order_by("pk"))
        if items:
            item_rebind(item=items[i % len(items)], passage_caption=PASSAGES[p][0], passage_text=PASSAGES[p][1])

    # ------------------------------------------------------------------ known answers

    @rule(i=st.integers(0, 10**6), g=st.integers(0, 1), share=st.sampled_from([0.3, 0.5]))
    def known_answer_set_and_mix(self, i, g, share):
        from reviewapp.review.assignment.services import known_answer_mix
        from reviewapp.review.judgments.models import ReviewItem
        from reviewapp.review.pools.known_answers import known_answer_set

        items = list(ReviewItem.objects.filter(pool_id__in=self.pools).select_related("pool").order_by("pk"))
        item = items[i % len(items)]
        grade_type = "target" if item.pool.kind == "target" else "passage"
        known_answer_set(item=item, expected={grade_type: g}, by=self.admin)
        REACHED["known answers mixed in"] += known_answer_mix(pool=item.pool, share=share).added

    # ------------------------------------------------------------------ the reviewer's workspace

    def _signin(self, user) -> Any:
        from reviewapp.core.auth.signin import _current, signin_method_of

        return _current.set((signin_method_of(user), ""))

    @precondition(lambda self: self._any_assignment())
    @rule(i=st.integers(0, 10**6), a=st.integers(0, 4), b=st.integers(0, 4), complete=st.booleans())
    def submit(self, i, a, b, complete):
        """Autosave (a draft) or complete, with the hashes of what the reviewer was shown."""
        from reviewapp.core.auth.signin import _current
        from reviewapp.review.errors import ReviewError

        assignment = self._pick(i)
        shown = self._show(assignment)
        token = self._signin(assignment.reviewer)
        try:
            result = self._submit(assignment, _grades(assignment.item.pool.kind, a, b), complete, shown)
        except ReviewError as error:
            assert ("completed judgment" in str(error) or "deactivated" in str(error)
                    or "judgment changed" in str(error)), error
            return
        finally:
            _current.reset(token)
        REACHED["completes" if complete else "drafts"] += result.created
        if result.created:
            from reviewapp.core.auth.signin import signin_method_of

            assert result.revision.signin_method == signin_method_of(assignment.reviewer)

    @precondition(lambda self: self._any_assignment())
    @rule(who=st.integers(0, 10**6), a=st.integers(0, 4), b=st.integers(0, 4), drafts_first=st.booleans())
    def work_through_queue(self, who, a, b, drafts_first):
        """One reviewer works through up to three open items of their queue: autosave, then complete."""
        from reviewapp.review.assignment.models import Assignment
        from reviewapp.review.errors import ReviewError
        from reviewapp.review.judgments.models import Judgment

        holders = sorted(set(Assignment.objects.values_list("reviewer_id", flat=True)))
        reviewer = holders[who % len(holders)]
        done = Judgment.objects.filter(reviewer_id=reviewer, current__status="complete").values("item_id")
        todo = (Assignment.objects.filter(reviewer_id=reviewer).exclude(item_id__in=done)
                .select_related("item__pool", "reviewer").order_by("sort_key")[:3])
        for assignment in todo:
            grades = _grades(assignment.item.pool.kind, a, b)
            try:
                if drafts_first:
                    self._submit(assignment, dict(list(grades.items())[:1]), False,
                                 self._show(assignment))
                REACHED["completes"] += self._submit(assignment, grades, True, self._show(assignment)).created
            except ReviewError as error:
                assert "deactivated" in str(error), error
                return

    def _submit(self, assignment, grades, complete, shown):
        from reviewapp.review.workspace.services import judgment_submit

        result = judgment_submit(item=assignment.item, reviewer=assignment.reviewer, grades=grades,
                                 complete=complete, shown=shown)
        if complete:
            item = assignment.item
            item.refresh_from_db()
            self.shown[(assignment.reviewer_id, item.pk)].add(
                (tuple(shown[f] for f in ("query_hash", "source_hash", "passage_hash")), self._key(item)))
        return result

    @precondition(lambda self: self._any_assignment())
    @rule(i=st.integers(0, 10**6), j=st.integers(0, 10**6))
    def submit_with_the_hashes_of_other_texts(self, i, j):
        from reviewapp.review.errors import ReviewError
        from reviewapp.review.judgments.hashes import item_hashes
        from reviewapp.review.judgments.models import JudgmentRevision, ReviewItem
        from reviewapp.review.workspace.services import TextChanged, judgment_submit

        assignment = self._pick(i)
        others = list(ReviewItem.objects.exclude(query_hash=assignment.item.query_hash, source_hash=assignment.item
                                                 .source_hash, passage_hash=assignment.item.passage_hash)
                      .order_by("pk"))
        if not others:
            return
        other = others[j % len(others)]
        forged = item_hashes(query_text=other.query_text, source_heading=other.source_heading,
                             source_text=other.source_text, passage_caption=other.passage_caption,
                             passage_text=other.passage_text)
        before = JudgmentRevision.objects.count()
        with pytest.raises((TextChanged, ReviewError)):
            judgment_submit(item=assignment.item, reviewer=assignment.reviewer,
                            grades=_grades(assignment.item.pool.kind, 2, 2), complete=True, shown=forged)
        assert JudgmentRevision.objects.count() == before

    @precondition(lambda self: self._any_judgment())
    @rule(i=st.integers(0, 10**6), reopen=st.booleans())
    def undo_or_reopen(self, i, reopen):
        from reviewapp.review.errors import ReviewError
        from reviewapp.review.judgments.models import Judgment, JudgmentRevision
        from reviewapp.review.workspace.services import judgment_reopen, judgment_undo

        judgments = list(Judgment.objects.filter(current__isnull=False).select_related("item__pool", "reviewer")
                         .order_by("pk"))
        judgment = judgments[i % len(judgments)]
        try:
            if reopen:
                result = judgment_reopen(item=judgment.item, reviewer=judgment.reviewer)
            else:
                result = judgment_undo(item=judgment.item, reviewer=judgment.reviewer)
        except ReviewError as error:
            assert "deactivated" in str(error), error
            return
        if result.revision.status == JudgmentRevision.COMPLETE:
            # An undo may bring a completed state back: it is a state the reviewer completed before.
            key = (judgment.reviewer_id, judgment.item_id)
            hashes = (result.revision.query_hash, result.revision.source_hash, result.revision.passage_hash)
            assert hashes in {h for h, _ in self.shown[key]}

    @precondition(lambda self: self._any_assignment())
    @rule(i=st.integers(0, 10**6), value=st.integers(0, 1))
    def adjudicate(self, i, value):
        from reviewapp.review.agreement.disagreements import adjudication_record
        from reviewapp.review.agreement.models import Adjudication
        from reviewapp.review.agreement.selectors import item_dispute
        from reviewapp.review.errors import ReviewError

        item = self._pick(i).item
        grade_type = {"target": "target", "contract_clause": "presence"}.get(item.pool.kind, "passage")
        rulings = Adjudication.objects.filter(item=item).count()
        if item_dispute(item=item, grade_type=grade_type):
            with pytest.raises(ReviewError, match="a ruling resolves a disagreement, and there is none"):
                adjudication_record(item=item, grade_type=grade_type, value=value, adjudicator=self.admin)
            assert Adjudication.objects.filter(item=item).count() == rulings
        else:
            adjudication_record(item=item, grade_type=grade_type, value=value, adjudicator=self.admin)
        with pytest.raises(ReviewError, match="may not adjudicate"):
            adjudication_record(item=item, grade_type=grade_type, value=value, adjudicator=self._pick(i).reviewer)

    # ------------------------------------------------------------------ accounts

    @rule(n=st.integers(0, 10**6))
    def invite_new_reviewer(self, n):
        from reviewapp.core.auth.accounts import reviewer_account_create

        made = reviewer_account_create(username=f"new{len(self.reviewer_ids)}", by=self.admin, invite=True)
        self.reviewer_ids.append(made.user.pk)
        self.links[made.user.pk] = (made.invitation.uidb64, made.invitation.token)

    @rule(who=st.integers(0, 10**6))
    def invite_again(self, who):
        from reviewapp.core.auth.accounts import AccountError, reviewer_invitation_make

        user = self._user(self.reviewer_ids[who % len(self.reviewer_ids)])
        try:
            invitation = reviewer_invitation_make(user=user, by=self.admin)
        except AccountError as error:
            # Refused exactly for an account someone already uses, or one that is switched off.
            assert user.last_login is not None or not user.is_active or user.has_usable_password(), error
            return
        assert user.last_login is None and user.is_active
        if user.pk in self.links:
            self.dead_links.append((user.pk, self.links[user.pk]))
        self.links[user.pk] = (invitation.uidb64, invitation.token)

    @precondition(lambda self: bool(self.links))
    @rule(who=st.integers(0, 10**6), revoke=st.booleans())
    def accept_or_revoke_invitation(self, who, revoke):
        from reviewapp.core.auth.accounts import invitation_find, reviewer_invitation_accept, reviewer_invitation_revoke
        from reviewapp.core.models import PasswordOrigin

        pk = sorted(self.links)[who % len(self.links)]
        link = self.links.pop(pk)
        user = self._user(pk)
        if revoke:
            reviewer_invitation_revoke(user=user, by=self.admin)
            self.dead_links.append((pk, link))
            return
        invitation = invitation_find(uidb64=link[0], token=link[1])
        if invitation is None:
            assert not user.is_active  # a live link is only refused for a switched-off account
            self.dead_links.append((pk, link))
            return
        reviewer_invitation_accept(invitation=invitation, password="a long pass phrase 7")
        REACHED["invitations accepted"] += 1
        assert PasswordOrigin.objects.get(user_id=pk).origin == "invitation"
        self.User.objects.filter(pk=pk).update(last_login="2026-01-02T00:00Z")  # they sign in with it
        self.dead_links.append((pk, link))

    @rule(who=st.integers(0, 10**6), active=st.booleans())
    def set_active(self, who, active):
        from reviewapp.core.auth.accounts import reviewer_account_set_active

        pk = self.reviewer_ids[who % len(self.reviewer_ids)]
        user = self._user(pk)
        changed = user.is_active != active
        reviewer_account_set_active(user=user, active=active, by=self.admin)
        if changed and pk in self.links:
            # A switch off or on ends the links made before it (nothing changes for an account already so).
            self.dead_links.append((pk, self.links.pop(pk)))

    # ------------------------------------------------------------------ jobs on top: confirmation, figures

    @rule(who=st.sets(st.integers(0, 3), min_size=2, max_size=4))
    def confirm_suite_targets(self, who):
        from benchmarks.rerank.models import RerankRun
        from benchmarks.suites.confirmation import confirmation_pool_declare

        people = [u for u in (self._user(self.reviewer_ids[i]) for i in sorted(who)) if u.is_active]
        if len(people) < 2:
            return
        suite = RerankRun.objects.get(pk=self.world.rerank_run).suite
        for pool in confirmation_pool_declare(suite=suite, reviewers=people, created_by=self.admin):
            self.pools.append(pool.pk)
            REACHED["confirmation pools"] += 1
            self.statute_due = True

    @rule(q=st.integers(0, 5), grade=st.integers(0, 3))
    def judge_a_benchmark_query(self, q, grade):
        """Every holder of the benchmark pool's items of one query completes them (all agree)."""
        from reviewapp.review.assignment.models import Assignment
        from reviewapp.review.errors import ReviewError

        rows = (Assignment.objects.filter(pool_id=self.world.bench_pool, item__query_id=f"q{q:02d}")
                .select_related("item__pool", "reviewer").order_by("pk"))
        for assignment in rows:
            # A refusal here: completed already, or the reviewer was deactivated.
            with contextlib.suppress(ReviewError):
                self._submit(assignment, {"section": grade, "passage": grade}, True, self._show(assignment))

    @rule(calibration=st.booleans(), judge_first=st.sampled_from([None, 3, 4, 5]))
    def heldout_figures(self, calibration, judge_first):
        from benchmarks.labels.views import calibration_build, human_metrics_build
        from benchmarks.rerank.models import RerankRun

        if judge_first is not None:
            self.judge_a_benchmark_query(q=judge_first, grade=judge_first % 4)

        run = RerankRun.objects.select_related("retrieval_run", "suite").get(pk=self.world.rerank_run)
        params = {"replicates": "1000", "pool": self._bench_public_id()}
        heldout = self.world.heldout_qids
        if calibration:
            figures, _ = calibration_build(run=run, params=params, user=self.admin)
            computed = any(i.qid in heldout and i.label is not None and i.distribution is not None
                           for i in figures.items)
        else:
            figures, _ = human_metrics_build(run=run, params=params, user=self.admin)
            computed = any(q.qid in heldout and any(v is not None for v in q.values.values())
                           for q in figures.queries)
        self.heldout_computations += computed
        REACHED["held-out computations"] += computed

    @rule(look_first=st.booleans())
    def declare_a_comparison(self, look_first):
        """Keyword order and the rerank run planned together: refused once the rerank run was scored on the
        held-out split (here, sometimes, by reading its report first) or once declared; declared otherwise."""
        from benchmarks.comparisons.services import ComparisonError, comparison_declare
        from benchmarks.reports.exposure import exposure_record
        from benchmarks.reports.selectors import report_build, rerank_scores_load
        from benchmarks.rerank.models import RerankRun

        run = RerankRun.objects.select_related("retrieval_run").get(pk=self.world.rerank_run)
        if look_first:
            scores, _ = rerank_scores_load(pk=run.pk)
            report = exposure_record(report_build(run=run.retrieval_run, rerank=scores, replicates=1000),
                                     purpose="page", user=self.admin)
            self.heldout_computations += report.exposure is not None
        try:
            comparison_declare(systems=[(run.retrieval_run, None), (run.retrieval_run, run)], user=self.admin,
                               via="command")
        except ComparisonError as error:
            seen = "already scored" in str(error)
            assert seen or "already in the comparison" in str(error), error
            REACHED["comparisons refused: seen" if seen else "comparisons refused: declared"] += 1
        else:
            REACHED["comparisons declared"] += 1

    def _bench_public_id(self) -> str:
        from reviewapp.review.pools.models import ReviewPool

        return ReviewPool.objects.get(pk=self.world.bench_pool).public_id

    @rule(pool_n=st.integers(0, 20), pseudonymise=st.booleans())
    def export(self, pool_n, pseudonymise):
        from reviewapp.core.models import ADMIN_HELD
        from reviewapp.review.agreement.exports import pool_jsonl, pool_qrels
        from reviewapp.review.agreement.judgments import pool_completed_judgments
        from reviewapp.review.judgments.models import JudgmentRevision, ReviewItem

        pool = self._pool(pool_n)
        lines = [json.loads(line) for line in pool_jsonl(pool=pool, pseudonymise=pseudonymise)]
        for line in lines:
            item = ReviewItem.objects.get(public_id=line["item"])
            assert line["stale"] == ((line["query_hash"], line["source_hash"], line["passage_hash"])
                                     != (item.query_hash, item.source_hash, item.passage_hash))
            source = line["reused_from"]["item"] if line["reused_from"] else line["item"]
            methods = set(JudgmentRevision.objects.filter(
                judgment__item__public_id=source, judgment__reviewer__username=line["reviewer"])
                .values_list("signin_method", flat=True)) if not pseudonymise else None
            if methods is not None:
                assert line["credentials_admin_held"] == bool(methods & set(ADMIN_HELD))
        counted = {(r.item_id, r.reviewer_id) for r in pool_completed_judgments(pool=pool)}
        assert len(counted) == sum(1 for line in lines if not line["stale"] and not line["known_answer"])
        for row in pool_qrels(pool=pool).splitlines():
            assert len(row.split()) == 4

    # ------------------------------------------------------------------ span labels (contract clauses)

    @initialize(t=st.integers(0, 1), who=st.sets(st.integers(0, 2), min_size=2, max_size=2))
    def a_clause_pool(self, t, who):
        """Every example has a contract to label with spans from the start (two lawyers on it)."""
        self.declare_clause_pool(t=t, who=who)

    @rule(t=st.integers(0, 1), who=st.sets(st.integers(0, 3), min_size=2, max_size=2))
    def declare_clause_pool(self, t, who):
        from reviewapp.review.assignment.services import pool_assign
        from reviewapp.review.errors import ReviewError
        from reviewapp.review.pools.services import pool_create_model

        pool = pool_create_model(name="clauses", kind="contract_clause", declared_rule="every contract x category",
                           reviewers_per_item=2, items=[{
                               "query_id": "Governing Law", "doc_id": f"contract-{t}",
                               "query_text": "Governing Law: which state's law governs?", "source_heading": "MSA",
                               "source_text": CONTRACTS[t]}])
        self.span_pools.append(pool.pk)
        try:
            pool_assign(pool=pool, reviewers=[self._user(self.reviewer_ids[i]) for i in sorted(who)], per_item=2)
        except ReviewError as error:
            assert "deactivated" in str(error), error

    @precondition(lambda self: self.span_pools)
    @rule(i=st.integers(0, 10**6), raw=st.lists(st.tuples(st.integers(0, 60), st.integers(1, 20)), min_size=1,
                                                max_size=3),
          bad=st.sampled_from([None, None, "past the end", "only white space", "absent"]), complete=st.booleans())
    def label_spans(self, i, raw, bad, complete):
        """A lawyer highlights spans and answers present; or sends a span past the end, one of white space only,
        or spans with "absent" (each refused, naming the problem, nothing stored)."""
        from reviewapp.review.assignment.models import Assignment
        from reviewapp.review.errors import ReviewError
        from reviewapp.review.judgments.models import JudgmentRevision
        from reviewapp.review.workspace.selectors import reviewer_item
        from reviewapp.review.workspace.services import judgment_submit

        assignments = list(Assignment.objects.filter(pool_id__in=self.span_pools)
                           .select_related("item__pool", "reviewer").order_by("pk"))
        if not assignments:
            return
        assignment = assignments[i % len(assignments)]
        shown = self._show(assignment)
        text = reviewer_item(reviewer=assignment.reviewer, item_id=assignment.item.public_id).source_text
        self.span_texts[shown["source_hash"]] = text
        spans = [[start, min(start + length, len(text))] for start, length in raw]
        if bad == "past the end":
            spans.append([5, len(text) + 7])
        elif bad == "only white space":
            blank = text.index(" ")
            spans.append([blank, blank + 1])
        before = JudgmentRevision.objects.count()
        try:
            result = judgment_submit(item=assignment.item, reviewer=assignment.reviewer,
                                     grades={"presence": 0 if bad == "absent" else 1}, complete=complete,
                                     shown=shown, spans=spans)
        except ReviewError as error:
            blank_drawn = any(not text[start:end].strip() for start, end in spans)
            expected = {"past the end": "past the end of the contract", "only white space": "only white space",
                        "absent": "(absent) but", None: "only white space" if blank_drawn else None}[bad]
            assert (expected is not None and expected in str(error)) or any(
                word in str(error) for word in ("completed judgment", "deactivated", "judgment changed")), error
            assert JudgmentRevision.objects.count() == before
            REACHED["span answers refused"] += 1
            return
        assert bad is None and all(text[start:end].strip() for start, end in spans), (bad, spans)
        REACHED["span answers saved"] += result.created
        if complete:
            self.shown[(assignment.reviewer_id, assignment.item.pk)].add(
                (tuple(shown[f] for f in ("query_hash", "source_hash", "passage_hash")), self._key(assignment.item)))

    @invariant()
    def spans_stay_inside_the_text_they_were_given_on(self):
        from reviewapp.review.judgments.models import JudgmentRevision

        for kind, spans, source_hash in JudgmentRevision.objects.values_list(
                "judgment__item__pool__kind", "spans", "source_hash"):
            if kind != "contract_clause":
                assert spans == [], (kind, spans)
                continue
            if not spans:
                continue
            # Bound by its hash to a text its reviewer was shown, inside it, trimmed, sorted, apart.
            text = self.span_texts[source_hash]
            end_before = -1
            for start, end in spans:
                assert end_before < start < end <= len(text), (spans, len(text))
                assert not text[start].isspace() and not text[end - 1].isspace(), spans
                end_before = end

    @invariant()
    def a_reviewer_is_shown_only_their_own_spans(self):
        from reviewapp.review.assignment.models import Assignment
        from reviewapp.review.judgments.models import Judgment, JudgmentRevision
        from reviewapp.review.workspace.selectors import reviewer_item

        for assignment in Assignment.objects.filter(pool_id__in=self.span_pools).select_related("reviewer", "item"):
            view = reviewer_item(reviewer=assignment.reviewer, item_id=assignment.item.public_id)
            own = Judgment.objects.filter(item=assignment.item, reviewer=assignment.reviewer,
                                          current__isnull=False).select_related("current").first()
            own_spans = own.current.spans if own is not None else []
            assert (view.current.spans if view.current else []) == own_spans
            others = {tuple(pair) for spans in JudgmentRevision.objects.filter(judgment__item=assignment.item)
                      .exclude(judgment__reviewer=assignment.reviewer).values_list("spans", flat=True)
                      for pair in spans} - {tuple(pair) for pair in own_spans}
            everything = repr(dataclasses.replace(view, kind=None))
            for start, end in others:
                assert f"[{start}, {end}]" not in everything, ("another lawyer's span shown", start, end)
                REACHED["others' spans kept out of a view"] += 1

    # ------------------------------------------------------------------ provenance: tokens, rulings, gold sets

    SIGNINS = st.sampled_from(["password", "admin_password", "invitation", "oidc", ""])

    @precondition(lambda self: self._any_assignment())
    @rule(i=st.integers(0, 10**6), method=SIGNINS, a=st.integers(0, 4), b=st.integers(0, 4))
    def complete_through_a_token(self, i, method, a, b):
        """A reviewer (or whoever holds their credentials) signs in one way, makes an API token and completes a
        judgment through it: the revision carries the making session's sign-in, never a bare "token"."""
        from django.test import RequestFactory
        from rest_framework.request import Request

        from reviewapp.core.auth.credentials import HashedTokenAuthentication, api_token_create
        from reviewapp.core.auth.signin import _current
        from reviewapp.core.models import SigninMethod
        from reviewapp.review.errors import ReviewError
        from reviewapp.review.judgments.models import JudgmentRevision

        assignment = self._pick(i)
        if not assignment.reviewer.is_active:
            return
        issuer = "https://idp.example" if method == "oidc" else ""
        session = _current.set((method, issuer))
        try:
            key = api_token_create(user=assignment.reviewer).key
        finally:
            _current.reset(session)
        request = Request(RequestFactory().post("/", HTTP_AUTHORIZATION=f"Token {key}"))
        signed_in = _current.set(("", ""))
        try:
            user, _token = HashedTokenAuthentication().authenticate(request)
            assert user.pk == assignment.reviewer_id
            result = self._submit(assignment, _grades(assignment.item.pool.kind, a, b), True, self._show(assignment))
        except ReviewError as error:
            assert any(w in str(error) for w in ("completed judgment", "deactivated", "judgment changed")), error
            return
        finally:
            _current.reset(signed_in)
        REACHED["completes"] += result.created
        if result.created:
            revision = JudgmentRevision.objects.get(pk=result.revision.pk)
            assert (revision.signin_method, revision.signin_issuer) == (method or SigninMethod.TOKEN, issuer)
            REACHED["judgments through tokens"] += 1
            self.statute_due = self.cuad_due = True

    def _gold_items(self) -> list:
        from reviewapp.review.judgments.models import ReviewItem

        return list(ReviewItem.objects.filter(pool_id=self.world.gold_pool).select_related("pool").order_by("pk"))

    @staticmethod
    def _gold_answers(item) -> list[tuple[int, str, Any, tuple, str]]:
        """The item's counted lawyer answers read from the raw rows: (reviewer, username, presence, spans,
        sign-in) of each current, complete judgment on the item's present texts."""
        from reviewapp.review.judgments.models import Judgment, JudgmentRevision

        out = []
        for judgment in Judgment.objects.filter(item=item, current__isnull=False).select_related("current",
                                                                                               "reviewer"):
            revision = judgment.current
            if revision.status != JudgmentRevision.COMPLETE or (
                    revision.query_hash, revision.source_hash, revision.passage_hash) != (
                    item.query_hash, item.source_hash, item.passage_hash):
                continue
            presence = revision.grades.get("presence")
            out.append((judgment.reviewer_id, judgment.reviewer.username, presence,
                        tuple(map(tuple, revision.spans)) if presence == 1 else (), revision.signin_method))
        return sorted(out)

    @staticmethod
    def _ruling(item) -> Any:
        from reviewapp.review.agreement.models import Adjudication

        return (Adjudication.objects.filter(item=item, grade_type="presence", query_hash=item.query_hash,
                                            source_hash=item.source_hash, passage_hash=item.passage_hash)
                .select_related("adjudicator").order_by("-pk").first())

    def _answer_gold(self, item, who: int, answer: str) -> bool:
        from reviewapp.core.auth.signin import _current
        from reviewapp.review.errors import ReviewError
        from reviewapp.review.workspace.services import judgment_submit
        from tests.grading.contracts.gold_support import cuad_answer

        reviewer = self._user(self.reviewer_ids[who])
        presence, spans = cuad_answer(item)
        if answer == "absent" or (answer == "differ" and presence == 1):
            presence, spans = 0, []
        elif answer in ("other", "differ"):
            first = next(n for n, c in enumerate(item.source_text) if not c.isspace())
            presence, spans = 1, [[first, first + 5]]
        shown = {f: getattr(item, f) for f in ("query_hash", "source_hash", "passage_hash")}
        self.span_texts[item.source_hash] = item.source_text
        token = self._signin(reviewer)
        try:
            judgment_submit(item=item, reviewer=reviewer, grades={"presence": presence}, complete=True, shown=shown,
                            spans=spans)
        except ReviewError as error:
            assert any(w in str(error) for w in ("completed judgment", "deactivated", "white space")), error
            return False
        finally:
            _current.reset(token)
        self.shown[(reviewer.pk, item.pk)].add((tuple(shown[f] for f in ("query_hash", "source_hash", "passage_hash")),
                                                self._key(item)))
        REACHED["gold answers"] += 1
        self.cuad_due = True
        return True

    @rule(i=st.integers(0, 10**6), who=st.integers(0, 1), answer=st.sampled_from(["cuad", "absent", "other"]))
    def label_gold_item(self, i, who, answer):
        """One of the two lawyers answers a clause item of the firm's set: as CUAD does, absent, or otherwise."""
        items = self._gold_items()
        self._answer_gold(items[i % len(items)], who, answer)

    @rule(c=st.integers(0, 3), disagree=st.booleans(), rule_it=st.booleans())
    def two_lawyers_label_a_contract_and_freeze(self, c, disagree, rule_it):
        """Both lawyers answer every category of one contract as CUAD does (with ``disagree``, the second differs
        on its first category, and with ``rule_it`` an admin rules on that dispute); then the set is frozen."""
        items = [item for item in self._gold_items() if item.source_heading == self._gold_items()[c * 3].source_heading]
        for n, item in enumerate(items):
            self._answer_gold(item, 0, "cuad")
            self._answer_gold(item, 1, "differ" if disagree and n == 0 else "cuad")
        if rule_it:
            self.rule_on_a_gold_item(i=c, a_dispute=True)
        self.freeze_gold_set()

    @staticmethod
    def _disputed(answers: list) -> bool:
        return len(answers) >= 2 and len({(p, spans) for _, _, p, spans, _ in answers}) > 1

    @rule(i=st.integers(0, 10**6), a_dispute=st.booleans())
    def rule_on_a_gold_item(self, i, a_dispute):
        """An admin rules on a clause item (one in dispute, when asked and there is one): recorded only where
        two lawyers completed it and disagree."""
        from grading.contracts.gold.adjudication import RulingError, clause_ruling_record
        from reviewapp.review.pools.models import ReviewPool
        from tests.grading.contracts.gold_support import cuad_answer

        items = self._gold_items()
        if a_dispute:
            disputed_items = [item for item in items if self._disputed(self._gold_answers(item))]
            if not disputed_items:
                # Make the dispute asked for when the sequence has none yet: whether a run reaches a ruling must
                # not hang on the seed, which changes with this file's source.
                fresh = [item for item in items if not self._gold_answers(item)]
                if fresh:
                    item = fresh[i % len(fresh)]
                    if self._answer_gold(item, 0, "cuad") and self._answer_gold(item, 1, "differ"):
                        disputed_items = [item]
            items = disputed_items or items
        item = items[i % len(items)]
        answers = self._gold_answers(item)
        disputed = self._disputed(answers)
        presence, spans = cuad_answer(item)
        pool = ReviewPool.objects.get(pk=self.world.gold_pool)
        try:
            clause_ruling_record(pool=pool, item_id=item.public_id, presence=presence, spans=spans,
                                 adjudicator=self.admin)
        except RulingError as error:
            assert not disputed and "a ruling resolves a dispute" in str(error), (disputed, error)
            REACHED["rulings refused: no dispute"] += 1
            return
        assert disputed, answers
        REACHED["rulings on disputes"] += 1
        self.cuad_due = True

    @rule()
    def freeze_gold_set(self):
        """Freeze the firm's gold set; each entry's procedure is what happened to its item, counted so."""
        from collections import Counter as Tally

        from grading.contracts.gold.freeze import GoldSetError, gold_set_freeze
        from grading.contracts.gold.provenance import gold_set_entries
        from grading.contracts.models import ContractSet
        from grading.runs.services import extraction_run_import
        from reviewapp.core.models import ADMIN_HELD
        from reviewapp.core.records.provenance import LabelOrigin

        try:
            frozen = gold_set_freeze(contract_set=ContractSet.objects.get(pk=self.world.contract_set),
                                     user=self.admin)
        except GoldSetError as error:
            assert "no contract has every category" in str(error), error
            return
        gold = frozen.gold_set
        by_id = {(i.source_heading, i.query_id): i for i in self._gold_items()}
        expected: Tally[str] = Tally()
        lawyers, adjudicators, answers, held = set(), set(), 0, 0
        for entry in gold_set_entries(gold):
            item = by_id[(entry["title"], entry["category"])]
            said = self._gold_answers(item)
            ruling = self._ruling(item)
            disputed = self._disputed(said)
            procedure = ("lawyer_blind" if ruling is None or ruling.value not in (0, 1)
                         else "adjudicated" if disputed else "admin_own")
            assert entry["procedure"] == procedure, (entry, said, ruling)
            assert entry["lawyers"] == [name for _, name, *_ in said], (entry, said)
            expected[procedure] += 1
            lawyers |= {name for _, name, *_ in said}
            answers += len(said)
            held += sum(method in ADMIN_HELD for *_, method in said)
            if procedure != "lawyer_blind":
                adjudicators.add(ruling.adjudicator.username)
        assert {p: n for p, n in gold.counts["by_procedure"].items() if n} == dict(expected)
        REACHED[f"gold sets frozen with {'+'.join(sorted(expected))}"] += 1
        origin = LabelOrigin(
            role="labels", unit="answer",
            source=f"the firm's gold set v{gold.version} of {gold.contract_set.name} (sha256 {gold.sha256[:12]}…)",
            procedures=tuple((p, expected[p]) for p in ("lawyer_blind", "adjudicated", "admin_own") if expected[p]),
            lawyers=tuple(sorted(lawyers)), adjudicators=tuple(sorted(adjudicators)), answers=answers,
            admin_held=held)
        extractions = [{"contract": c["title"], "category": name, "text": span["text"]}
                       for c in gold.content["contracts"] for name, a in c["answers"].items() for span in a["spans"]]
        run = extraction_run_import(dataset=frozen.dataset, raw=json.dumps(
            {"model": "machine", "extractions": extractions}))[0].pk if extractions else None
        self.gold = (gold.pk, origin, run)
        self.cuad_due = True

    @staticmethod
    def _listed(html: str) -> list[str]:
        import html as entities
        import re

        block = html.split('id="summary-provenance"')[1].split("</ul>")[0]
        return [" ".join(entities.unescape(re.sub(r"<[^>]+>", "", li)).split())
                for li in re.findall(r"<li[^>]*>(.*?)</li>", block, flags=re.S)]

    @precondition(lambda self: self.cuad_due or self.statute_due)
    @invariant()
    def the_summaries_state_the_one_provenance_of_the_world(self):
        from django.db.models import F
        from django.test import Client

        from benchmarks.reports.models import HeldoutExposure
        from benchmarks.rerank.models import RerankRun
        from benchmarks.suites.confirmation import suite_target_origin
        from benchmarks.suites.models import NominatedTarget
        from reviewapp.core.models import ADMIN_HELD
        from reviewapp.core.records.provenance import provenance_sentence
        from reviewapp.review.judgments.models import JudgmentRevision, ReviewItem

        client = Client()
        client.force_login(self.admin)
        if self.cuad_due and self.gold is not None and self.gold[2] is not None:
            _pk, origin, run = self.gold
            html = client.get(f"/cuad/scorecard/summary/?run={run}").content.decode()
            assert self._listed(html) == [provenance_sentence(origin)], (self._listed(html), origin)
            REACHED["CUAD summaries read"] += 1
        self.cuad_due = False
        if not self.statute_due:
            return
        self.statute_due = False
        rerank = RerankRun.objects.select_related("retrieval_run", "suite").get(pk=self.world.rerank_run)
        before = HeldoutExposure.objects.count()
        html = client.get(f"/benchmarks/reports/summary/{rerank.retrieval_run_id}/?replicates=1000&seed=1"
                          f"&rerank={rerank.pk}").content.decode()
        # Reading the summary shows held-out figures: each system's look is a row in the ledger.
        self.heldout_computations += HeldoutExposure.objects.count() - before
        listed = self._listed(html)
        targets = suite_target_origin(suite=rerank.suite)
        assert listed[0] == provenance_sentence(targets), (listed[0], targets)
        assert len(listed) == 2 and listed[1].startswith(("Labels from ", "No review pool")), listed
        # The targets' origin against the raw rows: every target counted once, every complete, current answer
        # on the suite's confirmation items counted, and those saved with credentials an admin once held.
        assert targets.counted == NominatedTarget.objects.filter(query__suite=rerank.suite).count()
        said = [(revision.signin_method, item) for item in ReviewItem.objects.filter(
                    pool__kind="target", pool__external_ref__confirmation=rerank.suite_id)
                for revision in JudgmentRevision.objects.filter(
                    judgment__item=item, judgment__current=F("pk"), status=JudgmentRevision.COMPLETE,
                    query_hash=item.query_hash, source_hash=item.source_hash, passage_hash=item.passage_hash)]
        assert targets.answers == len(said), (targets, said)
        assert targets.admin_held == sum(method in ADMIN_HELD for method, _ in said)
        REACHED["statute summaries read"] += 1

    # ------------------------------------------------------------------ forbidden operations

    @precondition(lambda self: self._any_revision())
    @rule(delete=st.booleans(), raw=st.booleans())
    def tamper_with_a_revision(self, delete, raw):
        from reviewapp.core.models import AppendOnlyError
        from reviewapp.review.judgments.models import JudgmentRevision

        revision = JudgmentRevision.objects.order_by("pk").first()
        if raw:
            sql = ('DELETE FROM "reviewapp_judgmentrevision" WHERE id = %s' if delete else
                   'UPDATE "reviewapp_judgmentrevision" SET grades = \'{"passage": 3}\' WHERE id = %s')
            with pytest.raises(DatabaseError, match="append-only"), transaction.atomic(), \
                    connection.cursor() as cursor:
                cursor.execute(sql, [revision.pk])
        else:
            with pytest.raises(AppendOnlyError), transaction.atomic():
                if delete:
                    JudgmentRevision.objects.filter(pk=revision.pk).delete()
                else:
                    JudgmentRevision.objects.filter(pk=revision.pk).update(note="edited")
        REACHED["tampering refused"] += 1

    # ------------------------------------------------------------------ preconditions' reads

    def _any_assignment(self) -> bool:
        from reviewapp.review.assignment.models import Assignment

        return Assignment.objects.exists()

    def _any_judgment(self) -> bool:
        from reviewapp.review.judgments.models import Judgment

        return Judgment.objects.filter(current__isnull=False).exists()

    def _any_revision(self) -> bool:
        from reviewapp.review.judgments.models import JudgmentRevision

        return JudgmentRevision.objects.exists()

    # ------------------------------------------------------------------ invariants

    @invariant()
    def counted_judgments_bind_to_what_their_author_was_shown(self):
        from reviewapp.review.agreement.judgments import pool_completed_judgments
        from reviewapp.review.assignment.reuse import item_key, pool_rules
        from reviewapp.review.judgments.models import ReviewItem
        from reviewapp.review.pools.models import ReviewPool

        for pool in ReviewPool.objects.filter(pk__in=self.pools):
            records = pool_completed_judgments(pool=pool)
            if not records:
                continue
            rules = pool_rules(pool=pool)
            wanted = {r.item_id for r in records} | {r.reused_from["item"] for r in records if r.reused_from}
            items = ReviewItem.objects.select_related("pool").in_bulk(wanted, field_name="public_id")
            for record in records:
                item = items[record.item_id]
                hashes = (record.query_hash, record.source_hash, record.passage_hash)
                assert hashes == (item.query_hash, item.source_hash, item.passage_hash), record
                source = item if record.reused_from is None else items[record.reused_from["item"]]
                seen = self.shown.get((record.reviewer_id, source.pk), set())
                assert hashes in {h for h, _ in seen}, ("counted on texts its author was not shown", record)
                if record.reused_from is not None:
                    # Counted in another pool: made under that pool's judge-once key, as the author was shown.
                    key = item_key(rules=rules, item=item)
                    assert (hashes, key) in seen, ("counted under other rules than its author graded under",
                                                   pool.pk, record)
                    REACHED["reused judgments counted"] += 1

    @invariant()
    def no_reviewer_holds_the_same_texts_twice(self):
        from reviewapp.review.assignment.models import Assignment

        held: dict[tuple[int, tuple[str, str, str]], int] = {}
        for reviewer_id, pk, *hashes in Assignment.objects.values_list(
                "reviewer_id", "pk", "item__query_hash", "item__source_hash", "item__passage_hash"):
            key = (reviewer_id, tuple(hashes))
            assert key not in held, ("same texts twice", reviewer_id, held[key], pk)
            held[key] = pk
        stored = Assignment.objects.exclude(texts_key="").values_list("reviewer_id", "texts_key")
        assert len(set(stored)) == len(list(stored))

    @invariant()
    def no_model_seeing_account_grades(self):
        from reviewapp.review.assignment.models import Assignment, JudgmentReuse
        from reviewapp.review.judgments.models import Judgment

        seeing = self.world.model_seeing
        assert not Assignment.objects.filter(reviewer_id__in=seeing).exists()
        assert not Judgment.objects.filter(reviewer_id__in=seeing).exists()
        assert not JudgmentReuse.objects.filter(reviewer_id__in=seeing).exists()

    @invariant()
    def every_heldout_computation_has_its_ledger_row(self):
        from benchmarks.reports.models import HeldoutExposure

        assert HeldoutExposure.objects.count() - self.ledger_before == self.heldout_computations

    @invariant()
    def no_declared_system_was_scored_before_its_declaration(self):
        from django.db.models import Min

        from benchmarks.comparisons.models import DeclaredComparison
        from benchmarks.reports.models import HeldoutExposure

        for declaration in DeclaredComparison.objects.all():
            for system in declaration.systems:
                first = HeldoutExposure.objects.filter(
                    suite_id=declaration.suite_id, split=declaration.split, retrieval_sha256=system["retrieval_sha256"],
                    rerank_sha256=system["rerank_sha256"]).aggregate(first=Min("scored_at"))["first"]
                assert first is None or first >= declaration.declared_at, (system["label"], first)

    @invariant()
    def append_only_rows_never_change(self):
        for label, before in self.snapshots.items():
            now = _rows(label)
            for pk, row in before.items():
                assert pk in now, (label, pk, "deleted")
                if now[pk] != row:
                    assert label == "providers.Receipt" and "sent" in row, (label, row, now[pk])
            self.snapshots[label] = {**before, **{pk: row for pk, row in now.items() if pk not in before}}

    @invariant()
    def dead_invitation_links_stay_dead(self):
        from reviewapp.core.auth.accounts import invitation_find

        for _pk, (uidb64, token) in self.dead_links:
            assert invitation_find(uidb64=uidb64, token=token) is None


@pytest.fixture
def fast_passwords(settings):
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]


def test_the_review_engine_keeps_its_promises_in_any_order_of_actions(django_user_model, fast_passwords):
    EngineMachine.world = build_world(django_user_model)
    REACHED.clear()
    run_state_machine_as_test(EngineMachine, settings=BUDGET)
    print(dict(REACHED))  # shown with -s: what the budget reached
    assert REACHED["completes"] and REACHED["forged hashes refused"] and REACHED["tampering refused"], REACHED
    assert REACHED["span answers saved"] and REACHED["span answers refused"], REACHED
    assert REACHED["judgments through tokens"] and REACHED["rulings on disputes"], REACHED
    assert REACHED["rulings refused: no dispute"] and REACHED["CUAD summaries read"], REACHED
    assert REACHED["statute summaries read"], REACHED


# ---------------------------------------------------------------------------- failures the machine found, replayed


def test_rebinding_an_item_onto_texts_its_reviewer_holds_elsewhere_never_shows_them_twice(reviewer_user):
    """Found by the machine: two items of one pool, both held by one reviewer; the job re-binds one of them to
    the other's texts (``item_rebind``), and the reviewer held the same texts twice."""
    from reviewapp.review.assignment.models import Assignment
    from reviewapp.review.assignment.services import item_rebind, pool_assign
    from reviewapp.review.pools.services import pool_create_model

    pool = pool_create_model(name="p", kind="passage", declared_rule="random", reviewers_per_item=1,
                       items=[_item_spec(0, 0, 0, 0), _item_spec(1, 0, 0, 1)])
    pool_assign(pool=pool, reviewers=[reviewer_user], per_item=1)
    moved = pool.items.get(doc_id="d1")
    item_rebind(item=moved, passage_caption=PASSAGES[0][0], passage_text=PASSAGES[0][1])

    rows = list(Assignment.objects.filter(reviewer=reviewer_user).values_list("item__query_hash",
                                                                              "item__source_hash",
                                                                              "item__passage_hash"))
    assert len(rows) == len(set(rows)) == 1
