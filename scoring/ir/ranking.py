"""Per-query ranking metrics for the statute relevance benchmark.

Population: one ranking query at a time. A *ranked list* is a sequence of
document ids in rank order (rank 1 first); *targets* are the query's nominated
targets (provisional positives, not an exhaustive relevance set); *labels* map
a document id to a completed human grade 0-3 (a missing key or ``None`` means
"not judged", which is never read as 0).

Every function returns a plain number, or ``None`` when the metric is not
defined for the query (the caller counts such a query as *excluded*; it is
never averaged in as a 0).

TREC run and qrels files are read and written by :mod:`scoring.ir.trec_io`;
the measures named as trec_eval and ir_measures name them are in
:mod:`scoring.ir.measures`.
"""

from __future__ import annotations

import math
from collections.abc import Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass

GRADES = (0, 1, 2, 3)
USEFUL_GRADE = 2
HIT_CUTOFFS = (1, 5, 10)


def check_ranked(ranked: Sequence[str]) -> None:
    """ValueError naming the first document that appears twice in a ranked list."""
    seen: set[str] = set()
    for index, docid in enumerate(ranked):
        if docid in seen:
            raise ValueError(f"ranked list: document {docid!r} appears twice (again at rank {index + 1})")
        seen.add(docid)


def _check_grade(docid: str, grade: int) -> None:
    if isinstance(grade, bool) or grade not in GRADES:
        raise ValueError(f"label of {docid!r}: grade must be one of 0, 1, 2, 3, got {grade!r}")


def hit_at_k(ranked: Sequence[str], targets: Collection[str], k: int) -> int:
    """Hit@k of one query: 1 if any nominated target is within the first k results, else 0.

    Unit: 0/1 indicator. A list shorter than k is read as is (a miss stays a
    miss); a query with no targets scores 0, as trec_eval ``success_k`` does.
    """
    if k < 1:
        raise ValueError(f"k must be at least 1, got {k}")
    check_ranked(ranked)
    return int(any(docid in targets for docid in ranked[:k]))


def reciprocal_rank(ranked: Sequence[str], targets: Collection[str]) -> float:
    """Reciprocal rank of one query: 1 / rank of the first nominated target, 0 if none is in the list.

    Unit: fraction in [0, 1]; no cutoff (the whole list, normally 30 candidates).
    """
    check_ranked(ranked)
    for index, docid in enumerate(ranked):
        if docid in targets:
            return 1.0 / (index + 1)
    return 0.0


def target_coverage(candidates: Collection[str], targets: Collection[str]) -> float | None:
    """Nominated-target coverage of one query: share of its targets present among its candidates.

    Unit: fraction in [0, 1]. ``None`` (undefined, excluded) when the query has
    no nominated targets. Reranking cannot raise it: it depends only on the
    candidate pool, never on the order.
    """
    unique_targets = set(targets)
    if not unique_targets:
        return None
    candidate_set = set(candidates)
    return len(unique_targets & candidate_set) / len(unique_targets)


@dataclass(frozen=True)
class QueryRankingMetrics:
    """Known-target metrics of one system on one query (see the module docstring)."""

    hit_at_1: int
    hit_at_5: int
    hit_at_10: int
    reciprocal_rank: float
    coverage: float | None

    def as_dict(self) -> dict[str, float | None]:
        return {
            "Hit@1": self.hit_at_1,
            "Hit@5": self.hit_at_5,
            "Hit@10": self.hit_at_10,
            "RR": self.reciprocal_rank,
            "coverage": self.coverage,
        }


def query_ranking_metrics(
    ranked: Sequence[str],
    targets: Collection[str],
    *,
    candidates: Collection[str] | None = None,
) -> QueryRankingMetrics:
    """Hit@1, Hit@5, Hit@10, RR and target coverage of one system on one query.

    ``candidates`` defaults to the ranked list itself (both systems rank the
    same 30 candidates, so coverage is the same for both).
    """
    target_set = frozenset(targets)
    return QueryRankingMetrics(
        hit_at_1=hit_at_k(ranked, target_set, 1),
        hit_at_5=hit_at_k(ranked, target_set, 5),
        hit_at_10=hit_at_k(ranked, target_set, 10),
        reciprocal_rank=reciprocal_rank(ranked, target_set),
        coverage=target_coverage(ranked if candidates is None else candidates, target_set),
    )


def judged_precision_at_k(
    ranked: Sequence[str],
    labels: Mapping[str, int | None],
    *,
    k: int = 5,
    useful_grade: int = USEFUL_GRADE,
) -> float | None:
    """Judged P@k of one system on one query: mean over the first k results of (label >= useful_grade).

    Unit: fraction in [0, 1] (multiples of 1/k). Defined only when the list has
    at least k results and every one of the first k carries a completed label;
    otherwise ``None`` (the query is excluded, never scored as if unjudged
    results were irrelevant).
    """
    if k < 1:
        raise ValueError(f"k must be at least 1, got {k}")
    check_ranked(ranked)
    top = ranked[:k]
    if len(top) < k:
        return None
    useful = 0
    for docid in top:
        grade = labels.get(docid)
        if grade is None:
            return None
        _check_grade(docid, grade)
        useful += grade >= useful_grade
    return useful / k


def judged_precision_at_5(ranked: Sequence[str], labels: Mapping[str, int | None]) -> float | None:
    """Judged P@5 (label >= 2 counts as useful); see :func:`judged_precision_at_k`."""
    return judged_precision_at_k(ranked, labels, k=5)


def _dcg(grades: Iterable[int]) -> float:
    return sum(grade / math.log2(rank + 1) for rank, grade in enumerate(grades, start=1))


def pooled_ndcg_at_k(
    ranked: Sequence[str],
    pool: Collection[str],
    labels: Mapping[str, int | None],
    *,
    k: int = 5,
) -> float | None:
    """Pooled nDCG@k of one system on one query.

    DCG@k = sum over the first k results of grade / log2(rank + 1) (gain = the
    grade 0-3, trec_eval convention). The ideal DCG@k sorts the judged grades of
    the query's declared review pool (not the whole corpus) in descending order.
    Unit: fraction in [0, 1].

    Defined only when every pool member carries a completed label and every one
    of the first k results is a pool member (a result outside the pool has no
    grade we may use). Otherwise ``None`` (excluded). When every pool grade is
    0 the ideal DCG is 0 and the value is 0.0, as trec_eval reports it.
    """
    if k < 1:
        raise ValueError(f"k must be at least 1, got {k}")
    check_ranked(ranked)
    pool_set = set(pool)
    pool_grades: dict[str, int] = {}
    for docid in pool_set:
        grade = labels.get(docid)
        if grade is None:
            return None
        _check_grade(docid, grade)
        pool_grades[docid] = grade
    top = ranked[:k]
    if any(docid not in pool_set for docid in top):
        return None
    ideal = _dcg(sorted(pool_grades.values(), reverse=True)[:k])
    if ideal == 0.0:
        return 0.0
    return _dcg(pool_grades[docid] for docid in top) / ideal


def pooled_ndcg_at_5(ranked: Sequence[str], pool: Collection[str], labels: Mapping[str, int | None]) -> float | None:
    """Pooled nDCG@5; see :func:`pooled_ndcg_at_k`."""
    return pooled_ndcg_at_k(ranked, pool, labels, k=5)
