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

import numpy as np

from grading.dataset.models import Sample
from grading.dataset.selectors import dataset_current, sample_default
from grading.runs.models import ExtractionRun
from grading.runs.selectors import (
    RunScope,
    point_figures,
    run_pair_table,
    run_paper_metric,
    run_scope,
    stored_pairs,
)
from grading.scorecard.params import View
from scoring.cuad.grading import (
    DEFAULT_REPLICATES,
    HALLUCINATED,
    OUTCOME_NAMES,
    Classified,
    Figures,
    Grade,
    PairTable,
    Thresholds,
    bootstrap_draws,
    classify,
    contract_tallies,
    grade,
    micro_ratios,
)
from scoring.cuad.grading import UNIT as CONTRACT
from scoring.cuad.matching import MATCHERS
from scoring.cuad.paper_metric import PaperResult
from scoring.stats.bootstrap import Interval, percentile_bounds, supported_interval
from scoring.stats.units import unit_support

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
    # CUAD's own metric (evaluate.py's AUPR, P@80%R, P@90%R); None when the run has no confidences.
    paper: PaperResult | None = None

    def as_json(self) -> dict:
        """The grade_cuad --json shape."""
        out = self.overall.as_dict()
        out["per_category"] = {row.category: row.figures.as_dict() for row in self.rows}
        out["matcher"] = self.matcher
        out["thresholds"] = self.thresholds.as_dict()
        out["cuad_evaluate"] = paper_json(self.paper)
        return out


PAPER_UNAVAILABLE = "not available: the run has no confidences"


def paper_json(paper: PaperResult | None) -> dict:
    """CUAD's own metric for an export, or why it is absent."""
    return {"available": False, "reason": PAPER_UNAVAILABLE} if paper is None else {"available": True,
                                                                                     **paper.as_dict()}


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
        paper=run_paper_metric(run=run, contract_ids=contract_ids, seed=seed, replicates=replicates),
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
    outside: int  # extractions for contracts outside the graded contracts (not graded)
    scope: RunScope
    grounded: Interval  # share of extractions at or above the grounding threshold, contract bootstrap
    contracts_with_extractions: int  # graded contracts the run has at least one extraction for

    @property
    def delta_f1(self) -> float:
        return self.card.overall.f1.estimate - self.other["f1"]


def grade_live(table: PairTable, thresholds: Thresholds, *, replicates: int, seed: int) -> Grade:
    """The console's grade: ``scoring.cuad.grading.grade``, which is itself vectorised now (one code path)."""
    return grade(table, thresholds, replicates=replicates, seed=seed)


def run_card(
    *,
    run: ExtractionRun,
    sample: Sample,
    thresholds: Thresholds,
    matcher: str,
    replicates: int = DEFAULT_REPLICATES,
    within: tuple[int, ...] | None = None,
) -> RunCard:
    """The run's scorecard on the contracts of the sample it attempted (``within``: narrowed further).

    From stored pair scores: no text is read, nothing is re-scored.
    """
    pairs = stored_pairs(run=run, sample=sample, matcher=matcher, within=within)
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
        paper=run_paper_metric(run=run, contract_ids=pairs.scope.contract_ids, seed=BOOTSTRAP_SEED,
                               replicates=replicates),
    )
    other = next(m for m in MATCHERS if m != matcher)
    other_pairs = stored_pairs(run=run, sample=sample, matcher=other, within=within)
    scope = run_scope(run=run, sample=sample)
    if within is not None:
        scope = RunScope(scope.declared, tuple(pairs.scope.contract_ids), scope.sample_size, scope.sample_seed,
                         scope.outside)
    return RunCard(
        run=run,
        card=card,
        other_matcher=other,
        other=point_figures(other_pairs, thresholds),
        outside=run.n_extractions - len(pairs.extraction_ids),
        scope=scope,
        grounded=grounded_rate(pairs.table, result.classified.outcome, replicates=replicates, seed=BOOTSTRAP_SEED),
        contracts_with_extractions=len(np.unique(pairs.table.ext_contract)),
    )


