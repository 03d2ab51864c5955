"""Demo of human-label metrics and calibration: a real local rerank run, an honest unjudged pool, and
(separately, clearly marked) a pool of synthetic judgments so a stakeholder can see a filled-in page.

Called by ``benchmarks.demo.load_demo`` after the demo retrieval run exists. Idempotent.

1. The demo rerank run: the latest finished local (MiniLM heuristic) run of the demo retrieval run, or a new
   one executed here synchronously (the worker starts after ``demo_setup``).
2. The honest pool: top-5 keyword ∪ top-5 reranked per query, assigned to the demo reviewers, left
   unjudged. The pages show "no completed labels yet" for it, and it is the default pool of the pages.
3. Unless DEMO_SYNTHETIC_LABELS=0: a second pool with the same rule, marked synthetic in its declared
   parameters and its name, graded by two accounts named ``demo-synthetic-labels-1`` / ``-2`` (no usable
   password; their own "synthetic" role, never the reviewer role, assignable to synthetic pools only) with
   grades drawn by a seeded rule that never looks at the model: a nominated target gets 3,
   any other section 0-3 with fixed odds; the two accounts disagree on about one item in twelve. The pages
   put a "DEMO DATA, NOT HUMAN LABELS" banner on it and never choose it by default.
"""

from __future__ import annotations

import os
import random

from django.contrib.auth import get_user_model
from django.contrib.auth.models import Group

from benchmarks.labels.pools import DECLARABLE, provisional_labels_import, review_pool_declare
from benchmarks.rerank.models import RerankRun, RerankStatus
from benchmarks.rerank.services import rerank_run_create, rerank_run_execute
from benchmarks.retrieval.models import RetrievalRun
from benchmarks.suites.models import NominatedTarget
from reviewapp.core.auth.roles import ensure_role_groups
from reviewapp.review.assignment.services import assignment_unassign
from reviewapp.review.pools.refs import PoolRef
from reviewapp.review.pools.selectors import pool_item, pool_item_keys, reviewer_pools
from reviewapp.review.workspace.services import judgment_submit

DEMO_REVIEWERS = ("reviewer", "reviewer2")
SYNTHETIC_ACCOUNTS = ("demo-synthetic-labels-1", "demo-synthetic-labels-2")
SYNTHETIC_SEED = 20260920
SYNTHETIC_PARAMS = {"synthetic": True, "label_source": "demo-synthetic-labels",
                    "generator": f"benchmarks.labels.demo v1, seed {SYNTHETIC_SEED}; never reads the model"}
NON_TARGET_ODDS = (0.5, 0.3, 0.15, 0.05)  # grades 0..3 for a section that is not a nominated target


def demo_rerank_run(*, retrieval_run: RetrievalRun, stdout) -> RerankRun:
    run = (RerankRun.objects.filter(retrieval_run=retrieval_run, provider="local", status=RerankStatus.DONE)
           .order_by("-id").first())
    if run is not None:
        stdout.write(f"benchmarks: rerank run #{run.pk} (local heuristic) present\n")
        return run
    run = rerank_run_create(retrieval_run=retrieval_run, provider="local", enqueue=False)
    status = rerank_run_execute(run_id=run.pk)
    run.refresh_from_db()
    stdout.write(f"benchmarks: rerank run #{run.pk} (local heuristic) {status or run.status}, "
                 f"{run.candidates_planned} candidates\n")
    return run


def _synthetic_accounts() -> list:
    """The two generator accounts: their own non-assignable "synthetic" role, never the reviewer role.

    A synthetic account may only hold assignments of a pool marked synthetic; any assignment of a real pool it
    was given before (when it held the reviewer role) and has not judged is released here.
    """
    ensure_role_groups()
    User = get_user_model()
    people = []
    for username in SYNTHETIC_ACCOUNTS:
        user, created = User.objects.get_or_create(username=username, defaults={"first_name": "Demo synthetic",
                                                                                 "last_name": "labels (not a person)"})
        if created:
            user.set_unusable_password()
            user.save()
        user.groups.add(Group.objects.get(name="synthetic"))
        user.groups.remove(*Group.objects.filter(name="reviewer"))
        for pool in reviewer_pools(reviewer=user):
            if not pool.synthetic:
                assignment_unassign(pool=pool, reviewer=user)
        people.append(User.objects.get(pk=user.pk))  # fresh permission cache
    return people


def synthetic_grades(pool: PoolRef, *, targets: set[tuple[str, str]]) -> dict[tuple[str, str], tuple[int, int]]:
    """Seeded grades per item for the two synthetic accounts; they never depend on the model's output."""
    rng = random.Random(SYNTHETIC_SEED)
    out = {}
    for item in pool_item_keys(pool=pool):
        key = (item.query_id, item.doc_id)
        grade = 3 if key in targets else rng.choices(range(4), weights=NON_TARGET_ODDS)[0]
        other = grade if rng.random() >= 1 / 12 else max(0, min(3, grade + rng.choice((-1, 1))))
        out[key] = (grade, other)
    return out


def load_demo_review(*, retrieval_run: RetrievalRun, stdout) -> None:
    run = demo_rerank_run(retrieval_run=retrieval_run, stdout=stdout)
    if run.status not in DECLARABLE:
        stdout.write(f"benchmarks: rerank run #{run.pk} is {run.status}; no review pool declared\n")
        return
    User = get_user_model()
    reviewers = [u for u in User.objects.filter(username__in=DEMO_REVIEWERS) if u.has_perm("reviewapp.grade_passages")]
    honest = review_pool_declare(rerank_run=run, reviewers=reviewers if len(reviewers) >= 2 else ())
    pool = honest.pool
    stdout.write(f"benchmarks: review pool {pool.public_id} {'declared' if honest.created else 'present'} "
                 f"({len(pool_item_keys(pool=pool))} items, unjudged until people grade it; "
                 f"{honest.assigned} assignments added)\n")
    source, created = provisional_labels_import(suite=run.suite)
    if created:
        stdout.write(f"benchmarks: {source.labels} provisional section labels imported as their own "
                     "source (never passage labels)\n")
    if os.environ.get("DEMO_SYNTHETIC_LABELS", "1") == "0":
        return
    accounts = _synthetic_accounts()
    fake = review_pool_declare(
        rerank_run=run, reviewers=accounts, extra_params=SYNTHETIC_PARAMS,
        name=f"DEMO SYNTHETIC LABELS (not human): rerank run #{run.pk}, top-5 keyword ∪ reranked").pool
    targets = {(t.query.qid, t.provision.docid)
               for t in NominatedTarget.objects.filter(query__suite=run.suite).select_related("query", "provision")}
    items = {(key.query_id, key.doc_id): key.item_id for key in pool_item_keys(pool=fake)}
    submitted = 0
    for key, grades in synthetic_grades(fake, targets=targets).items():
        item = pool_item(pool=fake, item_id=items[key])
        for account, grade in zip(accounts, grades, strict=True):
            result = judgment_submit(item=item, reviewer=account, grades={"section": grade, "passage": grade},
                                     complete=True, note="demo-synthetic-labels: generated, not a human judgment")
            submitted += result.created
    stdout.write(f"benchmarks: synthetic demo pool {fake.public_id} ({len(items)} items; {submitted} new generated "
                 "judgments by demo-synthetic-labels-1/2, marked DEMO DATA on every page)\n")
