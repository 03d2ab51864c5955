"""The CUAD leaderboard: any number of runs graded at once on the same contracts, every pair compared.

``board_grade`` is the arithmetic on pair tables (the compare_cuad_runs command
and the page share it): each run's micro precision / recall / F1 and
hallucination rate with contract-bootstrap intervals, and every pairwise F1
difference on the same seeded contract draws (``bootstrap_draws``), so all
pairs are computed from one set of resamples and are consistent with each
other; two-sided bootstrap p-values are Holm-adjusted over every pair shown.

``leaderboard_view`` reads the runs of a sample from their stored pair scores
(``stored_pairs``, cached), on the contracts every run attempted.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field, replace

import numpy as np

from grading.baselines.systems import OfflineSystem, offline_system
from grading.dataset.models import Category, Sample
from grading.dataset.selectors import sample_scope
from grading.runs.models import Extraction, ExtractionRun
from grading.runs.selectors import RunScope, run_paper_metric, run_scope, stored_pairs
from grading.scorecard.params import View
from grading.scorecard.selectors import BOOTSTRAP_SEED
from scoring.cuad.grading import (
    DEFAULT_REPLICATES,
    HALLUCINATED,
    Figures,
    PairTable,
    Thresholds,
    classify,
    draw_sums,
    grade_figures,
    micro_ratios,
    ratio_rows,
    tally_columns,
    tally_rows,
)
from scoring.cuad.grading import UNIT as CONTRACT
from scoring.cuad.paper_metric import PaperResult
from scoring.stats.bootstrap import Interval, percentile_bounds_rows, supported_interval
from scoring.stats.multiple import MULTIPLE_COMPARISON_METHOD, bootstrap_p_value, holm_adjust
from scoring.stats.units import UnitSupport, count_of, supported_p_value, unit_support
from scoring.stats.verdict import Contender, Duel, Verdict, verdict_sentence

MAX_RUNS = 12  # 66 pairs: more would be a table nobody reads and a server budget nobody keeps
HEAT_BANDS = 5  # F1 colour bands of 20 points each: heat-0 (below 20%) .. heat-4 (80% and above)


class LeaderboardError(ValueError):
    """The runs cannot be put on one leaderboard (none chosen, too many, or no contract in common)."""


# ---------------------------------------------------------------------------
# The arithmetic: pair tables in, standings and pairwise differences out


@dataclass(frozen=True)
class Standing:
    """One run graded on the leaderboard's contracts."""

    overall: Figures
    per_category: tuple[Figures, ...]
    hallucination: Interval  # hallucinated extractions / extractions, contract bootstrap
    replicates_f1: np.ndarray = field(repr=False, compare=False)  # micro F1 on each contract resample


@dataclass(frozen=True)
class PairDifference:
    """Micro F1 of standing ``a`` minus standing ``b`` (indices into the board's standings), paired."""

    a: int
    b: int
    f1: Interval
    p_value: float  # two-sided, from the paired bootstrap distribution of the difference
    p_adjusted: float  # Holm over every pair of the board

    @property
    def excludes_zero(self) -> bool:
        return self.f1.low > 0 or self.f1.high < 0

    @property
    def significant(self) -> bool:
        return not math.isnan(self.p_adjusted) and self.p_adjusted < 0.05


@dataclass(frozen=True)
class Board:
    standings: list[Standing]  # in the order the tables were given
    order: list[int]  # standings ranked by F1, best first (undefined F1 last, ties in the order given)
    pairs: list[PairDifference]  # every pair, a ranked above b
    n_contracts: int
    thresholds: Thresholds
    replicates: int
    seed: int
    method: str = MULTIPLE_COMPARISON_METHOD


def _rank_estimates(f1: Sequence[float]) -> list[int]:
    def key(i: int) -> tuple[bool, float, int]:
        return (math.isnan(f1[i]), -f1[i] if not math.isnan(f1[i]) else 0.0, i)

    return sorted(range(len(f1)), key=key)


