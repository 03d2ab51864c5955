"""Plain inputs of a benchmark report: the suite, the runs, each query with its candidates, the rerank scores.

What ``selectors`` reads from the database and ``figures.report_compute`` turns into
figures; no database here. The reranked order ranks the SAME candidates as the
keyword order: P(useful) descending, ties by keyword rank, ungraded candidates last.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any


@dataclass(frozen=True)
class Candidate:
    """One candidate of one query in the primary (or secondary) retrieval run."""

    docid: str
    provision_id: int
    citation: str
    heading: str
    keyword_rank: int
    keyword_score: float
    via_fallback: bool
    passage_sha256: str
    p_useful: float | None = None


@dataclass(frozen=True)
class QueryInput:
    qid: str
    text: str
    kind: str  # ranking / outside_corpus / exact_citation
    split: str  # dev / heldout; blank for controls
    family: str
    targets: tuple[str, ...]  # docids of the nominated targets, every version of each section
    target_citations: tuple[str, ...]
    candidates: tuple[Candidate, ...]  # keyword order
    retrieval_status: str = "ok"
    retrieval_error: str = ""
    fallback_used: bool = False
    method: str = "keyword"
    parsed_citation: str = ""
    expected_citation: str = ""
    rerank_status: str = "not run"  # ok / failed / partial / not run
    rerank_error: str = ""
    # The docids of each target citation (aligned with target_citations); empty means one docid per
    # citation, in ``targets`` order. A section with two versions is found when either version is.
    target_versions: tuple[tuple[str, ...], ...] = ()

    def target_groups(self) -> tuple[tuple[str, tuple[str, ...]], ...]:
        """(citation, its docids) per nominated target."""
        if self.target_versions:
            return tuple(zip(self.target_citations, self.target_versions, strict=True))
        return tuple((c, (d,)) for c, d in zip(self.target_citations, self.targets, strict=True))

    def coverage(self, docids: Sequence[str] | set[str]) -> float | None:
        """Share of target citations with at least one version among ``docids``; None without targets."""
        groups = self.target_groups()
        if not groups:
            return None
        present = set(docids)
        return sum(any(d in present for d in versions) for _, versions in groups) / len(groups)


@dataclass(frozen=True)
class SuiteMeta:
    pk: int | None
    name: str
    version: int
    corpus: str
    sha256: str
    sources_sha256: str
    frozen_at: str
    snapshots: tuple[tuple[str, str], ...]  # (source_key, sha256)
    # From the suite's own fields: who nominated its targets (suite default first, then any per-target
    # nominator) and whether the file declares itself synthetic (None: the file does not say).
    nominators: tuple[str, ...] = ()
    synthetic: bool | None = None
    targets_total: int = 0
    targets_provisional: int = 0
    # (lawyers, targets): how many targets lawyers confirmed blind, by the number of lawyers who did.
    targets_confirmed: tuple[tuple[int, int], ...] = ()
    # One sentence per pinned snapshot a newer snapshot of its source follows that changed some targets.
    source_changes: tuple[str, ...] = ()


@dataclass(frozen=True)
class RetrievalMeta:
    pk: int | None
    engine: str
    configuration: str
    description: str
    k: int
    passage_rule: str
    index_documents: int
    status: str
    error: str
    candidates_sha256: str


@dataclass(frozen=True)
class RerankMeta:
    pk: int | None
    provider: str
    provider_label: str
    model_id: str
    question_version: str
    question_sha256: str
    status: str
    error: str = ""
    method: str = ""
    candidates_per_request: int | None = None
    budget: Mapping[str, Any] = field(default_factory=dict)  # requests/input tokens used and allowed
    # candidates_failed/_unknown/_never_sent and requests_sent/_answered/_failed/_unknown/_not_sent (coverage.py)
    counts: Mapping[str, int] = field(default_factory=dict)
    # '' for the rerank run itself; "rrf-k60" for the hybrid of keyword order and this run's order
    # (reciprocal rank fusion, scoring.ir.fusion): another system on the same candidates.
    fusion: str = ""
    simulated: bool = False  # answered by a simulated provider (the loopback test server), not a model


@dataclass(frozen=True)
class RerankScores:
    """What the report needs of a rerank run, whatever its storage: the adapter's output.

    ``p_useful[qid][provision_id]`` is P(grade 2) + P(grade 3) of a graded
    candidate; a candidate missing from the map was not graded (failed).
    ``status[qid]`` is ok / failed / partial; ``errors[qid]`` says why.
    """

    meta: RerankMeta
    p_useful: Mapping[str, Mapping[int, float]]
    status: Mapping[str, str]
    errors: Mapping[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class ReportInputs:
    suite: SuiteMeta
    retrieval: RetrievalMeta
    queries: tuple[QueryInput, ...]
    rerank: RerankMeta | None = None
    secondary: RetrievalMeta | None = None
    secondary_queries: tuple[QueryInput, ...] = ()


def rerank_apply(queries: Sequence[QueryInput], scores: RerankScores | None) -> tuple[QueryInput, ...]:
    """Attach a rerank run's P(useful) and per-query status to the primary run's candidates.

    A candidate the run did not grade keeps ``p_useful=None``; a query with
    some ungraded candidates is at least ``partial`` whatever the run said, so
    a missing grade is never silent. Exact-citation controls make no provider
    call and stay ``not run``.
    """
    if scores is None:
        return tuple(queries)
    out = []
    for q in queries:
        if q.kind == "exact_citation":
            out.append(q)
            continue
        if not q.candidates:
            out.append(replace(q, rerank_status="no candidates", rerank_error="retrieval gave nothing to rerank"))
            continue
        graded = scores.p_useful.get(q.qid, {})
        candidates = tuple(replace(c, p_useful=graded.get(c.provision_id)) for c in q.candidates)
        n_graded = sum(c.p_useful is not None for c in candidates)
        status = scores.status.get(q.qid, "failed" if not graded else "ok")
        error = scores.errors.get(q.qid, "")
        if candidates and n_graded == 0 and status == "ok":
            status, error = "failed", error or "no candidate was graded"
        elif 0 < n_graded < len(candidates) and status == "ok":
            status = "partial"
        if status == "partial" and not error:
            error = f"{len(candidates) - n_graded} of {len(candidates)} candidates were not graded"
        out.append(replace(q, candidates=candidates, rerank_status=status, rerank_error=error))
    return tuple(out)


def reranked_order(candidates: Sequence[Candidate]) -> list[Candidate]:
    """P(useful) descending, ties by keyword rank; ungraded candidates after the graded, in keyword order."""
    # (p_useful is never None in the key: the ungraded are filtered out first; "or 0.0" only tells the type checker.)
    graded = sorted((c for c in candidates if c.p_useful is not None),
                    key=lambda c: (-(c.p_useful or 0.0), c.keyword_rank))
    ungraded = sorted((c for c in candidates if c.p_useful is None), key=lambda c: c.keyword_rank)
    return graded + ungraded
