"""The figures of a benchmark report of one (suite, retrieval run, rerank run): pure, from plain inputs.

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
entirely is ranked in keyword order; it is listed among the failures. What the rerank run covered
(``coverage.run_coverage``: banner, "incomplete: n of N queries reranked") and the one sentence to quote
(``conclusion.conclusion_sentence``) are read off the same figures; a failed run, or one that graded no
candidate, has no reranked figures at all.

Three layers, so the arithmetic can be tested and timed without a database:
``selectors.report_inputs_load`` (reads, Django) -> ``figures.report_compute`` (pure) ->
``exports`` (``report_as_json`` / ``report_csv`` / ``report_trec_run`` / ``report_trec_qrels``).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from functools import cached_property
from typing import Any

from benchmarks.reports.inputs import Candidate, QueryInput, ReportInputs, SuiteMeta, reranked_order
from benchmarks.reports.params import report_parameters
from benchmarks.reports.reading.conclusion import Conclusion, conclusion_sentence
from benchmarks.reports.reading.coverage import RunCoverage, run_coverage
from reviewapp.core.records.hashing import sha256_json
from scoring.ir.family_bootstrap import DEFAULT_REPLICATES, DEFAULT_SEED, family_bootstrap, paired_family_bootstrap
from scoring.ir.ranking import query_ranking_metrics
from scoring.stats.bootstrap import Interval
from scoring.stats.units import unit_support

METRICS = ("Hit@1", "Hit@5", "Hit@10", "RR")
SPLITS = (("dev", "development"), ("heldout", "held-out"))
PRIMARY_SPLIT = "heldout"
PRIMARY_METRIC = "Hit@5"
DIAGNOSTIC_THRESHOLD = 0.8
OUTSIDE_CONTROL_TOP = 5
SYSTEMS = ("keyword", "reranked", "secondary")

# The first caveat (who nominated the targets, and whether they are provisional) comes from the suite's
# own fields: see Report.caveats.
GENERAL_CAVEATS = (
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
    # Set by ``exposure.exposure_record`` when held-out figures are computed for a reader (page, export,
    # API, command): what the held-out ledger says about this configuration. None when not recorded.
    exposure: Any = None

    @property
    def has_rerank(self) -> bool:
        return self.inputs.rerank is not None

    @property
    def ranking_queries(self) -> int:
        return len(self.queries)

    @property
    def population(self) -> str:
        return suite_population(self.inputs.suite, self.splits, queries=self.ranking_queries)

    @property
    def units_note(self) -> str:
        """' Development split: 1 query family: too few ...' for each split the rule marks ('' when none)."""
        return _units_note(self.splits)

    @property
    def caveats(self) -> tuple[str, ...]:
        return suite_caveats(self.inputs.suite)

    @property
    def primary(self) -> MetricRow | None:
        """The primary endpoint's row; None without held-out queries or when the rerank run's figures are withheld."""
        if self.coverage is not None and self.coverage.withheld:
            return None
        split = next((s for s in self.splits if s.split == PRIMARY_SPLIT), None)
        return split.row(PRIMARY_METRIC) if split and split.queries else None

    @cached_property
    def coverage(self) -> RunCoverage | None:
        """What the rerank run covered (None without one): banner, headline label, queries left out."""
        return run_coverage(self.inputs)

    @cached_property
    def conclusion(self) -> Conclusion:
        """The one sentence to quote, from the primary endpoint's figures and intervals."""
        split = next((s for s in self.splits if s.split == PRIMARY_SPLIT), None)
        row = self.primary
        return conclusion_sentence(
            keyword=row.keyword if row else None, reranked=row.reranked if row else None,
            difference=row.difference if row else None, queries=split.queries if split else 0,
            families=split.families if split else 0, coverage=self.coverage, has_rerank=self.has_rerank,
            endpoint=f"{split.label if split else PRIMARY_SPLIT} {PRIMARY_METRIC}",
        )


def suite_population(suite: SuiteMeta, splits: Sequence[Any], *, queries: int | None = None) -> str:
    """The population box: the suite, its ranking queries and families per split, who nominated the targets.

    ``splits``: anything with ``label``, ``queries`` and ``families`` (a report's or a leaderboard's splits).
    """
    counts = ", ".join(f"{s.queries} {s.label}" for s in splits)
    kind = {True: "Synthetic suite", False: "Suite (declared not synthetic)", None: "Suite"}[suite.synthetic]
    undeclared = "; the suite file does not declare whether it is synthetic" if suite.synthetic is None else ""
    return (
        f"{kind} {suite.name} v{suite.version} of {sum(s.queries for s in splits) if queries is None else queries} "
        "ranking "
        f"queries ({counts}) in {sum(s.families for s in splits)} topic families{undeclared}; "
        "targets nominated by "
        f"{_nominators(suite)}, {_provisional(suite)}; intervals describe sampling within this suite, not "
        f"generalisation.{_units_note(splits)}"
    )