def grounded_rate(table: PairTable, outcome: np.ndarray, *, replicates: int, seed: int) -> Interval:
    """Share of extractions not hallucinated (grounding at or above the threshold), with its 95% percentile
    interval resampling contracts (the same seeded draws as the scorecard's); NaN without extractions."""
    nc = table.n_contracts
    per_contract = np.stack(
        [
            np.bincount(table.ext_contract, weights=(outcome != HALLUCINATED).astype(float), minlength=nc),
            np.bincount(table.ext_contract, minlength=nc).astype(float),
        ],
        axis=-1,
    )
    _, draw_counts = bootstrap_draws(nc, replicates, seed)
    reps = draw_counts @ per_contract
    with np.errstate(invalid="ignore", divide="ignore"):
        values = np.where(reps[:, 1] > 0, reps[:, 0] / reps[:, 1], np.nan)
    total = per_contract.sum(axis=0)
    estimate = float(total[0] / total[1]) if total[1] else float("nan")
    low, high = percentile_bounds(values)
    return supported_interval(Interval(estimate, low, high), unit_support(nc, unit=CONTRACT))


def f1_difference(
    table_a: PairTable, table_b: PairTable, thresholds: Thresholds, *, replicates: int, seed: int
) -> Interval:
    """Micro F1 of run A minus run B on the same contracts, with a paired 95% percentile interval.

    Paired: both runs are recomputed on the same seeded contract resamples (the
    tables must list the same contracts in the same order), so the interval is
    of the difference itself, not two intervals side by side.
    """
    if table_a.n_contracts != table_b.n_contracts:
        raise ValueError("a paired difference needs both runs graded on the same contracts")
    point_a, f1_a = replicate_f1(table_a, classify(table_a, thresholds), replicates=replicates, seed=seed)
    point_b, f1_b = replicate_f1(table_b, classify(table_b, thresholds), replicates=replicates, seed=seed)
    low, high = percentile_bounds(f1_a - f1_b)
    return supported_interval(Interval(point_a - point_b, low, high), unit_support(table_a.n_contracts, unit=CONTRACT))


def replicate_f1(table: PairTable, classified: Classified, *, replicates: int, seed: int) -> tuple[float, np.ndarray]:
    """Micro F1 of the table, and its micro F1 on each seeded contract resample (``bootstrap_draws``).

    Every run graded on the same contracts gets the same draws, so subtracting
    two runs' replicate vectors gives the paired bootstrap distribution of their
    difference (NaN on a resample with neither extractions nor spans).
    """
    totals = contract_tallies(table, classified).sum(axis=1)  # (contracts, 3): credit, extractions, spans
    _, draw_counts = bootstrap_draws(table.n_contracts, replicates, seed)
    return float(micro_ratios(totals.sum(axis=0))[2]), micro_ratios(draw_counts @ totals)[2]


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
class Difference:
    """The first run's F1 minus another's on the contracts both attempted, paired interval."""

    first: RunCard
    other: RunCard
    f1: Interval

    @property
    def excludes_zero(self) -> bool:
        return self.f1.low > 0 or self.f1.high < 0

    @property
    def saturated(self) -> bool:
        """Both at the ceiling (or floor) on every resample: the sample cannot tell them apart."""
        return self.f1.low == self.f1.high == 0.0 and self.first.card.overall.f1.estimate in (0.0, 1.0)


@dataclass(frozen=True)
class Comparison:
    """Several runs on the contracts they all attempted: per-type F1 of each, side by side.

    Runs with different scopes are compared on the common contracts only
    (``common`` < each run's own scope), and ``notice`` says so: comparing a
    5-contract run with a 100-contract run on their own scopes would compare
    different contracts.
    """

    cards: list[RunCard]  # each graded on the common contracts
    rows: list[tuple[str, list[Figures]]]  # (category, figures per run)
    differences: list[Difference]  # the first run minus each other run
    common: int
    notice: str  # "" when every run has the same scope


