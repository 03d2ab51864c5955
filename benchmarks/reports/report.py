"""The benchmark report of one (suite, retrieval run, rerank run): plain dataclasses, figures from scoring.

Population: the ranking queries of one frozen suite, per split (dev, held-out),
never pooled across splits. Two systems rank the SAME candidates of the
primary retrieval run: the keyword order, and the reranked order (P(useful)
descending, ties by keyword rank). The secondary keyword baseline (a retrieval
run with different rules, so a different candidate pool) is reported apart,
with its own intervals and no paired difference.

Per query (scoring.ir.ranking): Hit@1/5/10, RR (0 when no target is among
the candidates) and nominated-target coverage. Means with paired percentile
intervals over query families (scoring.ir.family_bootstrap): for each
system's mean and for the difference reranked - keyword on the same draws.

Failures stay in: a query whose retrieval fell back, came up short or failed,
or whose rerank failed (wholly or for some candidates), keeps its place in the
comparison and its status. Candidates with no P(useful) (their request failed)
follow the scored ones in keyword order, so a query whose rerank failed
entirely is ranked in keyword order; it is listed among the failures.

Three layers, so the arithmetic can be tested and timed without a database:
``report_inputs_load`` (reads, Django) -> ``report_compute`` (pure) ->
``report_as_json`` / ``report_csv`` / ``report_trec_run`` / ``report_trec_qrels`` (exports).
"""

from __future__ import annotations

import csv
import io
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from django.db.models import Count
from django.shortcuts import get_object_or_404

from benchmarks.rerank.models import RerankGrade, RerankRun
from benchmarks.retrieval.models import RetrievalCandidate, RetrievalResult, RetrievalRun, RunStatus
from benchmarks.suites.models import NominatedTarget, QueryKind
from reviewapp.core.hashing import sha256_json
from reviewapp.providers.models import Ledger
from reviewapp.providers.selectors import ledger_spend
from scoring.ir.family_bootstrap import (
    DEFAULT_REPLICATES,
    DEFAULT_SEED,
    family_bootstrap,
    paired_family_bootstrap,
)
from scoring.ir.ranking import format_qrels, format_run, query_ranking_metrics
from scoring.stats.bootstrap import Interval

METRICS = ("Hit@1", "Hit@5", "Hit@10", "RR")
SPLITS = (("dev", "development"), ("heldout", "held-out"))
PRIMARY_SPLIT, PRIMARY_METRIC = "heldout", "Hit@5"
DIAGNOSTIC_THRESHOLD = 0.8
OUTSIDE_CONTROL_TOP = 5
MIN_REPLICATES, MAX_REPLICATES = 1_000, 100_000
MAX_SEED = 2**32 - 1
SYSTEMS = ("keyword", "reranked", "secondary")
REPORT_SCHEMA = "benchmark-report/1"

CAVEATS = (
    "Targets were nominated from the official text by the assistant, not a lawyer: they are provisional, "
    "incomplete positives, so these figures are neither precision nor exhaustive recall.",
    "Intervals are percentile 95% intervals of a paired bootstrap over query families: they describe "
    "sampling within this suite, not generalisation to all legal research questions.",
    "Reranking cannot recover a provision absent from the candidate pool: coverage bounds what any reranker "
    "can reach.",
    "Every failure and fallback search stays in the comparison and is listed below.",
    "This tests retrieval relevance, not current legal validity, completeness, legal outcomes or advice quality.",
)
COVERAGE_NOTE = "Reranking cannot recover a provision absent from the pool: coverage is the same for both systems."
THRESHOLD_NOTE = (
    f"P(useful) >= {DIAGNOSTIC_THRESHOLD} is flagged as a diagnostic for inspection, not a production cutoff; "
    "outside-corpus results are not automatically irrelevant."
)


class ReportParameterError(ValueError):
    """A report parameter outside its sane range; the message names the parameter and the range."""


def report_parameters(*, replicates: Any = DEFAULT_REPLICATES, seed: Any = DEFAULT_SEED) -> tuple[int, int]:
    """Validate the bootstrap settings of a report (replicates, seed), refusing absurd values with a message."""
    try:
        replicates = int(replicates)
    except (TypeError, ValueError):
        raise ReportParameterError(f"replicates must be a whole number, got {replicates!r}") from None
    try:
        seed = int(seed)
    except (TypeError, ValueError):
        raise ReportParameterError(f"seed must be a whole number, got {seed!r}") from None
    if not MIN_REPLICATES <= replicates <= MAX_REPLICATES:
        raise ReportParameterError(
            f"replicates must be between {MIN_REPLICATES:,} and {MAX_REPLICATES:,} "
            f"(fewer makes 2.5th/97.5th percentiles noise, more only costs time), got {replicates:,}"
        )
    if not 0 <= seed <= MAX_SEED:
        raise ReportParameterError(f"seed must be between 0 and {MAX_SEED}, got {seed}")
    return replicates, seed