def _units_note(splits: Sequence[Any]) -> str:
    notes = [f"{s.label.capitalize()} split: {unit_support(s.families, unit='query family').sentence}."
             for s in splits if s.queries and unit_support(s.families, unit="query family").sentence]
    return "".join(f" {n}" for n in notes)


def suite_caveats(suite: SuiteMeta) -> tuple[str, ...]:
    """The caveats every comparison on this suite carries: who nominated the targets, then the general ones, then
    which targets a newer snapshot of their source changed."""
    return (
        f"Targets were nominated from the official text by {_nominators(suite)} ({_provisional(suite)}); they are "
        "known positives, incomplete, so these figures are neither precision nor exhaustive recall.",
        *GENERAL_CAVEATS,
        *suite.source_changes,
    )


def _nominators(suite: SuiteMeta) -> str:
    return " and ".join(suite.nominators) if suite.nominators else "an unnamed nominator"


def _provisional(suite: SuiteMeta) -> str:
    confirmed = sum(n for _, n in suite.targets_confirmed)
    if confirmed:
        # Counted from the targets' own confirmed_by: how many lawyers confirmed each, blind.
        total = suite.targets_total
        parts = [f"{'all' if n == total else f'{n} of {total}'} confirmed by {lawyers} lawyer{'s' * (lawyers != 1)}"
                 for lawyers, n in suite.targets_confirmed]
        if suite.targets_provisional:
            parts.append(f"{suite.targets_provisional} provisional")
        rest = total - confirmed - suite.targets_provisional
        if rest:
            parts.append(f"{rest} neither provisional nor confirmed")
        return ", ".join(parts)
    if suite.targets_provisional == suite.targets_total:
        return "all provisional"
    if suite.targets_provisional == 0:
        return "none marked provisional"
    return f"{suite.targets_provisional} of {suite.targets_total} provisional"


def _first_target(ranked: Sequence[Candidate], targets: frozenset[str]) -> int | None:
    return next((i for i, c in enumerate(ranked, start=1) if c.docid in targets), None)


def defined_metric(value: float | None) -> float:
    """A headline metric of one query (a hit rate or RR: defined for every ranking; only coverage may be None)."""
    assert value is not None
    return value


def _reranked(row: QueryRow, metric: str) -> float:
    assert row.reranked is not None  # a paired report reranked every query
    return row.reranked[metric]


def _metrics(ranked: Sequence[Candidate], targets: frozenset[str]) -> dict[str, float]:
    values = query_ranking_metrics([c.docid for c in ranked], targets).as_dict()
    return {m: defined_metric(values[m]) for m in METRICS}


def _nan_interval(level: float) -> Interval:
    nan = float("nan")
    return Interval(nan, nan, nan, level)


def report_compute(inputs: ReportInputs, *, replicates: int = DEFAULT_REPLICATES,
                   seed: int = DEFAULT_SEED, level: float = 0.95) -> Report:
    """Every figure of the report from plain inputs (no database). See the module docstring."""
    replicates, seed = report_parameters(replicates=replicates, seed=seed)
    has_rerank = inputs.rerank is not None
    covered = run_coverage(inputs)
    # A failed run (or one that graded nothing) ranks every candidate in keyword order: no reranked figures.
    paired = has_rerank and not (covered is not None and covered.withheld)
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
            coverage=q.coverage(present),
            missing_targets=tuple(cit for cit, versions in q.target_groups() if not present.intersection(versions)),
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
            elif paired:
                pair = paired_family_bootstrap([_reranked(r, metric) for r in in_split], keyword_values, families,
                                               replicates=replicates, seed=seed, level=level)
                metric_rows.append(MetricRow(metric, pair.b, pair.a, pair.difference))
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
            secondaries = [r.secondary for r in with_secondary if r.secondary is not None]  # the same rows, typed
            means = {
                metric: family_bootstrap([s[metric] for s in secondaries], sec_families,
                                         replicates=replicates, seed=seed, level=level).interval
                for metric in METRICS
            }
            sec_coverage = [r.query.coverage({c.docid for c in secondary_by_qid[r.query.qid].candidates})
                            for r in with_secondary]
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


def report_systems(report: Report) -> list[str]:
    """The systems of a report, in order: keyword always, reranked and secondary when present."""
    inputs = report.inputs
    return [s for s, present in zip(SYSTEMS, (True, inputs.rerank is not None, inputs.secondary is not None),
                                    strict=True) if present]
