"""Reciprocal rank fusion (RRF) of ranked lists over one candidate set. Pure.

Cormack, Clarke & Büttcher (2009), "Reciprocal Rank Fusion outperforms Condorcet and individual
Rank Learning Methods", SIGIR '09: ``RRF(d) = sum over rankings r of 1 / (k + r(d))`` with
``k = 60``, the constant of that paper (it damps the weight of the very top ranks).

Here every ranking orders the SAME candidates (a rerank of a keyword run's candidates), so every
document has a rank in every list; a document missing from a list is an error, not a rank of
infinity. Ties (equal fused scores, e.g. ranks (1, 3) and (3, 1)) go to the first ranking's order,
so the fused list is a pure function of the input lists. Each fused score is the float sum of the
reciprocals in the order the rankings are given: the same ranks always give the same bits.
"""

from __future__ import annotations

from collections.abc import Sequence

from scoring.ir.ranking import check_ranked

RRF_K = 60
CITATION = ("Cormack, Clarke & Büttcher 2009, Reciprocal Rank Fusion outperforms Condorcet and individual "
            "Rank Learning Methods, SIGIR '09")


def rrf_scores(rankings: Sequence[Sequence[str]], *, k: int = RRF_K) -> dict[str, float]:
    """RRF score of every document: sum of 1/(k + rank) over the rankings (ranks 1-based)."""
    if not rankings:
        raise ValueError("reciprocal rank fusion needs at least one ranking")
    if isinstance(k, bool) or not isinstance(k, int) or k < 0:
        raise ValueError(f"k must be a whole number >= 0, got {k!r}")
    for ranking in rankings:
        check_ranked(ranking)
    documents = set(rankings[0])
    for index, ranking in enumerate(rankings[1:], start=2):
        if set(ranking) != documents:
            extra = sorted(set(ranking) ^ documents)
            raise ValueError(f"ranking {index} does not order the same documents as ranking 1 "
                             f"(differs on {', '.join(extra[:5])})")
    scores = dict.fromkeys(rankings[0], 0.0)
    for ranking in rankings:
        for rank, docid in enumerate(ranking, start=1):
            scores[docid] += 1.0 / (k + rank)
    return scores


def rrf_order(rankings: Sequence[Sequence[str]], *, k: int = RRF_K) -> list[str]:
    """The documents by RRF score descending; ties by their rank in the first ranking."""
    scores = rrf_scores(rankings, k=k)
    first = {docid: rank for rank, docid in enumerate(rankings[0])}
    return sorted(scores, key=lambda docid: (-scores[docid], first[docid]))