class ComparisonError(ValueError):
    """The chosen runs share no contract of the sample, so there is nothing to compare."""


def comparison_build(*, view: View, primary: RunCard) -> Comparison:
    scopes = [primary.scope] + [run_scope(run=r, sample=view.sample) for r in view.runs[1:]]
    common_set = set(primary.scope.contract_ids).intersection(*(set(s.contract_ids) for s in scopes[1:]))
    common = tuple(pk for pk in primary.scope.contract_ids if pk in common_set)
    if not common:
        covers = "; ".join(f"run #{r.pk} covers {s.caption()}" for r, s in zip(view.runs, scopes, strict=True))
        raise ComparisonError(f"run: the runs chosen for comparison share no contract ({covers})")
    same = all(s.contract_ids == primary.scope.contract_ids for s in scopes)
    notice = ""
    if not same:
        covers = ", ".join(f"#{r.pk} {s.n}" for r, s in zip(view.runs, scopes, strict=True))
        notice = (
            f"These runs attempted different contracts (contracts covered: {covers}); they are compared only on "
            f"the {len(common)} contract{'s' if len(common) != 1 else ''} they all attempted, so the figures "
            "below differ from each run's own scorecard."
        )
    within = None if same else common
    cards = [
        run_card(run=run, sample=view.sample, thresholds=view.thresholds, matcher=view.matcher, within=within)
        for run in view.runs
    ]
    tables = [stored_pairs(run=c.run, sample=view.sample, matcher=view.matcher, within=within).table for c in cards]
    differences = [
        Difference(
            cards[0],
            card,
            f1_difference(tables[0], table, view.thresholds, replicates=cards[0].card.replicates,
                          seed=BOOTSTRAP_SEED),
        )
        for card, table in zip(cards[1:], tables[1:], strict=True)
    ]
    names = [r.category for r in cards[0].card.rows]
    return Comparison(
        cards=cards,
        rows=[(name, [c.card.rows[k].figures for c in cards]) for k, name in enumerate(names)],
        differences=differences,
        common=len(common),
        notice=notice,
    )


def scorecard_view(*, view: View) -> tuple[RunCard, Comparison | None]:
    """The first run on its own scope, and (with more runs) their comparison on the contracts all attempted.

    Raises ComparisonError when the runs share no contract.
    """
    primary = run_card(run=view.run, sample=view.sample, thresholds=view.thresholds, matcher=view.matcher)
    comparison = comparison_build(view=view, primary=primary) if len(view.runs) > 1 else None
    return primary, comparison


def population(*, scope: RunScope) -> str:
    """What the figures are about, as the headline states it (from the run's scope, never a template)."""
    return f"{scope.caption()}; intervals resample contracts"


def _pct(x: float) -> str:
    return f"{x * 100:.1f}%"


def _pp(x: float) -> str:
    return f"{x * 100:+.1f}"


