"""Admin promises under concurrency: assign, declare, confirm, budget raise and guidelines, through the real pages.

Like test_load_races.py (same harness, the same session's gunicorn: ``race_server`` in conftest.py), each test
releases two or three admin requests together from a barrier and checks the promise after every trial: what the
same requests keep one after the other must hold when they arrive at once. PostgreSQL only (SQLite serialises
every write transaction, so no two requests overlap there). Worlds are small, committed (the server is another
process) and flushed after each test.
"""

from __future__ import annotations

import itertools
import json
from collections import Counter
from functools import partial

import pytest

from tests.trust.race import release_together

TRIALS = 3
TEXTS = 6
PASSAGE_TEXT = "A landlord returns a tenant deposit within thirty days of the end of the lease, with a statement."

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.postgresql]


@pytest.fixture
def admins(race_server):
    """Two admins, each with a session (pages) and a token (API); the server to send their requests to."""
    from django.contrib.auth import get_user_model

    from perf.web.review_world import login_sessions
    from reviewapp.core.auth.credentials import api_token_create
    from tests.factories import make_user

    people = [make_user(get_user_model(), f"race_admin_{n}", "admin") for n in (1, 2)]
    sessions = login_sessions(people)
    return {"server": race_server, "users": people, "sessions": [sessions[u.username] for u in people],
            "tokens": [api_token_create(user=u).key for u in people]}


def _reviewer(name: str):
    from django.contrib.auth import get_user_model

    from tests.factories import make_user

    return make_user(get_user_model(), name, "reviewer")


def _texts(n: int = TEXTS) -> list[dict]:
    return [{"query_id": f"q{i:02d}", "doc_id": f"doc-{i:02d}", "query_text": f"Question {i}: when is a deposit due?",
             "source_heading": f"Sec. {i}  Deposits", "source_text": PASSAGE_TEXT,
             "passage_caption": f"Sec. {i}  Deposits", "passage_text": PASSAGE_TEXT[:60]} for i in range(n)]


def _codes(responses) -> list[int]:
    return [response.status_code for response in responses]


# --------------------------------------------------------------------------- assign


def test_two_admins_assigning_one_reviewer_the_same_texts_at_once_give_each_text_once(admins):
    """One admin on the pool page, the other through the API, each their own pool over the same texts: the reviewer
    holds each text once (an assignment in one pool, a judge-once link in the other), never twice."""
    from reviewapp.review.assignment.models import Assignment, JudgmentReuse
    from reviewapp.review.pools.services import pool_create_model

    server = admins["server"]
    failures = []
    for trial in range(TRIALS):
        reviewer = _reviewer(f"race_assignee_{trial}")
        pools = [pool_create_model(name=f"admin {n}, trial {trial}", kind="passage", items=_texts(),
                                      declared_rule="race tests: the same texts", reviewers_per_item=1)
                 for n in (1, 2)]
        page = server.client(session_key=admins["sessions"][0])
        api = server.client(token=admins["tokens"][1])
        responses = release_together([
            partial(page.post, f"/review/assignment/{pools[0].public_id}/assign/",
                    data={"reviewers": str(reviewer.pk), "per_item": "1"}),
            partial(api.post, f"/api/v1/review/pools/{pools[1].public_id}/assign/",
                    json={"reviewers": [reviewer.username], "per_item": 1}),
        ])
        held = Counter(Assignment.objects.filter(reviewer=reviewer).values_list("texts_key", flat=True))
        links = JudgmentReuse.objects.filter(reviewer=reviewer).count()
        if _codes(responses) != [302, 200] or sorted(held.values()) != [1] * TEXTS or links != TEXTS:
            failures.append((trial, _codes(responses), sorted(held.values()), links))
    assert not failures, f"{len(failures)} of {TRIALS} trials broke the promise: {failures}"


# --------------------------------------------------------------------------- declare


@pytest.fixture
def rerank_run(admins):
    from tests.benchmarks.labels.fixtures import rerank_world

    return rerank_world(queries=4)


