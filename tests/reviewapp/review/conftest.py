"""Review fixtures: a pool whose job-side data carries planted markers that must never reach a reviewer."""

from __future__ import annotations

import re

import pytest

from reviewapp.review.assignment.services import pool_assign
from reviewapp.review.pools.services import pool_create_model

# Planted in everything job-side (external_ref, ids, pool name); none may appear in anything a reviewer receives.
MARKERS = (
    "SYSMARK_KEYWORD_BM25",
    "MODELMARK_MINILM_Q8",
    "JUDGEMARK_FRONTIER",
    "0.98765",
    "PROPOSEDMARK",
    "RUNMARK_42",
    "QIDMARK",
    "DOCMARK",
    "POOLNAMEMARK",
)
# Words that would betray model information if they reached a reviewer.
FORBIDDEN_WORDS = re.compile(r"\b(rank\w*|scor\w*|probab\w*|proposed|confidence|system|bm25|rerank\w*|model)\b", re.I)


def make_items(n_queries: int = 3, per_query: int = 4) -> list[dict]:
    """Items listed in 'rank order' (external_ref.rank 1..n within each query)."""
    items = []
    for q in range(n_queries):
        for r in range(per_query):
            items.append(
                {
                    "query_id": f"QIDMARK-{q}",
                    "doc_id": f"DOCMARK-{q}-{r}",
                    "query_text": f"Question number {q}: when must a deposit be returned?",
                    "source_heading": f"Section {q}.{r} Deposits",
                    "source_text": f"Full text of section {q}.{r}. A deposit must be returned within {r + 10} days.",
                    "passage_caption": f"Section {q}.{r} Deposits",
                    "passage_text": f"A deposit must be returned within {r + 10} days.",
                    "external_ref": {
                        "rank": r + 1,
                        "score": 0.98765 - r / 100,
                        "p_useful": 0.98765,
                        "system": "SYSMARK_KEYWORD_BM25",
                        "model": "MODELMARK_MINILM_Q8",
                        "judge": "JUDGEMARK_FRONTIER",
                        "proposed_grade": "PROPOSEDMARK",
                        "run": "RUNMARK_42",
                    },
                }
            )
    return items


def make_pool(*, reviewers, kind: str = "passage", items=None, per_item: int = 2, name: str = "POOLNAMEMARK pool"):
    pool = pool_create_model(
        name=name,
        kind=kind,
        items=items if items is not None else make_items(),
        declared_rule="union of top 5 of keyword and reranked order (RUNMARK_42)",
        declared_params={"k": 5, "run": "RUNMARK_42"},
        reviewers_per_item=per_item,
        external_ref={"run": "RUNMARK_42", "system": "SYSMARK_KEYWORD_BM25"},
    )
    pool_assign(pool=pool, reviewers=reviewers, per_item=per_item)
    return pool


@pytest.fixture
def pool(reviewer_user, reviewer2_user):
    return make_pool(reviewers=[reviewer_user, reviewer2_user])


def assert_blind(text: str, *, where: str) -> None:
    for marker in MARKERS:
        assert marker not in text, f"{marker!r} leaked into {where}"
    match = FORBIDDEN_WORDS.search(text)
    if match is not None:
        context = text[max(0, match.start() - 80) : match.end() + 80]
        raise AssertionError(f"{match.group(0)!r} appears in {where}: ...{context}...")