def conclusion(*, card: RunCard, comparison: Comparison | None = None) -> str:
    """One plain, quotable sentence from the figures and their intervals (and the comparison, if any)."""
    f1 = card.card.overall.f1
    name = f"Run #{card.run.pk} ({card.run.model})"
    scope = card.scope
    if math.isnan(f1.estimate):
        sentence = f"{name} has no extractions and no CUAD spans on {scope.caption()}: there is no F1 to report."
    else:
        sentence = (
            f"{name} scores F1 {_pct(f1.estimate)} (95% interval {_pct(f1.low)} to {_pct(f1.high)}, "
            f"resampling contracts) on {scope.caption()}"
        )
        g = card.grounded
        if not math.isnan(g.estimate):
            sentence += (
                f"; {_pct(g.estimate)} of its extractions are grounded in the contract text "
                f"({_pct(g.low)} to {_pct(g.high)})"
            )
        sentence += "."
    if not scope.full:
        sentence += (
            f" It is a partial run: it covers {scope.n} of {scope.sample_size} contracts, "
            f"and says nothing about the other {scope.sample_size - scope.n}."
        )
    elif card.contracts_with_extractions < scope.n and not scope.declared:
        sentence += (
            f" It has extractions for only {card.contracts_with_extractions} of those contracts and declares no "
            "contract list, so every span of the others counts as missed."
        )
    if comparison and comparison.differences:
        d = comparison.differences[0]
        a, b = f"run #{d.first.run.pk}", f"run #{d.other.run.pk} ({d.other.run.model})"
        where = f"on the {comparison.common} contract{'s' if comparison.common != 1 else ''} both attempted"
        if math.isnan(d.f1.estimate):
            sentence += f" Against {b}, F1 is undefined {where}."
        elif d.saturated:
            sentence += (
                f" Against {b}: both score F1 {_pct(d.first.card.overall.f1.estimate)} {where}, so this sample "
                "cannot tell them apart."
            )
        elif d.excludes_zero:
            word = "higher" if d.f1.estimate > 0 else "lower"
            sentence += (
                f" Against {b}, {a}'s F1 is {abs(d.f1.estimate) * 100:.1f} points {word} {where} "
                f"(difference {_pp(d.f1.estimate)} pp, 95% interval {_pp(d.f1.low)} to {_pp(d.f1.high)}): "
                "the interval excludes zero."
            )
        else:
            sentence += (
                f" Against {b}, the F1 difference {where} is {_pp(d.f1.estimate)} pp (95% interval "
                f"{_pp(d.f1.low)} to {_pp(d.f1.high)}), which includes zero: this sample cannot tell them apart."
            )
    return sentence


# ---------------------------------------------------------------------------
# A firm gold set's card beside the same system's card on CUAD, for the clause types both have


@dataclass(frozen=True)
class BesideRow:
    category: str
    firm: Figures  # the run's figures over the firm set's contracts
    cuad: Figures  # the CUAD run's figures over CUAD's sample


@dataclass(frozen=True)
class BesideCuad:
    """Two populations, never pooled: the firm set's contracts and CUAD's sample; each figure says which."""

    cuad_run: ExtractionRun
    firm_population: str
    cuad_population: str
    rows: list[BesideRow]


def beside_cuad(*, card: RunCard, thresholds: Thresholds, matcher: str,
                replicates: int = DEFAULT_REPLICATES) -> BesideCuad | None:
    """The same system (same model name) graded on CUAD, for the clause types the firm set shares with CUAD.

    Only for a run on a firm's gold set, and only where CUAD's default dataset holds a complete run of that model
    on its default sample (the newest); None otherwise. Same thresholds and matcher as the firm card.
    """
    run = card.run
    if not run.dataset.is_gold:
        return None
    cuad = dataset_current()
    sample = sample_default(dataset=cuad) if cuad is not None else None
    if cuad is None or sample is None:
        return None
    cuad_run = None
    for candidate in ExtractionRun.objects.filter(dataset=cuad, model=run.model).order_by("-created_at", "-id"):
        if run_scope(run=candidate, sample=sample).full:
            cuad_run = candidate
            break
    if cuad_run is None:
        return None
    theirs = run_card(run=cuad_run, sample=sample, thresholds=thresholds, matcher=matcher, replicates=replicates)
    by_name = {row.category: row.figures for row in theirs.card.rows}
    rows = [BesideRow(row.category, row.figures, by_name[row.category])
            for row in card.card.rows if row.category in by_name]
    if not rows:
        return None
    return BesideCuad(
        cuad_run=cuad_run,
        firm_population=f"{card.card.n_contracts} contracts of {run.dataset.name}, run #{run.pk}",
        cuad_population=(f"{theirs.card.n_contracts} contracts of the seed-{sample.seed} sample of {cuad.name}, "
                         f"run #{cuad_run.pk}"),
        rows=rows,
    )
