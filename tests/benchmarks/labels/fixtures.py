"""A synthetic two-split suite, a finished retrieval run, a rerank run with random grade distributions,
and helpers that judge its review pool through the review services (no real data needed)."""

from __future__ import annotations

import random

import numpy as np

from reviewapp.review.pools.refs import pool_model
from tests.benchmarks.conftest import freeze_suite, import_synthetic

WORDS = ["tenant", "landlord", "deposit", "court", "guardian", "child", "notice", "hearing", "appeal", "fee",
         "record", "agency", "report", "custody", "petition", "order", "judge", "filing", "service", "lien"]
FAMILIES = [{"id": "dev-a", "split": "dev"}, {"id": "dev-b", "split": "dev"}, {"id": "dev-c", "split": "dev"},
            {"id": "ho-a", "split": "heldout"}, {"id": "ho-b", "split": "heldout"}, {"id": "ho-c", "split": "heldout"}]


def rerank_world(*, seed: int = 11, queries: int = 12, status: str = "done", chapter: int = 998):
    """Suite + retrieval run (k=30) + rerank run whose every candidate has a random P(0..3); some failed.

    Two worlds in one database need two ``chapter`` numbers (a section id is one document of the corpus)."""
    from benchmarks.rerank.models import RerankGrade, RerankRun
    from benchmarks.retrieval.models import RetrievalCandidate
    from benchmarks.retrieval.services import retrieval_run_create
    from benchmarks.suites.models import QueryKind
    from reviewapp.providers.models import Ledger

    rng = random.Random(seed)
    nprng = np.random.default_rng(seed)
    rows = []
    for i in range(60):
        heading = " ".join(rng.sample(WORDS, 3)).capitalize() + "."
        rows.append((f"{chapter}.{100 + i * 10}", heading, " ".join(rng.choice(WORDS) for _ in range(40)) + "."))
    import_synthetic(rows, key=f"human-synthetic-{seed}.html")
    qs = []
    for i in range(queries):
        family = FAMILIES[i % len(FAMILIES)]
        qs.append({"id": f"q{i:02d}", "kind": "ranking", "split": family["split"], "family": family["id"],
                   "text": f"When must the {WORDS[i % 20]} give {WORDS[(i + 5) % 20]} notice to the "
                           f"{WORDS[(i + 9) % 20]}?",
                   "targets": [f"NRS {rows[i][0]}"]})
    qs.append({"id": "oc1", "kind": "outside_corpus", "text": "What fee applies to a gasoline tax appeal?"})
    suite = freeze_suite(qs, name=f"human-synthetic-{seed}", families=FAMILIES)
    run = retrieval_run_create(suite=suite, k=30)
    assert run.status == "done", run.error
    ledger = Ledger.objects.create(purpose="tests", provider="local", model_id="minilm", max_requests=400,
                                   max_input_tokens=2_000_000)
    rerank = RerankRun.objects.create(
        suite=suite, retrieval_run=run, ledger=ledger, provider="local", model_id="minilm", method="local",
        question_version="statute-relevance-v1", question_sha256="0" * 64, status=status)
    candidates = (RetrievalCandidate.objects.filter(result__run=run, result__query__kind__in=[
        QueryKind.RANKING, QueryKind.OUTSIDE_CORPUS]).select_related("result__query").order_by("id"))
    grades = []
    for n, cand in enumerate(candidates):
        common = {"run": rerank, "query": cand.result.query, "candidate": cand, "request_index": n // 4,
                  "position_in_request": n % 4 + 1, "request_key": f"k{n // 4}"}
        if rng.random() < 0.03:
            grades.append(RerankGrade(**common, status="failed", error="HTTP 500"))
            continue
        probs = nprng.dirichlet([0.6, 0.6, 0.6, 0.6])
        grades.append(RerankGrade(**common, status="graded", p0=probs[0], p1=probs[1], p2=probs[2], p3=probs[3],
                                  p_useful=float(probs[2] + probs[3]), confidence=0.5))
    RerankGrade.objects.bulk_create(grades)
    return rerank


def judge(pool, reviewers, grades: dict[tuple[str, str], object], *, complete: bool = True) -> None:
    """Every reviewer submits the given passage grade (and the same section grade) for each (qid, docid)."""
    from reviewapp.review.workspace.services import judgment_submit

    items = {(i.query_id, i.doc_id): i for i in pool_model(pool).items.all()}
    for key, grade in grades.items():
        per_reviewer = grade if isinstance(grade, tuple) else (grade,) * len(reviewers)
        for reviewer, g in zip(reviewers, per_reviewer, strict=True):
            judgment_submit(item=items[key], reviewer=reviewer, grades={"section": g, "passage": g},
                            complete=complete)


def random_grades(pool, *, seed: int) -> dict[tuple[str, str], int]:
    rng = random.Random(seed)
    return {(i.query_id, i.doc_id): rng.choice([0, 0, 1, 1, 2, 3])
            for i in pool_model(pool).items.order_by("query_id", "doc_id")}


def declared_world(*, seed: int, reviewer_names: tuple[str, str], chapter: int = 998, queries: int = 12):
    """``rerank_world`` with its review pool declared for two new reviewers: returns (rerank run, pool,
    reviewers). For a module fixture (``tests.helpers.rows_for_the_module``); ``world_reload`` reads it back."""
    from django.contrib.auth import get_user_model

    from benchmarks.labels.pools import review_pool_declare
    from tests.factories import make_user

    reviewers = [make_user(get_user_model(), name, "reviewer") for name in reviewer_names]
    run = rerank_world(seed=seed, queries=queries, chapter=chapter)
    pool = pool_model(review_pool_declare(rerank_run=run, reviewers=reviewers).pool)
    return run, pool, reviewers


def judged_world(*, seed: int, grades_seed: int, reviewer_names: tuple[str, str], chapter: int = 998,
                 queries: int = 12):
    """``declared_world`` whose two reviewers both judge every item (``random_grades(grades_seed)``)."""
    run, pool, reviewers = declared_world(seed=seed, reviewer_names=reviewer_names, chapter=chapter,
                                          queries=queries)
    judge(pool, reviewers, random_grades(pool, seed=grades_seed))
    return run, pool, reviewers


def world_keys(run, pool, reviewers) -> tuple[int, int, list[int]]:
    return run.pk, pool.pk, [reviewer.pk for reviewer in reviewers]


def world_reload(keys: tuple[int, int, list[int]]):
    """Fresh instances of a module's (run, pool, reviewers): one test's in-memory changes never reach the next."""
    from django.contrib.auth import get_user_model

    from benchmarks.rerank.models import RerankRun
    from reviewapp.review.pools.models import ReviewPool

    run_pk, pool_pk, reviewer_pks = keys
    users = get_user_model().objects.in_bulk(reviewer_pks)
    return RerankRun.objects.get(pk=run_pk), ReviewPool.objects.get(pk=pool_pk), [users[pk] for pk in reviewer_pks]