# --------------------------------------------------------------------------- inputs


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
    targets: tuple[str, ...]  # docids of the nominated targets
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
    graded = sorted((c for c in candidates if c.p_useful is not None), key=lambda c: (-c.p_useful, c.keyword_rank))
    ungraded = sorted((c for c in candidates if c.p_useful is None), key=lambda c: c.keyword_rank)
    return graded + ungraded


# --------------------------------------------------------------------------- outputs


@dataclass(frozen=True)
class MetricRow:
    """One metric in one split: keyword mean, reranked mean, paired difference (reranked - keyword)."""

    metric: str
    keyword: Interval
    reranked: Interval | None
    difference: Interval | None


@dataclass(frozen=True)
class SplitSummary:
    split: str
    label: str
    queries: int
    families: int
    rows: tuple[MetricRow, ...]
    coverage: Interval
    coverage_included: int
    retrieval_fallbacks: int
    retrieval_failures: int
    rerank_failures: int

    def row(self, metric: str) -> MetricRow:
        return next(r for r in self.rows if r.metric == metric)


@dataclass(frozen=True)
class SecondarySplit:
    split: str
    label: str
    queries: int
    families: int
    means: dict[str, Interval]
    coverage: Interval


@dataclass(frozen=True)
class QueryRow:
    query: QueryInput
    keyword: dict[str, float]
    reranked: dict[str, float] | None
    secondary: dict[str, float] | None
    coverage: float | None
    missing_targets: tuple[str, ...]
    keyword_ranked: tuple[Candidate, ...]
    reranked_ranked: tuple[Candidate, ...]
    first_target_keyword: int | None
    first_target_reranked: int | None

    def top(self, n: int = 10) -> list[tuple[int, Candidate, Candidate | None]]:
        """(rank, keyword candidate, reranked candidate) for the first n ranks, for the drill-down."""
        reranked = list(self.reranked_ranked) + [None] * len(self.keyword_ranked)
        return [(i, c, reranked[i - 1]) for i, c in enumerate(self.keyword_ranked[:n], start=1)]

    @property
    def top10(self) -> list[tuple[int, Candidate, Candidate | None]]:
        return self.top(10)


@dataclass(frozen=True)
class Failure:
    qid: str
    kind: str
    split: str
    stage: str  # retrieval / rerank
    status: str
    detail: str


@dataclass(frozen=True)
class ExactControl:
    qid: str
    text: str
    expected_citation: str
    parsed_citation: str
    status: str
    resolved: bool
    matches_expected: bool
    error: str


@dataclass(frozen=True)
class OutsideResult:
    rank: int
    keyword_rank: int
    citation: str
    heading: str
    docid: str
    p_useful: float | None
    flagged: bool


@dataclass(frozen=True)
class OutsideControl:
    qid: str
    text: str
    retrieval_status: str
    rerank_status: str
    rerank_error: str
    top: tuple[OutsideResult, ...]
    flagged: int
    graded: int


@dataclass(frozen=True)
class Report:
    inputs: ReportInputs
    replicates: int
    seed: int
    level: float
    splits: tuple[SplitSummary, ...]
    secondary_splits: tuple[SecondarySplit, ...]
    queries: tuple[QueryRow, ...]
    failures: tuple[Failure, ...]
    fallbacks: tuple[Failure, ...]
    exact_controls: tuple[ExactControl, ...]
    outside_controls: tuple[OutsideControl, ...]
    reproducibility: dict[str, Any]

    @property
    def has_rerank(self) -> bool:
        return self.inputs.rerank is not None

    @property
    def ranking_queries(self) -> int:
        return len(self.queries)

    @property
    def population(self) -> str:
        counts = ", ".join(f"{s.queries} {s.label}" for s in self.splits)
        suite = self.inputs.suite
        return (
            f"Synthetic, source-derived suite {suite.name} v{suite.version} of {self.ranking_queries} ranking "
            f"queries ({counts}) in {sum(s.families for s in self.splits)} topic families; targets nominated by the "
            "assistant, not a lawyer, provisional; intervals describe sampling within this suite, not "
            "generalisation."
        )

    @property
    def primary(self) -> MetricRow | None:
        split = next((s for s in self.splits if s.split == PRIMARY_SPLIT), None)
        return split.row(PRIMARY_METRIC) if split and split.queries else None


