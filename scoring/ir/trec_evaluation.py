"""Known-target metrics of TREC runs against TREC qrels, with family bootstrap intervals.

This is what ``manage.py relevance_metrics`` computes, kept here so that it stays
pure and testable. Conventions, chosen to agree with ir_measures / trec_eval:

- Targets of a query = its qrels documents with relevance >= the relevance
  level (trec_eval's ``-l``, default 1).
- Population = every query in the qrels. A qrels query the run does not answer
  scores 0 on every metric, and so does a qrels query with no relevant
  document (both as trec_eval / ir_measures report them). Run queries absent
  from the qrels are ignored (and listed).
- A run is ordered by score descending, ties by docid descending, ignoring the
  rank column (trec_eval's rule; see ``ranking.ranked_docids``).
- Per query: the measures asked for, by ir_measures' names (``scoring.ir.measures``;
  default Hit@1, Hit@5, Hit@10 (0/1) and RR, 0 when no target is listed).
  Mean: query-weighted mean over the population. CI: percentile interval of
  the family bootstrap (``family_bootstrap``); for two or more runs, the paired
  difference of each run against the first, and every pair of runs (``pairs``:
  later run - earlier run) on the same draws, with two-sided paired-bootstrap
  p-values adjusted by Holm's rule over the pairs of each metric
  (``scoring.stats.multiple``).

Families file: one ``qid family`` pair per line (whitespace-separated; blank
lines and lines starting with ``#`` are skipped). Without one, every query is
its own family.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field

from scoring.ir.family_bootstrap import (
    DEFAULT_REPLICATES,
    DEFAULT_SEED,
    FamilyBootstrap,
    PairedFamilyBootstrap,
    family_bootstraps,
)
from scoring.ir.measures import DEFAULT_REL_LEVEL, Measure, evaluate_query, parse_measures
from scoring.ir.ranking import check_ranked
from scoring.ir.trec_io import TrecFormatError, source_lines
from scoring.stats.multiple import bootstrap_p_value, holm_adjust

METRICS = ("Hit@1", "Hit@5", "Hit@10", "RR")  # the default measures (Hit@k is Success@k)


def parse_families(lines: Iterable[str], *, source: str = "<families>") -> dict[str, str]:
    """Parse ``qid family`` lines into ``{qid: family}``; errors name ``source`` and the line."""
    families: dict[str, str] = {}
    first_line: dict[str, int] = {}
    for line_number, line in enumerate(lines, start=1):
        fields = line.split()
        if not fields or fields[0].startswith("#"):
            continue
        if len(fields) != 2:
            raise TrecFormatError(source, line_number, f"expected 2 fields 'qid family', got {len(fields)}", line)
        qid, family = fields
        if qid in families:
            raise TrecFormatError(
                source, line_number, f"query {qid!r} already has a family on line {first_line[qid]}", line
            )
        families[qid] = family
        first_line[qid] = line_number
    return families


def read_families(source: str | os.PathLike[str] | Iterable[str]) -> dict[str, str]:
    """Read a families file (a path or an iterable of lines); see :func:`parse_families`."""
    name, lines = source_lines(source)
    return parse_families(lines, source=name)


@dataclass(frozen=True)
class RunEvaluation:
    """One run: per-query metrics, means and family-bootstrap intervals over the qrels queries."""

    name: str
    per_query: dict[str, dict[str, float]]
    intervals: dict[str, FamilyBootstrap]
    unanswered: list[str]
    ignored: list[str]


@dataclass(frozen=True)
class PairComparison:
    """One pair of runs (a - b) on one metric: the paired interval, its p-value and Holm-adjusted p-value."""

    a: str
    b: str
    metric: str
    bootstrap: PairedFamilyBootstrap
    p_value: float
    p_adjusted: float


@dataclass(frozen=True)
class TrecEvaluation:
    """Every run evaluated on the same queries and families, plus paired differences against the first run."""

    queries: list[str]
    families_given: bool
    families: int
    queries_without_targets: list[str]
    runs: list[RunEvaluation]
    differences: list[tuple[str, str, dict[str, PairedFamilyBootstrap]]]
    replicates: int
    seed: int
    # Every pair of runs (later - earlier) per metric; Holm's family is the pairs of one metric.
    pairs: list[PairComparison] = field(default_factory=list)
    measures: tuple[str, ...] = METRICS
    rel_level: int = DEFAULT_REL_LEVEL


def _query_metrics(measures: Sequence[Measure], ranked: Sequence[str], judged: Mapping[str, int],
                   rel_level: int) -> dict[str, float]:
    if len(set(ranked)) != len(ranked):
        check_ranked(ranked)  # raises, naming the repeated document
    return evaluate_query(measures, ranked, judged, rel_level=rel_level)


def _p_value(pair: PairedFamilyBootstrap) -> float:
    return float("nan") if pair.replicate_differences is None else bootstrap_p_value(pair.replicate_differences)


def evaluate_trec_runs(
    qrels: Mapping[str, Mapping[str, int]],
    runs: Iterable[tuple[str, Mapping[str, Sequence[str]]]],
    *,
    families: Mapping[str, str] | None = None,
    replicates: int = DEFAULT_REPLICATES,
    seed: int = DEFAULT_SEED,
    measures: Sequence[str] = METRICS,
    rel_level: int = DEFAULT_REL_LEVEL,
) -> TrecEvaluation:
    """The ``measures`` (default Hit@1/5/10 and RR) of each run (``(name, {qid: ranked docids})``) against ``qrels``.

    ``measures`` are names from ``scoring.ir.measures`` (ValueError for an unknown one); ``rel_level`` is the
    grade from which a document counts as relevant for the binary measures (trec_eval's ``-l``).

    ``runs`` may be a generator: each run is read, scored and released before the next.

    Statistic: mean over every qrels query, with a percentile family-bootstrap
    interval (``replicates``, ``seed``). ``families`` maps qid -> family; every
    qrels query must have one. ValueError names the query that lacks one.
    """
    parsed = parse_measures(measures)
    names = tuple(measure.name for measure in parsed)
    queries = sorted(qrels)
    if not queries:
        raise ValueError("the qrels judge no query")
    if families is None:
        family_of = {qid: qid for qid in queries}
    else:
        missing = [qid for qid in queries if qid not in families]
        if missing:
            raise ValueError(f"the families file gives no family for {len(missing)} qrels queries: {missing[:10]}")
        family_of = {qid: families[qid] for qid in queries}
    family_list = [family_of[qid] for qid in queries]
    targets = {qid: {d for d, rel in qrels[qid].items() if rel >= rel_level} for qid in queries}

    evaluations: list[RunEvaluation] = []
    values: dict[tuple[int, str], list[float]] = {}
    # Runs are consumed one at a time (the caller may read each file lazily): only the per-query
    # figures of a run are kept, never its rankings.
    for index, (name, rankings) in enumerate(runs):
        per_query = {qid: _query_metrics(parsed, rankings.get(qid, ()), qrels[qid], rel_level) for qid in queries}
        for metric in names:
            values[index, metric] = [per_query[qid][metric] for qid in queries]
        evaluations.append(
            RunEvaluation(
                name=name,
                per_query=per_query,
                intervals={},
                unanswered=[qid for qid in queries if qid not in rankings],
                ignored=sorted(qid for qid in rankings if qid not in qrels),
            )
        )

    # One draw for every metric of every run and every paired difference (same queries, same families).
    # The pairs (j, i) with i = 0 are the differences against the first run; every other pair rides the
    # same draws, so all pairwise intervals and p-values come from the same replicates.
    singles, pairs = family_bootstraps(
        values,
        {
            (later, earlier, metric): (values[later, metric], values[earlier, metric])
            for later in range(1, len(evaluations))
            for earlier in range(later)
            for metric in names
        },
        family_list,
        replicates=replicates,
        seed=seed,
        keep_replicates=True,
    )
    for index, run in enumerate(evaluations):
        run.intervals.update({metric: singles[index, metric] for metric in names})
    differences = [
        (run.name, evaluations[0].name, {metric: pairs[index, 0, metric] for metric in names})
        for index, run in enumerate(evaluations[1:], start=1)
    ]
    comparisons: list[PairComparison] = []
    for metric in names:
        keys = [key for key in pairs if key[2] == metric]
        p_values = [_p_value(pairs[key]) for key in keys]
        for (later, earlier, _), p_value, p_adjusted in zip(keys, p_values, holm_adjust(p_values), strict=True):
            comparisons.append(PairComparison(
                a=evaluations[later].name, b=evaluations[earlier].name, metric=metric,
                bootstrap=pairs[later, earlier, metric], p_value=p_value, p_adjusted=p_adjusted,
            ))
    return TrecEvaluation(
        queries=queries,
        families_given=families is not None,
        families=len(set(family_list)),
        queries_without_targets=[qid for qid in queries if not targets[qid]],
        runs=evaluations,
        differences=differences,
        replicates=replicates,
        seed=seed,
        pairs=comparisons,
        measures=names,
        rel_level=rel_level,
    )