def board_grade(
    tables: Sequence[PairTable],
    thresholds: Thresholds,
    *,
    replicates: int = DEFAULT_REPLICATES,
    seed: int = BOOTSTRAP_SEED,
) -> Board:
    """Every run's figures and every pairwise F1 difference, from pair tables of the same contracts.

    The tables must list the same contracts in the same order (the pairing is by
    contract index). Per run: micro P/R/F1 overall and per clause type with 95%
    percentile intervals over B contract resamples, and the hallucination rate.
    Per pair (a ranked above b): F1(a) − F1(b), its paired percentile interval and
    two-sided p-value from the same B resamples, and the Holm-adjusted p-value over
    all pairs.

    All runs are one batch (the numbers are those of ``grade``, ``replicate_f1``
    and the complement of ``grounded_rate`` per run, which a test checks bit for
    bit on random tables):
    every run's per-contract tallies and grounded counts side by side, summed
    over the resamples by one ``draw counts @ tallies`` product (exact: halves
    and integers), and every interval of the board (3 metrics x clause types x
    runs, hallucination rates, pair differences) from one percentile call.
    """
    if not tables:
        raise LeaderboardError("run: a leaderboard needs at least one run")
    n = tables[0].n_contracts
    for k, t in enumerate(tables[1:], start=2):
        if t.n_contracts != n:
            raise LeaderboardError(f"run {k}: graded on {t.n_contracts} contracts, the first run on {n}; "
                                   "a paired comparison needs the same contracts")
    runs = len(tables)
    columns = tables[0].n_categories + 1  # clause types, then overall
    if any(t.n_categories + 1 != columns for t in tables):
        raise LeaderboardError("run: the runs index different clause types; a board needs one dataset")
    classified = [classify(t, thresholds) for t in tables]
    flats = [tally_columns(t, c) for t, c in zip(tables, classified, strict=True)]  # (n, columns, 3) each
    grounded = np.stack(  # (runs, n): extractions not hallucinated, per contract
        [np.bincount(t.ext_contract, weights=(c.outcome != HALLUCINATED).astype(float), minlength=n)
         for t, c in zip(tables, classified, strict=True)]
    )
    block = runs * 3 * columns
    sums = draw_sums(np.concatenate([*(tally_rows(f) for f in flats), grounded]), replicates, seed)
    tallied = sums[:block].reshape(runs, 3, columns, replicates)

    f1_point = [float(micro_ratios(f[:, -1].sum(axis=0))[2]) for f in flats]
    order = _rank_estimates(f1_point)
    pair_ab = [(a, b) for i, a in enumerate(order) for b in order[i + 1 :]]
    # One buffer holds every replicate vector whose interval the board shows, one per row; sorted in place below.
    rows = np.empty((block + runs + len(pair_ab), replicates))
    metrics = rows[:block].reshape(runs, 3, columns, replicates)
    ratio_rows(tallied, metrics)
    drawn_ext = tallied[:, 1, -1]  # (runs, replicates): extractions drawn
    rows[block : block + runs] = np.nan
    np.divide(sums[block:], drawn_ext, out=rows[block : block + runs], where=drawn_ext > 0)
    replicates_f1 = metrics[:, 2, -1].copy()  # (runs, replicates): overall micro F1 per resample
    for k, (a, b) in enumerate(pair_ab):
        np.subtract(replicates_f1[a], replicates_f1[b], out=rows[block + runs + k])
    support = unit_support(n, unit=CONTRACT)
    # Below the minimum number of contracts a pair has no p-value, as it has no interval (scoring.stats.units).
    p_values = [supported_p_value(bootstrap_p_value(rows[block + runs + k]), support) for k in range(len(pair_ab))]
    low, high = percentile_bounds_rows(rows, overwrite=True)
    metric_low = low[:block].reshape(runs, 3, columns)
    metric_high = high[:block].reshape(runs, 3, columns)

    standings = []
    for r, (table, c, flat) in enumerate(zip(tables, classified, flats, strict=True)):
        result = grade_figures(table, c, flat, metric_low[r], metric_high[r],
                               thresholds=thresholds, replicates=replicates, seed=seed)
        total_grounded, total_ext = float(grounded[r].sum()), float(flat[:, -1, 1].sum())
        g_estimate = total_grounded / total_ext if total_ext else float("nan")
        g_low, g_high = float(low[block + r]), float(high[block + r])
        standings.append(
            Standing(
                overall=result.overall,
                per_category=result.per_category,
                hallucination=supported_interval(Interval(1.0 - g_estimate, 1.0 - g_high, 1.0 - g_low), support),
                replicates_f1=replicates_f1[r],
            )
        )
    raw: list[tuple[int, int, Interval, float]] = []
    for k, (a, b) in enumerate(pair_ab):
        point = standings[a].overall.f1.estimate - standings[b].overall.f1.estimate
        bounds = supported_interval(Interval(point, float(low[block + runs + k]), float(high[block + runs + k])),
                                    support)
        raw.append((a, b, bounds, p_values[k]))
    adjusted = holm_adjust([p for *_, p in raw])
    pairs = [PairDifference(a, b, f1, p, adj) for (a, b, f1, p), adj in zip(raw, adjusted, strict=True)]
    return Board(standings, order, pairs, n, thresholds, replicates, seed)