def _first_target(ranked: Sequence[Candidate], targets: frozenset[str]) -> int | None:
    return next((i for i, c in enumerate(ranked, start=1) if c.docid in targets), None)


def _metrics(ranked: Sequence[Candidate], targets: frozenset[str]) -> dict[str, float]:
    values = query_ranking_metrics([c.docid for c in ranked], targets).as_dict()
    return {m: values[m] for m in METRICS}


def _nan_interval(level: float) -> Interval:
    nan = float("nan")
    return Interval(nan, nan, nan, level)


def report_compute(inputs: ReportInputs, *, replicates: int = DEFAULT_REPLICATES,
                   seed: int = DEFAULT_SEED, level: float = 0.95) -> Report:
    """Every figure of the report from plain inputs (no database). See the module docstring."""
    replicates, seed = report_parameters(replicates=replicates, seed=seed)
    has_rerank = inputs.rerank is not None
    secondary_by_qid = {q.qid: q for q in inputs.secondary_queries}
    rows: list[QueryRow] = []
    for q in inputs.queries:
        if q.kind != "ranking":
            continue
        targets = frozenset(q.targets)
        keyword = tuple(sorted(q.candidates, key=lambda c: c.keyword_rank))
        reranked = tuple(reranked_order(keyword)) if has_rerank else ()
        present = {c.docid for c in keyword}
        secondary = secondary_by_qid.get(q.qid)
        rows.append(QueryRow(
            query=q,
            keyword=_metrics(keyword, targets),
            reranked=_metrics(reranked, targets) if has_rerank else None,
            secondary=(_metrics(sorted(secondary.candidates, key=lambda c: c.keyword_rank), targets)
                       if secondary is not None else None),
            coverage=query_ranking_metrics([c.docid for c in keyword], targets).coverage,
            missing_targets=tuple(cit for cit, d in zip(q.target_citations, q.targets, strict=True)
                                  if d not in present),
            keyword_ranked=keyword,
            reranked_ranked=reranked,
            first_target_keyword=_first_target(keyword, targets),
            first_target_reranked=_first_target(reranked, targets) if has_rerank else None,
        ))

    splits = []
    secondary_splits = []
    for split, label in SPLITS:
        in_split = [r for r in rows if r.query.split == split]
        families = [r.query.family for r in in_split]
        metric_rows = []
        for metric in METRICS:
            keyword_values = [r.keyword[metric] for r in in_split]
            if not in_split:
                metric_rows.append(MetricRow(metric, _nan_interval(level), None, None))
            elif has_rerank:
                paired = paired_family_bootstrap([r.reranked[metric] for r in in_split], keyword_values, families,
                                                 replicates=replicates, seed=seed, level=level)
                metric_rows.append(MetricRow(metric, paired.b, paired.a, paired.difference))
            else:
                single = family_bootstrap(keyword_values, families, replicates=replicates, seed=seed, level=level)
                metric_rows.append(MetricRow(metric, single.interval, None, None))
        coverage = (family_bootstrap([r.coverage for r in in_split], families, replicates=replicates, seed=seed,
                                     level=level) if in_split else None)
        splits.append(SplitSummary(
            split=split, label=label, queries=len(in_split), families=len(set(families)),
            rows=tuple(metric_rows),
            coverage=coverage.interval if coverage else _nan_interval(level),
            coverage_included=coverage.included if coverage else 0,
            retrieval_fallbacks=sum(r.query.fallback_used for r in in_split),
            retrieval_failures=sum(r.query.retrieval_status in {"failed", "short"} for r in in_split),
            rerank_failures=sum(r.query.rerank_status in {"failed", "partial"} for r in in_split),
        ))
        if inputs.secondary is not None and in_split:
            with_secondary = [r for r in in_split if r.secondary is not None]
            sec_families = [r.query.family for r in with_secondary]
            means = {
                metric: family_bootstrap([r.secondary[metric] for r in with_secondary], sec_families,
                                         replicates=replicates, seed=seed, level=level).interval
                for metric in METRICS
            }
            sec_coverage = [
                query_ranking_metrics([c.docid for c in secondary_by_qid[r.query.qid].candidates],
                                      r.query.targets).coverage
                for r in with_secondary
            ]
            secondary_splits.append(SecondarySplit(
                split=split, label=label, queries=len(with_secondary), families=len(set(sec_families)), means=means,
                coverage=family_bootstrap(sec_coverage, sec_families, replicates=replicates, seed=seed,
                                          level=level).interval,
            ))

    failures, fallbacks = _failures(inputs)
    return Report(
        inputs=inputs, replicates=replicates, seed=seed, level=level, splits=tuple(splits),
        secondary_splits=tuple(secondary_splits), queries=tuple(rows), failures=failures, fallbacks=fallbacks,
        exact_controls=_exact_controls(inputs.queries), outside_controls=_outside_controls(inputs.queries, has_rerank),
        reproducibility=_reproducibility(inputs, replicates=replicates, seed=seed),
    )


