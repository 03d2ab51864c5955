"""A synthetic two-split suite, a finished retrieval run, a rerank run with random grade distributions,
and helpers that judge its review pool through the review services (no real data needed)."""

from __future__ import annotations

import random

import numpy as np

from tests.benchmarks.conftest import freeze_suite, import_synthetic

WORDS = ["tenant", "landlord", "deposit", "court", "guardian", "child", "notice", "hearing", "appeal", "fee",
         "record", "agency", "report", "custody", "petition", "order", "judge", "filing", "service", "lien"]
FAMILIES = [{"id": "dev-a", "split": "dev"}, {"id": "dev-b", "split": "dev"}, {"id": "dev-c", "split": "dev"},
            {"id": "ho-a", "split": "heldout"}, {"id": "ho-b", "split": "heldout"}, {"id": "ho-c", "split": "heldout"}]


def rerank_world(*, seed: int = 11, queries: int = 12, status: str = "done"):
    """Suite + retrieval run (k=30) + rerank run whose every candidate has a random P(0..3); some failed."""
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
        rows.append((f"998.{100 + i * 10}", heading, " ".join(rng.choice(WORDS) for _ in range(40)) + "."))
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
    assert run.status == "done"
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
    from reviewapp.review.services import judgment_submit

    items = {(i.query_id, i.doc_id): i for i in pool.items.all()}
    for key, grade in grades.items():
        per_reviewer = grade if isinstance(grade, tuple) else (grade,) * len(reviewers)
        for reviewer, g in zip(reviewers, per_reviewer, strict=True):
            judgment_submit(item=items[key], reviewer=reviewer, grades={"section": g, "passage": g},
                            complete=complete)


def random_grades(pool, *, seed: int) -> dict[tuple[str, str], int]:
    rng = random.Random(seed)
    return {(i.query_id, i.doc_id): rng.choice([0, 0, 1, 1, 2, 3]) for i in pool.items.order_by("query_id", "doc_id")}