def board_verdict(board: Board, *, names: Sequence[str]) -> Verdict:
    """The one sentence to quote across the board's runs on micro F1 (``names``: one per standing, in the
    order the tables were given), with the same cases as a statute report's sentence."""
    contenders = [Contender(names[i], board.standings[i].overall.f1.estimate) for i in board.order]
    duels = [Duel(names[d.a], names[d.b], d.f1, d.p_adjusted) for d in board.pairs]
    return verdict_sentence(metric="micro F1", contenders=contenders, duels=duels,
                            population=count_of(board.n_contracts, CONTRACT),
                            support=unit_support(board.n_contracts, unit=CONTRACT), replicates=board.replicates)


def run_name(run: ExtractionRun) -> str:
    """How the verdict names a run: an offline system by its short name (its full label is in the table)."""
    system = offline_system(run.model)
    return f"#{run.pk} {system.name}" if system is not None else f"#{run.pk} {run.model}"


# ---------------------------------------------------------------------------
# The page: runs of a sample, from their stored pair scores


@dataclass(frozen=True)
class HeatCell:
    """One clause type x run cell of the F1 table: the colour band and the hover text come from the figures."""

    f1: Interval
    spans: int
    extractions: int
    replicates: int

    @property
    def css(self) -> str:
        if math.isnan(self.f1.estimate):
            return "heat-na"
        return f"heat-{min(HEAT_BANDS - 1, int(self.f1.estimate * HEAT_BANDS))}"

    @property
    def title(self) -> str:
        if math.isnan(self.f1.estimate):
            return f"F1 undefined: no extractions and no CUAD spans of this type ({self.spans} spans)"
        text = f"F1 {self.f1.estimate * 100:.1f}%"
        if not math.isnan(self.f1.low):
            text += (f", 95% interval {self.f1.low * 100:.1f} to {self.f1.high * 100:.1f} "
                     f"(contract bootstrap, B = {self.replicates})")
        return f"{text}; {self.spans} CUAD spans, {self.extractions} extractions"


@dataclass(frozen=True)
class HeatRow:
    category: Category
    spans: int
    cells: list[HeatCell]  # in rank order


@dataclass(frozen=True)
class Entry:
    """A run on the leaderboard, in rank order."""

    rank: int
    run: ExtractionRun
    scope: RunScope  # the run's own scope on the sample (the board grades the common contracts)
    standing: Standing
    standing_index: int = 0  # its index in the board's standings (the order the runs were given)
    paper: PaperResult | None = None  # CUAD's own metric on the board's contracts; None: the run has no confidences

    @property
    def heuristic(self) -> bool:
        return "heuristic" in self.run.model

    @property
    def system(self) -> OfflineSystem | None:
        """The offline system the run is (method, data, validation), or None for a provider's or pasted run."""
        return offline_system(self.run.model)


@dataclass(frozen=True)
class PairRow:
    a: Entry
    b: Entry
    difference: PairDifference