def _failures(inputs: ReportInputs) -> tuple[tuple[Failure, ...], tuple[Failure, ...]]:
    failures: list[Failure] = []
    fallbacks: list[Failure] = []
    runs = [("retrieval", inputs.queries)]
    if inputs.secondary is not None:
        runs.append(("secondary retrieval", inputs.secondary_queries))
    for stage, queries in runs:
        for q in queries:
            if q.retrieval_status in {"failed", "short", "unresolved"}:
                failures.append(Failure(q.qid, q.kind, q.split, stage, q.retrieval_status,
                                        q.retrieval_error or f"{len(q.candidates)} candidates"))
            if q.fallback_used:
                fallbacks.append(Failure(q.qid, q.kind, q.split, stage, "fallback",
                                         f"{sum(c.via_fallback for c in q.candidates)} of {len(q.candidates)} "
                                         "candidates came from the fallback search"))
    if inputs.rerank is not None:
        for q in inputs.queries:
            if q.kind != "exact_citation" and q.rerank_status != "ok":
                failures.append(Failure(q.qid, q.kind, q.split, "rerank", q.rerank_status, q.rerank_error))
    return tuple(failures), tuple(fallbacks)


def _exact_controls(queries: Sequence[QueryInput]) -> tuple[ExactControl, ...]:
    out = []
    for q in queries:
        if q.kind != "exact_citation":
            continue
        resolved = q.retrieval_status == "resolved" and bool(q.candidates)
        found = q.candidates[0].citation if resolved else ""
        out.append(ExactControl(
            qid=q.qid, text=q.text, expected_citation=q.expected_citation, parsed_citation=q.parsed_citation,
            status=q.retrieval_status, resolved=resolved,
            matches_expected=resolved and (not q.expected_citation or found == q.expected_citation),
            error=q.retrieval_error,
        ))
    return tuple(out)


def _outside_controls(queries: Sequence[QueryInput], has_rerank: bool) -> tuple[OutsideControl, ...]:
    out = []
    for q in queries:
        if q.kind != "outside_corpus":
            continue
        ranked = reranked_order(q.candidates) if has_rerank else sorted(q.candidates, key=lambda c: c.keyword_rank)
        top = tuple(
            OutsideResult(rank=i, keyword_rank=c.keyword_rank, citation=c.citation, heading=c.heading, docid=c.docid,
                          p_useful=c.p_useful, flagged=c.p_useful is not None and c.p_useful >= DIAGNOSTIC_THRESHOLD)
            for i, c in enumerate(ranked[:OUTSIDE_CONTROL_TOP], start=1)
        )
        out.append(OutsideControl(
            qid=q.qid, text=q.text, retrieval_status=q.retrieval_status, rerank_status=q.rerank_status,
            rerank_error=q.rerank_error, top=top,
            flagged=sum(c.p_useful is not None and c.p_useful >= DIAGNOSTIC_THRESHOLD for c in q.candidates),
            graded=sum(c.p_useful is not None for c in q.candidates),
        ))
    return tuple(out)