def test_the_same_pool_declared_twice_at_once_from_a_rerank_run_is_one_whole_pool(admins, rerank_run):
    """Two clicks on "Declare" (with a reviewer to assign) at once: one pool with every planned item, both answers
    lead to it, and the reviewer holds each item once."""
    from benchmarks.labels.pools import review_pool_plan
    from benchmarks.labels.selectors import run_pools
    from reviewapp.review.assignment.models import Assignment, JudgmentReuse
    from reviewapp.review.pools.selectors import pool_item_keys

    server = admins["server"]
    reviewer = _reviewer("race_declared_reviewer")
    failures = []
    for trial, k in enumerate((1, 2, 3)):
        tabs = [server.client(session_key=session) for session in admins["sessions"]]
        form = {"k": str(k), "reviewers_per_item": "1", "reviewers": str(reviewer.pk)}
        responses = release_together([partial(tab.post, f"/benchmarks/labels/rerank/{rerank_run.pk}/review-pool/",
                                               data=form) for tab in tabs])
        planned = {(item["query_id"], item["doc_id"]) for item in review_pool_plan(rerank_run=rerank_run, k=k).items}
        pools = [pool for pool in run_pools(rerank_run=rerank_run) if pool.declared_params.get("k") == k]
        items = {(item.query_id, item.doc_id) for pool in pools for item in pool_item_keys(pool=pool)}
        # Each item before the reviewer once: assigned, or linked to their judgment of the same texts (k grows, so
        # a later pool holds texts of an earlier one); and no two of their assignments share texts.
        pool_pks = [pool.pk for pool in pools]
        assigned = Assignment.objects.filter(reviewer=reviewer, pool_id__in=pool_pks).values_list("item_id", flat=True)
        linked = (JudgmentReuse.objects.filter(reviewer=reviewer, item__pool_id__in=pool_pks)
                  .values_list("item_id", flat=True))
        places = Counter([*assigned, *linked])
        texts = Counter(Assignment.objects.filter(reviewer=reviewer).values_list("texts_key", flat=True))
        locations = {response.headers.get("location") for response in responses}
        if (_codes(responses) != [302, 302] or len(pools) != 1 or items != planned or len(locations) != 1
                or sorted(places.values()) != [1] * len(planned) or set(texts.values()) != {1}):
            failures.append((trial, _codes(responses), len(pools), len(items), len(planned), len(locations),
                             sorted(places.values())))
    assert not failures, f"{len(failures)} of {TRIALS} trials broke the promise: {failures}"


def test_a_pool_declared_twice_at_once_through_the_admin_form_makes_two_whole_pools(admins):
    """The admin form declares a pool per submission (one after the other too): two at once are two pools, each
    with every item, never a half-written one or items of one in the other."""
    from reviewapp.review.pools.models import ReviewPool

    server = admins["server"]
    lines = "\n".join(json.dumps(item) for item in _texts())
    failures = []
    for trial in range(TRIALS):
        name = f"admin form, trial {trial}"
        tabs = [server.client(session_key=session) for session in admins["sessions"]]
        responses = release_together([
            partial(tab.post, "/review/pools/new/", data={"name": name, "kind": "passage", "items": lines,
                                                          "declared_rule": "race tests", "reviewers_per_item": "1"})
            for tab in tabs])
        pools = list(ReviewPool.objects.filter(name=name))
        sizes = [pool.items.count() for pool in pools]
        if _codes(responses) != [302, 302] or sizes != [TEXTS, TEXTS]:
            failures.append((trial, _codes(responses), sizes))
    assert not failures, f"{len(failures)} of {TRIALS} trials broke the promise: {failures}"


# --------------------------------------------------------------------------- confirm