@dataclass(frozen=True)
class Leaderboard:
    sample: Sample
    entries: list[Entry]  # ranked
    pairs: list[PairRow]
    heat: list[HeatRow]
    board: Board
    matcher: str
    common: int  # contracts graded (every run attempted them)
    notice: str  # "" when every run has the same scope
    chosen_by_default: bool  # no run asked for: every non-synthetic run of the dataset (``runs_default``)
    default_note: str = ""  # by default: which runs of the dataset were left out and why ('' when none)

    @property
    def population(self) -> str:
        plural = "s" if self.common != 1 else ""
        if self.sample.dataset.is_gold:  # a firm's set: its labels, all its contracts, never CUAD's
            return (f"{self.common} contract{plural} of {self.sample.dataset.name} that every run attempted; "
                    "intervals resample contracts")
        return (f"{self.common} contract{plural} of the seed-{self.sample.seed} sample that every run attempted; "
                "intervals resample contracts")

    @property
    def method(self) -> str:
        return self.board.method

    @property
    def support(self) -> UnitSupport:
        return unit_support(self.common, unit=CONTRACT)

    @property
    def systems(self) -> list[Entry]:
        """The entries that are offline systems of this install, in rank order (each says what it is)."""
        return [e for e in self.entries if e.system is not None]

    @property
    def verdict(self) -> Verdict:
        names = {e.standing_index: run_name(e.run) for e in self.entries}
        return board_verdict(self.board, names=[names[i] for i in range(len(self.entries))])


def runs_complete(*, sample: Sample, limit: int = MAX_RUNS) -> list[ExtractionRun]:
    """The newest complete runs of the whole sample (at most ``limit``): the leaderboard's default.

    Complete as ``run_default`` means it: a declared scope covering the sample, or
    no declared scope and an extraction for every contract of the sample. The demo's synthetic run (CUAD's gold
    with injected errors) is left out while any other complete run exists: it is a check of the grader, not a
    system, and a default verdict would name it best.
    """
    found = _runs_complete(sample=sample, limit=limit, synthetic=False)
    return found or _runs_complete(sample=sample, limit=limit, synthetic=True)


def _runs_complete(*, sample: Sample, limit: int, synthetic: bool) -> list[ExtractionRun]:
    ids = sample_scope(sample=sample)
    out = []
    runs = ExtractionRun.objects.filter(dataset=sample.dataset_id)
    if not synthetic:
        runs = runs.filter(synthetic=False)
    for run in runs.order_by("-created_at", "-id"):
        scope = run_scope(run=run, sample=sample)
        if not scope.full:
            continue
        if not scope.declared:
            touched = Extraction.objects.filter(run=run, contract_id__in=ids).values("contract_id").distinct().count()
            if touched != len(ids):
                continue
        out.append(run)
        if len(out) == limit:
            break
    return out


def runs_default(*, sample: Sample, limit: int = MAX_RUNS) -> tuple[list[ExtractionRun], str]:
    """Every non-synthetic run graded on the whole sample of its dataset, newest first (at most ``limit``), and a
    sentence naming each run of the dataset left out and why ('' when none is).

    The default of the leaderboard and the summary: one page about a dataset speaks of all the systems graded on
    it, never silently of a subset. A run that declares no contract list is graded on the whole sample (a
    contract it has no extraction for is all misses: a system that found nothing there), so it is in. A run that
    declared fewer contracts is left out and named (choosing it ranks every run on the contracts all attempted),
    as is a run over the limit. Synthetic runs (CUAD's gold with injected errors, a check of the grader) are
    left out while any other run exists; with none other, the sample's complete synthetic runs are the default.
    """
    chosen: list[ExtractionRun] = []
    left_out: list[str] = []
    synthetic = 0
    for run in ExtractionRun.objects.filter(dataset=sample.dataset_id).order_by("-created_at", "-id"):
        if run.synthetic:
            synthetic += 1
            continue
        scope = run_scope(run=run, sample=sample)
        if not scope.full:
            left_out.append(f"#{run.pk} {run.model} (it attempted {scope.caption()}; tick it to rank every run on "
                            "the contracts all attempted)")
        elif len(chosen) == limit:
            left_out.append(f"#{run.pk} {run.model} (over the {limit} runs one board compares)")
        else:
            chosen.append(run)
    if not chosen:
        return runs_complete(sample=sample, limit=limit), ""
    notes = [f"Left out: {'; '.join(left_out)}."] if left_out else []
    if synthetic:
        notes.append(f"{synthetic} synthetic check run{'s' * (synthetic != 1)} of the grader left out.")
    return chosen, " ".join(notes)