def _reproducibility(inputs: ReportInputs, *, replicates: int, seed: int) -> dict[str, Any]:
    passages = sorted({(c.docid, c.passage_sha256) for q in inputs.queries for c in q.candidates})
    scores = sorted(
        [q.qid, c.docid, c.p_useful] for q in inputs.queries for c in q.candidates if c.p_useful is not None
    )
    rerank = inputs.rerank
    return {
        "suite": {"name": inputs.suite.name, "version": inputs.suite.version, "sha256": inputs.suite.sha256,
                  "sources_sha256": inputs.suite.sources_sha256, "frozen_at": inputs.suite.frozen_at},
        "snapshots": [{"source_key": key, "sha256": digest} for key, digest in inputs.suite.snapshots],
        "passages": {"count": len(passages), "rule": inputs.retrieval.passage_rule,
                     "sha256": sha256_json([list(p) for p in passages])},
        "retrieval": {"run": inputs.retrieval.pk, "engine": inputs.retrieval.engine,
                      "configuration": inputs.retrieval.configuration, "k": inputs.retrieval.k,
                      "index_documents": inputs.retrieval.index_documents,
                      "candidates_sha256": inputs.retrieval.candidates_sha256},
        "secondary": ({"run": inputs.secondary.pk, "engine": inputs.secondary.engine,
                       "configuration": inputs.secondary.configuration,
                       "candidates_sha256": inputs.secondary.candidates_sha256} if inputs.secondary else None),
        "rerank": ({"run": rerank.pk, "provider": rerank.provider, "provider_label": rerank.provider_label,
                    "model_id": rerank.model_id, "question_version": rerank.question_version,
                    "question_sha256": rerank.question_sha256, "method": rerank.method,
                    "candidates_per_request": rerank.candidates_per_request, "budget": dict(rerank.budget),
                    "scores_sha256": sha256_json(scores)} if rerank else None),
        "bootstrap": {"replicates": replicates, "seed": seed, "level": 0.95, "unit": "query family",
                      "method": "paired percentile"},
    }


# --------------------------------------------------------------------------- exports


def _interval_json(interval: Interval | None) -> dict[str, float | None] | None:
    if interval is None:
        return None

    def clean(x: float) -> float | None:
        return None if math.isnan(x) else round(x, 6)

    return {"estimate": clean(interval.estimate), "low": clean(interval.low), "high": clean(interval.high)}


def _candidate_json(c: Candidate, rank: int, targets: frozenset[str]) -> dict[str, Any]:
    return {"rank": rank, "keyword_rank": c.keyword_rank, "docid": c.docid, "citation": c.citation,
            "heading": c.heading, "keyword_score": c.keyword_score, "via_fallback": c.via_fallback,
            "passage_sha256": c.passage_sha256, "p_useful": c.p_useful, "target": c.docid in targets}


def report_as_json(report: Report) -> dict[str, Any]:
    """Everything on the report page as JSON-ready data (NaN written as null)."""
    inputs = report.inputs
    primary = report.primary
    return {
        "schema": REPORT_SCHEMA,
        "population": report.population,
        "caveats": list(CAVEATS),
        "coverage_note": COVERAGE_NOTE,
        "primary_endpoint": {
            "split": PRIMARY_SPLIT, "metric": PRIMARY_METRIC,
            "keyword": _interval_json(primary.keyword) if primary else None,
            "reranked": _interval_json(primary.reranked) if primary else None,
            "difference_reranked_minus_keyword": _interval_json(primary.difference) if primary else None,
        },
        "systems": {
            "keyword": f"keyword order of retrieval run #{inputs.retrieval.pk} ({inputs.retrieval.configuration})",
            "reranked": (f"the same candidates by P(useful) descending, ties by keyword rank "
                         f"(rerank run #{inputs.rerank.pk}, {inputs.rerank.provider_label} {inputs.rerank.model_id})"
                         if inputs.rerank else None),
            "secondary": (f"keyword order of retrieval run #{inputs.secondary.pk} ({inputs.secondary.configuration}): "
                          "different retrieval rules, so reported apart" if inputs.secondary else None),
        },
        "bootstrap": {"replicates": report.replicates, "seed": report.seed, "level": report.level,
                      "unit": "query family", "method": "paired percentile"},
        "splits": [
            {"split": s.split, "label": s.label, "queries": s.queries, "families": s.families,
             "retrieval_fallbacks": s.retrieval_fallbacks, "retrieval_failures": s.retrieval_failures,
             "rerank_failures": s.rerank_failures,
             "coverage": _interval_json(s.coverage), "coverage_included": s.coverage_included,
             "metrics": {r.metric: {"keyword": _interval_json(r.keyword), "reranked": _interval_json(r.reranked),
                                    "difference": _interval_json(r.difference)} for r in s.rows}}
            for s in report.splits
        ],
        "secondary": [
            {"split": s.split, "label": s.label, "queries": s.queries, "families": s.families,
             "coverage": _interval_json(s.coverage),
             "metrics": {m: _interval_json(i) for m, i in s.means.items()}}
            for s in report.secondary_splits
        ],
        "queries": [_query_json(r) for r in report.queries],
        "failures": [vars(f) for f in report.failures],
        "fallbacks": [vars(f) for f in report.fallbacks],
        "controls": {
            "exact_citation": [vars(c) for c in report.exact_controls],
            "outside_corpus": [
                {**{k: v for k, v in vars(c).items() if k != "top"}, "top": [vars(t) for t in c.top]}
                for c in report.outside_controls
            ],
            "diagnostic_threshold": DIAGNOSTIC_THRESHOLD,
            "threshold_note": THRESHOLD_NOTE,
        },
        "reproducibility": report.reproducibility,
    }


