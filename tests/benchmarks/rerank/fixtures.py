"""A small synthetic suite with a finished retrieval run, for the rerank tests (no real data needed)."""

from __future__ import annotations

import random

from tests.benchmarks.conftest import freeze_suite, import_synthetic

WORDS = [
    "tenant", "landlord", "deposit", "court", "guardian", "child", "notice", "hearing", "appeal", "fee", "record",
    "agency", "report", "custody", "petition", "order", "judge", "filing", "service", "lien",
]


def synthetic_retrieval_run(*, sections: int = 40, ranking: int = 3, seed: int = 5):
    """``ranking`` ranking queries + 1 outside-corpus + 1 exact-citation control, k=30, over a synthetic chapter."""
    from benchmarks.retrieval.services import retrieval_run_create

    rng = random.Random(seed)
    rows = []
    for i in range(sections):
        heading = " ".join(rng.sample(WORDS, 3)).capitalize() + "."
        body = " ".join(rng.choice(WORDS) for _ in range(rng.randint(20, 60))) + "."
        rows.append((f"999.{100 + i * 10}", heading, body))
    import_synthetic(rows, key=f"synthetic-{seed}.html")
    queries = [
        {"id": f"q{i}", "kind": "ranking", "split": "dev", "family": "fam-a",
         "text": f"When must the {WORDS[i]} give {WORDS[i + 5]} notice to the {WORDS[i + 9]}?",
         "targets": [rows[i][0].join(["NRS ", ""])]}
        for i in range(ranking)
    ]
    queries.append({"id": "oc1", "kind": "outside_corpus",
                    "text": "What court filing fee applies to an appeal of a gasoline tax in another state?"})
    queries.append({"id": "ec1", "kind": "exact_citation", "text": f"NRS {rows[0][0]}",
                    "expected_citation": f"NRS {rows[0][0]}"})
    suite = freeze_suite(queries, name=f"synthetic-rerank-{seed}")
    return retrieval_run_create(suite=suite, k=30)