def leaderboard_runs(*, view: View, asked: bool) -> tuple[View, bool]:
    """The runs to rank: those asked for, or (none asked) every non-synthetic run of the dataset
    (``runs_default``). LeaderboardError if none or too many."""
    if not asked:
        view = replace(view, runs=runs_default(sample=view.sample)[0])
    if not view.runs:
        raise LeaderboardError(
            "run: no run graded on this dataset to rank by default; choose the runs to compare above"
        )
    if len(view.runs) > MAX_RUNS:
        raise LeaderboardError(f"run: {len(view.runs)} runs chosen; a leaderboard compares at most {MAX_RUNS}")
    return view, not asked


def leaderboard_view(*, view: View, chosen_by_default: bool = False,
                     replicates: int = DEFAULT_REPLICATES) -> Leaderboard:
    """The view's runs on the contracts of the sample they all attempted, graded at the view's thresholds and
    matcher from stored pair scores. LeaderboardError when they share no contract."""
    runs = view.runs
    if not runs:
        raise LeaderboardError("run: a leaderboard needs at least one run")
    scopes = [run_scope(run=r, sample=view.sample) for r in runs]
    common_set = set(scopes[0].contract_ids).intersection(*(set(s.contract_ids) for s in scopes[1:]))
    common = tuple(pk for pk in scopes[0].contract_ids if pk in common_set)
    if not common:
        covers = "; ".join(f"run #{r.pk} covers {s.caption()}" for r, s in zip(runs, scopes, strict=True))
        raise LeaderboardError(f"run: the runs chosen share no contract, so there is nothing to compare ({covers})")
    same = all(s.contract_ids == scopes[0].contract_ids for s in scopes)
    notice = ""
    if not same:
        covers = ", ".join(f"#{r.pk} {s.n}" for r, s in zip(runs, scopes, strict=True))
        notice = (
            f"These runs attempted different contracts (contracts covered: {covers}); they are ranked only on the "
            f"{len(common)} contract{'s' if len(common) != 1 else ''} they all attempted, so the figures below "
            "differ from each run's own scorecard."
        )
    within = None if same else common
    stored = [stored_pairs(run=r, sample=view.sample, matcher=view.matcher, within=within) for r in runs]
    board = board_grade([p.table for p in stored], view.thresholds, replicates=replicates, seed=BOOTSTRAP_SEED)
    entries_by_index = {
        i: Entry(rank, runs[i], scopes[i], board.standings[i], i,
                 run_paper_metric(run=runs[i], contract_ids=common, seed=BOOTSTRAP_SEED, replicates=replicates))
        for rank, i in enumerate(board.order, start=1)
    }
    entries = [entries_by_index[i] for i in board.order]
    pairs = [PairRow(entries_by_index[d.a], entries_by_index[d.b], d) for d in board.pairs]
    categories = stored[0].scope.categories  # the dataset's clause types, as every table indexes them (cached)
    heat = []
    for k, category in enumerate(categories):
        figures = [e.standing.per_category[k] for e in entries]
        heat.append(
            HeatRow(
                category,
                figures[0].counts["spans"],
                [HeatCell(f.f1, f.counts["spans"], f.counts["extractions"], replicates) for f in figures],
            )
        )
    return Leaderboard(
        sample=view.sample,
        entries=entries,
        pairs=pairs,
        heat=heat,
        board=board,
        matcher=view.matcher,
        common=len(common),
        notice=notice,
        chosen_by_default=chosen_by_default,
        default_note=runs_default(sample=view.sample)[1] if chosen_by_default else "",
    )
