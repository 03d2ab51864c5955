"""Reads of keyword retrieval runs: candidates per query and a run's summary."""

from __future__ import annotations

from dataclasses import dataclass

from django.db.models import QuerySet

from benchmarks.corpus.models import Provision
from benchmarks.retrieval.models import RetrievalCandidate, RetrievalResult, RetrievalRun
from benchmarks.suites.models import QueryKind, Suite, SuiteQuery
from benchmarks.suites.selectors import suite_target_versions


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


# --------------------------------------------------------------------------- TREC files


def retrieval_run_trec(*, run: RetrievalRun, tag: str = "", scores: str = "rank") -> str:
    """TREC run text of the run's keyword order: ``qid Q0 docid rank score tag``, every query of the suite
    with candidates (controls included), in suite order then rank.

    ``scores="rank"`` writes list length - rank + 1, so trec_eval (score descending, ties by docid)
    evaluates exactly the stored order; ``scores="engine"`` writes the stored scores as Python's
    shortest round-trip text (two runs give the same bytes only if every score is the same float).
    The tag defaults to ``<configuration>-r<run id>``.
    """
    if scores not in ("rank", "engine"):
        raise ValueError("scores must be 'rank' or 'engine'")
    tag = tag or f"{run.configuration}-r{run.pk}"
    if not tag or any(ch.isspace() for ch in tag):
        raise ValueError(f"run tag {tag!r} must be non-empty without whitespace")
    ranked: dict[str, list[tuple[str, float]]] = {}
    rows = (RetrievalCandidate.objects.filter(result__run=run)
            .order_by("result__query__position", "rank")
            .values_list("result__query__qid", "provision__citation", "provision__variant", "score"))
    for qid, citation, variant, score in rows:
        ranked.setdefault(qid, []).append((Provision(citation=citation, variant=variant).docid, score))
    out = []
    for qid, docs in ranked.items():
        for rank, (docid, score) in enumerate(docs, start=1):
            value = float(len(docs) - rank + 1) if scores == "rank" else float(score)
            out.append(f"{qid} Q0 {docid} {rank} {value!r} {tag}\n")
    return "".join(out)


def retrieval_run_qrels(*, run: RetrievalRun) -> str:
    """TREC qrels of the suite's nominated targets (relevance 1; provisional known positives, the rest unjudged).

    A target citation counts in every version of its section in the suite's snapshots
    (``NRS 1.510`` and ``NRS 1.510~v2``). Controls carry no targets and no lines.
    """
    return "".join(f"{t.qid} 0 {docid} 1\n" for t in suite_target_versions(suite=run.suite) for docid in t.docids)
