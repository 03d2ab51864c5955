"""The scorecard: a run graded at chosen thresholds and matcher, from its stored pair scores.

``run_scorecard`` grades any contract scope (the grade_cuad command, the self-test);
``run_card`` grades a run on a sample through the cached pair tables
(``grading.runs.selectors.stored_pairs``), with the other matcher's point figures
alongside, for the console; ``scorecard_view`` compares several runs.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

from grading.dataset.models import Sample
from grading.runs.models import ExtractionRun
from grading.runs.selectors import point_figures, run_pair_table, stored_pairs
from grading.scorecard.params import View
from scoring.cuad.grading import (
    DEFAULT_REPLICATES,
    OUTCOME_NAMES,
    Figures,
    Grade,
    PairTable,
    Thresholds,
    classify,
    grade,
)
from scoring.cuad.matching import MATCHERS

BOOTSTRAP_SEED = 0  # the console's bootstrap seed: the same draws on every page and export


@dataclass(frozen=True)
class ScorecardRow:
    """One clause type: its name, group and description, and its figures (counts and 95% intervals)."""

    category: str
    group: str
    description: str
    figures: Figures


@dataclass(frozen=True)
class Scorecard:
    run_id: int
    model: str
    matcher: str
    thresholds: Thresholds
    seed: int
    replicates: int
    n_contracts: int
    overall: Figures
    rows: list[ScorecardRow]

    def as_json(self) -> dict:
        """The grade_cuad --json shape."""
        out = self.overall.as_dict()
        out["per_category"] = {row.category: row.figures.as_dict() for row in self.rows}
        out["matcher"] = self.matcher
        out["thresholds"] = self.thresholds.as_dict()
        return out


def run_scorecard(
    *,
    run: ExtractionRun,
    contract_ids: Sequence[int] | None = None,
    thresholds: Thresholds | None = None,
    matcher: str = "hungarian",
    seed: int = 0,
    replicates: int = DEFAULT_REPLICATES,
) -> Scorecard:
    """Grade a stored run at the given thresholds from its stored pair scores (no text is re-read)."""
    thresholds = thresholds or Thresholds()
    pairs = run_pair_table(run=run, contract_ids=contract_ids, matcher=matcher)
    table, scope = pairs.table, pairs.scope
    result = grade(table, thresholds, replicates=replicates, seed=seed)
    rows = [
        ScorecardRow(c.name, c.group, c.description, figures)
        for c, figures in zip(scope.categories, result.per_category, strict=True)
    ]
    return Scorecard(
        run_id=run.pk,
        model=run.model,
        matcher=matcher,
        thresholds=thresholds,
        seed=seed,
        replicates=replicates,
        n_contracts=table.n_contracts,
        overall=result.overall,
        rows=rows,
    )


@dataclass(frozen=True)
class ExtractionGrade:
    extraction_id: int
    outcome: str
    f1: float
    grounding: float
    span_id: int | None


def run_extraction_grades(
    *,
    run: ExtractionRun,
    contract_ids: Sequence[int] | None = None,
    thresholds: Thresholds | None = None,
    matcher: str = "hungarian",
) -> tuple[list[ExtractionGrade], list[int]]:
    """Outcome of every extraction in scope, and the ids of the Missed spans (for an explorer)."""
    thresholds = thresholds or Thresholds()
    pairs = run_pair_table(run=run, contract_ids=contract_ids, matcher=matcher)
    table = pairs.table
    classified = classify(table, thresholds)
    grades = [
        ExtractionGrade(
            extraction_id=int(pairs.extraction_ids[i]),
            outcome=OUTCOME_NAMES[int(classified.outcome[i])],
            f1=float(table.ext_f1[i]),
            grounding=float(table.ext_grounding[i]),
            span_id=int(pairs.span_ids[table.ext_span[i]]) if table.ext_span[i] >= 0 else None,
        )
        for i in range(len(pairs.extraction_ids))
    ]
    return grades, [int(x) for x in pairs.span_ids[classified.span_missed]]


# ---------------------------------------------------------------------------
# The console's scorecard of a run on a sample


@dataclass(frozen=True)
class RunCard:
    """One run graded at the view's settings: headline, per-type rows, and the other matcher's point figures."""

    run: ExtractionRun
    card: Scorecard
    other_matcher: str
    other: dict[str, float]  # precision / recall / f1 point estimates with the other matcher
    outside: int  # extractions for contracts outside the sample (not graded)

    @property
    def delta_f1(self) -> float:
        return self.card.overall.f1.estimate - self.other["f1"]


def grade_live(table: PairTable, thresholds: Thresholds, *, replicates: int, seed: int) -> Grade:
    """The console's grade: ``scoring.cuad.grading.grade``, which is itself vectorised now (one code path)."""
    return grade(table, thresholds, replicates=replicates, seed=seed)


def run_card(
    *, run: ExtractionRun, sample: Sample, thresholds: Thresholds, matcher: str, replicates: int = DEFAULT_REPLICATES
) -> RunCard:
    """The run's scorecard on the sample, from stored pair scores (no text is read, nothing is re-scored)."""
    pairs = stored_pairs(run=run, sample=sample, matcher=matcher)
    result = grade_live(pairs.table, thresholds, replicates=replicates, seed=BOOTSTRAP_SEED)
    rows = [
        ScorecardRow(c.name, c.group, c.description, figures)
        for c, figures in zip(pairs.scope.categories, result.per_category, strict=True)
    ]
    card = Scorecard(
        run_id=run.pk,
        model=run.model,
        matcher=matcher,
        thresholds=thresholds,
        seed=BOOTSTRAP_SEED,
        replicates=replicates,
        n_contracts=pairs.table.n_contracts,
        overall=result.overall,
        rows=rows,
    )
    other = next(m for m in MATCHERS if m != matcher)
    other_pairs = stored_pairs(run=run, sample=sample, matcher=other)
    return RunCard(
        run=run,
        card=card,
        other_matcher=other,
        other=point_figures(other_pairs, thresholds),
        outside=run.n_extractions - len(pairs.extraction_ids),
    )


def _sort_value(row: ScorecardRow, key: str):
    if key == "category":
        return row.category.lower()
    if key in ("precision", "recall", "f1"):
        value = getattr(row.figures, key).estimate
        return value
    return row.figures.counts[key]


def sorted_rows(rows: Sequence[ScorecardRow], *, key: str, descending: bool) -> list:
    """Rows sorted by a column; undefined figures (NaN) always last."""
    defined = [r for r in rows if not (isinstance(v := _sort_value(r, key), float) and math.isnan(v))]
    undefined = [r for r in rows if r not in defined]
    return sorted(defined, key=lambda r: _sort_value(r, key), reverse=descending) + undefined


@dataclass(frozen=True)
class Comparison:
    """Several runs on the same sample: per-type F1 of each, side by side."""

    cards: list[RunCard]
    rows: list[tuple[str, list[Figures]]]  # (category, figures per run)


def scorecard_view(*, view: View) -> tuple[RunCard, Comparison | None]:
    cards = [
        run_card(run=run, sample=view.sample, thresholds=view.thresholds, matcher=view.matcher) for run in view.runs
    ]
    comparison = None
    if len(cards) > 1:
        names = [r.category for r in cards[0].card.rows]
        comparison = Comparison(
            cards=cards,
            rows=[(name, [c.card.rows[k].figures for c in cards]) for k, name in enumerate(names)],
        )
    return cards[0], comparison


def population(*, sample: Sample, n_contracts: int) -> str:
    """What the figures are about, as the headline states it."""
    return f"{n_contracts} contracts of the seed-{sample.seed} sample; intervals resample contracts"
