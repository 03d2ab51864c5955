"""Known-target metrics of TREC runs against TREC qrels, with family bootstrap intervals.

This is what ``manage.py relevance_metrics`` computes, kept here so that it stays
pure and testable. Conventions, chosen to agree with ir_measures / trec_eval:

- Targets of a query = its qrels documents with relevance >= 1.
- Population = every query in the qrels. A qrels query the run does not answer
  scores 0 on every metric, and so does a qrels query with no relevant
  document (both as trec_eval / ir_measures report them). Run queries absent
  from the qrels are ignored (and listed).
- A run is ordered by score descending, ties by docid descending, ignoring the
  rank column (trec_eval's rule; see ``ranking.ranked_docids``).
- Per query: Hit@1, Hit@5, Hit@10 (0/1) and RR (0 when no target is listed).
  Mean: query-weighted mean over the population. CI: percentile interval of
  the family bootstrap (``family_bootstrap``); for two or more runs, the paired
  difference of each run against the first.

Families file: one ``qid family`` pair per line (whitespace-separated; blank
lines and lines starting with ``#`` are skipped). Without one, every query is
its own family.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

from scoring.ir.family_bootstrap import (
    DEFAULT_REPLICATES,
    DEFAULT_SEED,
    FamilyBootstrap,
    PairedFamilyBootstrap,
    family_bootstrap,
    paired_family_bootstrap,
)
from scoring.ir.ranking import TrecFormatError, query_ranking_metrics, source_lines

METRICS = ("Hit@1", "Hit@5", "Hit@10", "RR")


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


def evaluate_trec_runs(
    qrels: Mapping[str, Mapping[str, int]],
    runs: Sequence[tuple[str, Mapping[str, Sequence[str]]]],
    *,
    families: Mapping[str, str] | None = None,
    replicates: int = DEFAULT_REPLICATES,
    seed: int = DEFAULT_SEED,
) -> TrecEvaluation:
    """Hit@1/5/10 and RR of each run (``(name, {qid: ranked docids})``) against ``qrels``.

    Statistic: mean over every qrels query, with a percentile family-bootstrap
    interval (``replicates``, ``seed``). ``families`` maps qid -> family; every
    qrels query must have one. ValueError names the query that lacks one.
    """
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
    targets = {qid: {d for d, rel in qrels[qid].items() if rel >= 1} for qid in queries}

    evaluations: list[RunEvaluation] = []
    for name, rankings in runs:
        per_query = {
            qid: {
                key: value
                for key, value in query_ranking_metrics(rankings.get(qid, []), targets[qid]).as_dict().items()
                if key in METRICS
            }
            for qid in queries
        }
        intervals = {
            metric: family_bootstrap(
                [per_query[qid][metric] for qid in queries], family_list, replicates=replicates, seed=seed
            )
            for metric in METRICS
        }
        evaluations.append(
            RunEvaluation(
                name=name,
                per_query=per_query,
                intervals=intervals,
                unanswered=[qid for qid in queries if qid not in rankings],
                ignored=sorted(qid for qid in rankings if qid not in qrels),
            )
        )

    differences = []
    for other in evaluations[1:]:
        baseline = evaluations[0]
        differences.append(
            (
                other.name,
                baseline.name,
                {
                    metric: paired_family_bootstrap(
                        [other.per_query[qid][metric] for qid in queries],
                        [baseline.per_query[qid][metric] for qid in queries],
                        family_list,
                        replicates=replicates,
                        seed=seed,
                    )
                    for metric in METRICS
                },
            )
        )
    return TrecEvaluation(
        queries=queries,
        families_given=families is not None,
        families=len(set(family_list)),
        queries_without_targets=[qid for qid in queries if not targets[qid]],
        runs=evaluations,
        differences=differences,
        replicates=replicates,
        seed=seed,
    )