def _query_json(r: QueryRow) -> dict[str, Any]:
    q = r.query
    targets = frozenset(q.targets)
    return {
        "qid": q.qid, "text": q.text, "split": q.split, "family": q.family,
        "targets": list(q.target_citations), "missing_targets": list(r.missing_targets), "coverage": r.coverage,
        "retrieval_status": q.retrieval_status, "retrieval_error": q.retrieval_error,
        "fallback_used": q.fallback_used, "rerank_status": q.rerank_status, "rerank_error": q.rerank_error,
        "metrics": {"keyword": r.keyword, "reranked": r.reranked, "secondary": r.secondary},
        "first_target_rank": {"keyword": r.first_target_keyword, "reranked": r.first_target_reranked},
        "candidates_keyword": [_candidate_json(c, i, targets) for i, c in enumerate(r.keyword_ranked, start=1)],
        "candidates_reranked": [_candidate_json(c, i, targets) for i, c in enumerate(r.reranked_ranked, start=1)],
    }


CSV_COLUMNS = (
    ["qid", "split", "family", "targets", "coverage", "missing_targets", "retrieval_status", "fallback_used",
     "rerank_status", "rerank_error"]
    + [f"keyword_{m}" for m in METRICS] + [f"reranked_{m}" for m in METRICS] + [f"secondary_{m}" for m in METRICS]
    + ["first_target_rank_keyword", "first_target_rank_reranked"]
)


def report_csv(report: Report) -> str:
    """One row per ranking query; blank cells where a system is absent."""
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(CSV_COLUMNS)
    for r in report.queries:
        q = r.query
        row = [q.qid, q.split, q.family, " ".join(q.target_citations), "" if r.coverage is None else r.coverage,
               " ".join(r.missing_targets), q.retrieval_status, int(q.fallback_used), q.rerank_status, q.rerank_error]
        for system in (r.keyword, r.reranked, r.secondary):
            row += [system[m] if system else "" for m in METRICS]
        row += [r.first_target_keyword or "", r.first_target_reranked or ""]
        writer.writerow(row)
    return out.getvalue()


def report_trec_run(report: Report, *, system: str) -> str:
    """TREC run text of one system over the ranking queries, in its rank order.

    Scores are derived from the rank (list length - rank + 1) so that
    trec_eval's order (score descending, ties by docid) is the file order;
    the engine scores and probabilities stay in the JSON export.
    """
    inputs = report.inputs
    if system == "keyword":
        rankings = {r.query.qid: [c.docid for c in r.keyword_ranked] for r in report.queries}
        tag = f"keyword-r{inputs.retrieval.pk}"
    elif system == "reranked" and inputs.rerank is not None:
        rankings = {r.query.qid: [c.docid for c in r.reranked_ranked] for r in report.queries}
        tag = f"reranked-rr{inputs.rerank.pk}"
    elif system == "secondary" and inputs.secondary is not None:
        by_qid = {q.qid: q for q in inputs.secondary_queries}
        rankings = {
            r.query.qid: [c.docid for c in sorted(by_qid[r.query.qid].candidates, key=lambda c: c.keyword_rank)]
            for r in report.queries if r.query.qid in by_qid
        }
        tag = f"secondary-r{inputs.secondary.pk}"
    else:
        raise ValueError(f"this report has no {system!r} system")
    return format_run({qid: ranked for qid, ranked in rankings.items() if ranked}, tag=tag)


def report_trec_qrels(report: Report) -> str:
    """TREC qrels of the nominated targets (relevance 1; provisional positives, everything else unjudged)."""
    return format_qrels({r.query.qid: dict.fromkeys(r.query.targets, 1) for r in report.queries if r.query.targets})