def _confirm_suite(trial: int):
    """Suite "race-confirm-<trial>" v1, two provisional targets; its own query texts (no judge-once links between
    trials: the same lawyers would hold the same texts already)."""
    from tests.benchmarks.conftest import freeze_suite
    from tests.benchmarks.suites.confirmation_fixtures import FAMILIES

    return freeze_suite([
        {"id": "d1", "kind": "ranking", "split": "dev", "family": "deposits",
         "text": f"when is a tenant deposit returned ({trial})", "targets": ["NRS 999.010"]},
        {"id": "h1", "kind": "ranking", "split": "heldout", "family": "fees",
         "text": f"filing fee for a petition ({trial})", "targets": ["NRS 999.020"]},
    ], name=f"race-confirm-{trial}", families=FAMILIES)


@pytest.fixture
def lawyers(admins):
    from tests.benchmarks.conftest import import_synthetic
    from tests.benchmarks.suites.confirmation_fixtures import SECTIONS

    import_synthetic(SECTIONS, key="race-confirm.html")
    return [_reviewer(f"race_lawyer_{n}") for n in (1, 2)]


def test_confirmation_declared_new_version_frozen_and_a_target_proposed_twice_at_once_keep_their_promises(
        admins, lawyers):
    """Per suite: two declarations at once put each provisional target in one pool, before each lawyer once; two
    lawyers proposing the same missing target at once make one proposal that neither may confirm; once lawyers
    confirmed, two "new version" clicks at once freeze one new version (the second finds it)."""
    from benchmarks.suites.confirmation import proposal_proposers
    from benchmarks.suites.models import Suite, TargetProposal
    from reviewapp.review.assignment.models import Assignment
    from reviewapp.review.judgments.models import ReviewItem
    from reviewapp.review.workspace.services import item_shown_hashes, judgment_submit

    server = admins["server"]
    failures = []
    for trial in range(TRIALS):
        suite = _confirm_suite(trial)
        tabs = [server.client(session_key=session) for session in admins["sessions"]]
        declared = release_together([
            partial(tab.post, f"/benchmarks/suites/{suite.pk}/confirmation/declare/",
                    data={"reviewers": [str(u.pk) for u in lawyers], "reviewers_per_item": "2"}) for tab in tabs])
        items = list(ReviewItem.objects.filter(pool__kind="target", pool__external_ref__confirmation=suite.pk))
        places = Counter(Assignment.objects.filter(item__in=items).values_list("item_id", "reviewer_id"))
        if (_codes(declared) != [302, 302] or sorted((i.query_id, i.doc_id) for i in items) != [
                ("d1", "NRS 999.010"), ("h1", "NRS 999.020")] or sorted(places.values()) != [1] * 4):
            failures.append((trial, "declare", _codes(declared), len(items), sorted(places.values())))
            continue

        d1 = {a.reviewer_id: a.item.public_id for a in Assignment.objects.filter(item__in=items, item__query_id="d1")
              .select_related("item")}
        proposing = [server.client(session_key=key) for key in _sessions(lawyers)]
        proposed = release_together([
            partial(tab.post, f"/benchmarks/suites/confirmation/items/{d1[lawyer.pk]}/propose/",
                    data={"citation": "NRS 999.030"}) for tab, lawyer in zip(proposing, lawyers, strict=True)])
        proposals = list(TargetProposal.objects.filter(suite=suite))
        if (_codes(proposed) != [302, 302] or len(proposals) != 1
                or proposal_proposers(suite=suite)[proposals[0].pk] != {u.pk for u in lawyers}):
            failures.append((trial, "propose", _codes(proposed), len(proposals)))
            continue

        for item in items:
            for lawyer in lawyers:
                judgment_submit(item=item, reviewer=lawyer, grades={"target": "y"}, complete=True,
                                         shown=item_shown_hashes(item))
        frozen = release_together([partial(tab.post, f"/benchmarks/suites/{suite.pk}/confirmation/new-version/")
                                   for tab in tabs])
        versions = list(Suite.objects.filter(name=suite.name).order_by("version").values_list("version", flat=True))
        locations = {response.headers.get("location") for response in frozen}
        if _codes(frozen) != [302, 302] or versions != [1, 2] or len(locations) != 1:
            failures.append((trial, "new version", _codes(frozen), versions, locations))
    assert not failures, f"{len(failures)} of {TRIALS} trials broke the promise: {failures}"


