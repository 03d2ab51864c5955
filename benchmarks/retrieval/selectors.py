"""Reads of keyword retrieval runs: candidates per query and a run's summary."""

from __future__ import annotations

from dataclasses import dataclass

from django.db.models import QuerySet

from benchmarks.retrieval.models import RetrievalCandidate, RetrievalResult, RetrievalRun
from benchmarks.suites.models import QueryKind, Suite, SuiteQuery


def retrieval_run_list(*, suite: Suite | None = None) -> QuerySet[RetrievalRun]:
    runs = RetrievalRun.objects.select_related("suite").order_by("-id")
    return runs.filter(suite=suite) if suite is not None else runs


@dataclass
class CandidateRow:
    rank: int
    citation: str
    heading: str
    provision_id: int
    passage_sha256: str
    score: float
    via_fallback: bool
    is_target: bool


@dataclass
class ResultRow:
    result: RetrievalResult
    query: SuiteQuery
    candidates: list[CandidateRow]
    missing_targets: list[str]


def retrieval_run_detail(*, run: RetrievalRun) -> list[ResultRow]:
    """Every query's candidates in keyword order, targets marked, in suite order."""
    results = list(
        RetrievalResult.objects.filter(run=run).select_related("query", "query__family")
        .prefetch_related("query__targets").order_by("query__position")
    )
    candidates: dict[int, list[RetrievalCandidate]] = {}
    for cand in RetrievalCandidate.objects.filter(result__run=run).select_related("provision", "passage").order_by(
            "result_id", "rank"):
        candidates.setdefault(cand.result_id, []).append(cand)
    rows = []
    for result in results:
        targets = {t.citation for t in result.query.targets.all()}
        if result.query.expected_citation:
            targets.add(result.query.expected_citation)
        cands = [
            CandidateRow(c.rank, c.provision.citation, c.provision.heading, c.provision_id, c.passage.sha256,
                         c.score, c.via_fallback, c.provision.citation in targets)
            for c in candidates.get(result.pk, [])
        ]
        found = {c.citation for c in cands}
        rows.append(ResultRow(result, result.query, cands, sorted(targets - found)))
    return rows


@dataclass
class RunSummary:
    queries: int
    fallbacks: int
    failures: int
    short: int
    ranking_coverage: float | None
    targets_total: int
    targets_found: int


def retrieval_run_summary(*, run: RetrievalRun) -> RunSummary:
    results = list(RetrievalResult.objects.filter(run=run).select_related("query"))
    ranking = [r for r in results if r.query.kind == QueryKind.RANKING]
    total = sum(r.targets_total for r in ranking)
    found = sum(len(r.targets_found) for r in ranking)
    return RunSummary(
        queries=len(results),
        fallbacks=sum(r.fallback_used for r in results),
        failures=sum(r.status in {"failed", "unresolved"} for r in results),
        short=sum(r.status == "short" for r in results),
        ranking_coverage=(found / total) if total else None,
        targets_total=total,
        targets_found=found,
    )