def report_families(report: Report) -> str:
    """``qid family`` lines, for ``manage.py relevance_metrics --families``."""
    return "".join(f"{r.query.qid} {r.query.family}\n" for r in report.queries)


def report_systems(report: Report) -> list[str]:
    inputs = report.inputs
    return [s for s, present in zip(SYSTEMS, (True, inputs.rerank is not None, inputs.secondary is not None),
                                    strict=True) if present]


# --------------------------------------------------------------------------- reads


def _suite_meta(run: RetrievalRun) -> SuiteMeta:
    suite = run.suite
    return SuiteMeta(
        pk=suite.pk, name=suite.name, version=suite.version, corpus=suite.corpus, sha256=suite.sha256,
        sources_sha256=suite.sources_sha256, frozen_at=suite.frozen_at.isoformat(),
        snapshots=tuple(suite.snapshots.order_by("source_key", "id").values_list("source_key", "sha256")),
    )


def _retrieval_meta(run: RetrievalRun) -> RetrievalMeta:
    detail = run.configuration_detail or {}
    return RetrievalMeta(
        pk=run.pk, engine=run.engine, configuration=run.configuration, description=detail.get("description", ""),
        k=run.k, passage_rule=run.passage_rule, index_documents=run.index_documents, status=run.status,
        error=run.error, candidates_sha256=run.candidates_sha256,
    )


def _docid(citation: str, variant: int) -> str:
    # The same rule as Provision.docid, applied to values() rows.
    base = citation.replace(" ", "_")
    return base if variant == 1 else f"{base}~v{variant}"


def retrieval_queries_load(*, run: RetrievalRun) -> tuple[QueryInput, ...]:
    """Every query of a retrieval run with its candidates in keyword order and its nominated targets (3 queries)."""
    targets: dict[int, list[tuple[str, str]]] = {}
    for query_id, citation, number_citation, variant in (
        NominatedTarget.objects.filter(query__suite_id=run.suite_id).order_by("query_id", "id")
        .values_list("query_id", "citation", "provision__citation", "provision__variant")
    ):
        targets.setdefault(query_id, []).append((citation, _docid(number_citation, variant)))
    candidates: dict[int, list[Candidate]] = {}
    for row in (
        RetrievalCandidate.objects.filter(result__run=run).order_by("result_id", "rank")
        .values("result_id", "rank", "score", "via_fallback", "provision_id", "provision__citation",
                "provision__variant", "provision__heading", "passage__sha256")
    ):
        candidates.setdefault(row["result_id"], []).append(Candidate(
            docid=_docid(row["provision__citation"], row["provision__variant"]), provision_id=row["provision_id"],
            citation=row["provision__citation"], heading=row["provision__heading"], keyword_rank=row["rank"],
            keyword_score=row["score"], via_fallback=row["via_fallback"], passage_sha256=row["passage__sha256"],
        ))
    out = []
    for result in RetrievalResult.objects.filter(run=run).select_related("query", "query__family").order_by(
            "query__position"):
        q = result.query
        query_targets = targets.get(q.pk, [])
        out.append(QueryInput(
            qid=q.qid, text=q.text, kind=q.kind, split=q.split, family=q.family.name if q.family else q.qid,
            targets=tuple(d for _, d in query_targets), target_citations=tuple(c for c, _ in query_targets),
            candidates=tuple(candidates.get(result.pk, ())), retrieval_status=result.status,
            retrieval_error=result.error, fallback_used=result.fallback_used, method=result.method,
            parsed_citation=result.parsed_citation, expected_citation=q.expected_citation,
        ))
    return tuple(out)


def secondary_run_default(*, run: RetrievalRun) -> RetrievalRun | None:
    """The latest finished run of the same suite and engine with a different configuration (the secondary baseline)."""
    return (
        RetrievalRun.objects.filter(suite_id=run.suite_id, engine=run.engine, status=RunStatus.DONE)
        .exclude(configuration=run.configuration).order_by("-id").first()
    )


def report_inputs_load(*, run: RetrievalRun, rerank: RerankScores | None = None,
                       secondary: RetrievalRun | None = None) -> ReportInputs:
    """Plain inputs of a report: the suite, the primary run (with the rerank applied) and the secondary run."""
    if secondary is not None and secondary.suite_id != run.suite_id:
        raise ReportParameterError(f"secondary run #{secondary.pk} is of another suite than run #{run.pk}")
    return ReportInputs(
        suite=_suite_meta(run),
        retrieval=_retrieval_meta(run),
        queries=rerank_apply(retrieval_queries_load(run=run), rerank),
        rerank=rerank.meta if rerank is not None else None,
        secondary=_retrieval_meta(secondary) if secondary is not None else None,
        secondary_queries=retrieval_queries_load(run=secondary) if secondary is not None else (),
    )