def _sessions(users) -> list[str]:
    from perf.web.review_world import login_sessions

    sessions = login_sessions(users)
    return [sessions[user.username] for user in users]


# --------------------------------------------------------------------------- budget raise


def test_three_budget_raises_at_once_are_all_recorded_and_the_limit_is_what_the_ledger_says(admins, rerank_run):
    """Three admins raise one run's budget at once (the resume form): every raise is a row, each row starts where
    the one before it ended, and the ledger's limits are the first limit plus every raise (no lost update)."""
    from benchmarks.rerank.models import RerankRun
    from reviewapp.providers.models import BudgetRaise, Ledger

    server = admins["server"]
    # A run its provider cannot resume on this server (no key): the raise is recorded, nothing is queued.
    RerankRun.objects.filter(pk=rerank_run.pk).update(provider="anthropic", model_id="race-model",
                                                      method="structured", status="stopped")
    ledger = Ledger.objects.get(pk=rerank_run.ledger_id)
    failures = []
    for trial in range(TRIALS):
        before = Ledger.objects.values_list("max_requests", "max_input_tokens").get(pk=ledger.pk)
        seen = BudgetRaise.objects.filter(ledger=ledger).count()
        tabs = [server.client(session_key=session) for session in (*admins["sessions"], admins["sessions"][0])]
        adds = (1, 10, 100)
        responses = release_together([
            partial(tab.post, f"/jobs/rerank/{rerank_run.pk}/resume/",
                    data={"add_requests": str(add), "add_input_tokens": str(add * 1000), "reason": f"trial {trial}"})
            for tab, add in zip(tabs, adds, strict=True)])
        rows = list(BudgetRaise.objects.filter(ledger=ledger).order_by("id"))[seen:]
        after = Ledger.objects.values_list("max_requests", "max_input_tokens").get(pk=ledger.pk)
        chained = all(a.new_max_requests == b.old_max_requests and a.new_max_input_tokens == b.old_max_input_tokens
                      for a, b in itertools.pairwise(rows))
        if (_codes(responses) != [302] * 3 or len(rows) != 3 or not chained
                or after != (before[0] + sum(adds), before[1] + 1000 * sum(adds))
                or after != (rows[-1].new_max_requests, rows[-1].new_max_input_tokens)):
            failures.append((trial, _codes(responses), len(rows), before, after))
    assert not failures, f"{len(failures)} of {TRIALS} trials broke the promise: {failures}"


# --------------------------------------------------------------------------- guidelines


def test_guidelines_published_four_times_at_once_are_versions_one_to_four(admins):
    """Two admins, two tabs each, publish at once: versions 1, 2, 3 and 4, each text once, never two of a number."""
    from reviewapp.review.pools.models import PoolGuidelines
    from reviewapp.review.pools.services import pool_create_model

    server = admins["server"]
    failures = []
    for trial in range(TRIALS):
        pool = pool_create_model(name=f"guidelines, trial {trial}", kind="passage", items=_texts(1),
                                    declared_rule="race tests")
        tabs = [server.client(session_key=session) for session in admins["sessions"] * 2]
        texts = [f"Grade the passage, not the section ({n})." for n in range(1, len(tabs) + 1)]
        responses = release_together([
            partial(tab.post, f"/review/pools/{pool.public_id}/guidelines/", data={"text": text})
            for tab, text in zip(tabs, texts, strict=True)])
        published = list(PoolGuidelines.objects.filter(pool=pool).order_by("version").values_list("version", "text"))
        if (_codes(responses) != [302] * len(tabs) or [v for v, _ in published] != list(range(1, len(tabs) + 1))
                or sorted(t for _, t in published) != texts):
            failures.append((trial, _codes(responses), [v for v, _ in published]))
    assert not failures, f"{len(failures)} of {TRIALS} trials broke the promise: {failures}"