def report_build(*, run: RetrievalRun, rerank: RerankScores | None = None, secondary: RetrievalRun | None = None,
                 replicates: Any = DEFAULT_REPLICATES, seed: Any = DEFAULT_SEED) -> Report:
    """The report of (suite, retrieval run, rerank run), with the secondary baseline when given."""
    replicates, seed = report_parameters(replicates=replicates, seed=seed)
    return report_compute(report_inputs_load(run=run, rerank=rerank, secondary=secondary),
                          replicates=replicates, seed=seed)


# --------------------------------------------------------------------------- the rerank adapter


def rerank_scores_from_run(*, run: RerankRun) -> RerankScores:
    """The one adapter from a stored rerank run to what the report needs.

    The current grade of a candidate is its highest attempt (as the rerank run
    page reads it). Failed and unknown grades, and candidates never sent (the
    run stopped, was cancelled or is still running), leave the candidate
    ungraded; the query's error says how many of each and why.
    """
    latest: dict[int, dict[str, Any]] = {}
    for grade in (
        RerankGrade.objects.filter(run=run).order_by("attempt", "id")
        .values("candidate_id", "candidate__provision_id", "query__qid", "status", "p_useful", "error")
    ):
        latest[grade["candidate_id"]] = grade
    p_useful: dict[str, dict[int, float]] = {}
    problems: dict[str, dict[str, int]] = {}
    first_error: dict[str, str] = {}
    for grade in latest.values():
        qid = grade["query__qid"]
        if grade["status"] == RerankGrade.Status.GRADED and grade["p_useful"] is not None:
            p_useful.setdefault(qid, {})[grade["candidate__provision_id"]] = float(grade["p_useful"])
        else:
            problems.setdefault(qid, {}).setdefault(grade["status"], 0)
            problems[qid][grade["status"]] += 1
            if grade["error"]:
                first_error.setdefault(qid, grade["error"].splitlines()[0][:300])
    planned = dict(
        RetrievalCandidate.objects.filter(
            result__run_id=run.retrieval_run_id, result__query__kind__in=[QueryKind.RANKING, QueryKind.OUTSIDE_CORPUS])
        .values_list("result__query__qid").annotate(n=Count("id")).values_list("result__query__qid", "n")
    )
    errors: dict[str, str] = {}
    for qid, total in planned.items():
        counts = problems.get(qid, {})
        never = total - len(p_useful.get(qid, {})) - sum(counts.values())
        parts = [f"{n} {status}" for status, n in sorted(counts.items())]
        if never > 0:
            why = run.stop_reason or ("the run is " + run.status)
            parts.append(f"{never} never sent ({why})")
        if parts:
            errors[qid] = f"{', '.join(parts)} of {total} candidates" + (
                f"; first error: {first_error[qid]}" if qid in first_error else "")
    spend = ledger_spend(ledger=run.ledger)
    provider_label = dict(Ledger.Provider.choices).get(run.provider, run.provider)
    meta = RerankMeta(
        pk=run.pk, provider=run.provider, provider_label=provider_label, model_id=run.model_id,
        question_version=run.question_version, question_sha256=run.question_sha256, status=run.status,
        error=run.error or run.stop_reason, method=run.method_label,
        candidates_per_request=run.candidates_per_request,
        budget={"requests": spend.requests, "max_requests": spend.max_requests,
                "input_tokens": spend.input_tokens, "reported_input_tokens": spend.reported_input_tokens,
                "max_input_tokens": spend.max_input_tokens, "receipts_by_status": spend.by_status,
                "stop_reason": spend.stop_reason},
    )
    return RerankScores(meta=meta, p_useful=p_useful, status={}, errors=errors)


def rerank_scores_load(*, pk: int) -> tuple[RerankScores, RetrievalRun]:
    """(adapter output, its retrieval run) of rerank run ``pk``; 404 when there is none."""
    run = get_object_or_404(RerankRun.objects.select_related("retrieval_run__suite", "ledger"), pk=pk)
    return rerank_scores_from_run(run=run), run.retrieval_run


def rerank_run_list() -> list[RerankRun]:
    return list(RerankRun.objects.select_related("suite", "retrieval_run").order_by("-id")[:100])
