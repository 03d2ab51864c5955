"""The scorecard's JSON and CSV exports (the API serializes the same JSON)."""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

from grading.baselines.systems import offline_system
from grading.dataset.models import Sample
from grading.scorecard.leaderboard import Board, HeatCell, Leaderboard, PairDifference, Standing
from grading.scorecard.selectors import (
    Comparison,
    RunCard,
    ScorecardRow,
    beside_cuad,
    paper_json,
    population,
)
from scoring.cuad.grading import UNIT as CONTRACT
from scoring.cuad.grading import Figures
from scoring.cuad.paper_metric import PaperResult
from scoring.stats.bootstrap import Interval
from scoring.stats.units import unit_support


def beside_cuad_json(*, card: RunCard, view: Any) -> dict | None:
    """The same system's CUAD figures beside a gold-set run's, for the shared clause types (page JSON and API)."""
    beside = beside_cuad(card=card, thresholds=view.thresholds, matcher=view.matcher)
    if beside is None:
        return None
    return {
        "cuad_run": beside.cuad_run.pk,
        "firm_population": beside.firm_population,
        "cuad_population": beside.cuad_population,
        "rows": [{"category": r.category, "firm_f1": r.firm.f1.estimate, "cuad_f1": r.cuad.f1.estimate,
                  "firm_spans": r.firm.counts["spans"], "cuad_spans": r.cuad.counts["spans"]}
                 for r in beside.rows],
    }


def _interval(i: Interval) -> dict:
    def num(x: float) -> float | None:
        return None if math.isnan(x) else float(x)

    return {"estimate": num(i.estimate), "ci": [num(i.low), num(i.high)], "note": i.note}


def scorecard_json(card: RunCard, sample: Sample) -> dict:
    out = card.card.as_json()
    system = offline_system(card.run.model)
    out["run"] = {"id": card.run.pk, "model": card.run.model, "system": system.as_dict() if system else None}
    out["population"] = population(scope=card.scope)
    out["scope"] = card.scope.as_dict()
    out["grounded"] = _interval(card.grounded)
    out["bootstrap"] = {"replicates": card.card.replicates, "seed": card.card.seed, "unit": "contract"}
    out["other_matcher"] = {"matcher": card.other_matcher, **card.other}
    out["extractions_outside_sample"] = card.outside
    out["dataset"] = {"id": sample.dataset_id, "name": sample.dataset.name, "origin": sample.dataset.origin}
    return out


def comparison_json(comparison: Comparison, sample: Sample) -> dict:
    """The comparison on the contracts all its runs attempted, with each paired F1 difference."""
    return {
        "common_contracts": comparison.common,
        "notice": comparison.notice,
        "runs": [scorecard_json(c, sample) for c in comparison.cards],
        "differences": [
            {"first": d.first.run.pk, "other": d.other.run.pk, "f1_difference": _interval(d.f1)}
            for d in comparison.differences
        ],
    }


SCORECARD_CSV_FIELDS = (
    "category",
    "spans",
    "extractions",
    "correct",
    "partial",
    "incorrect",
    "hallucinated",
    "missed",
    "precision",
    "precision_low",
    "precision_high",
    "recall",
    "recall_low",
    "recall_high",
    "f1",
    "f1_low",
    "f1_high",
    # CUAD's own metric (evaluate.py's rules); blank when the run has no confidences.
    "aupr",
    "aupr_low",
    "aupr_high",
    "precision_at_80_recall",
    "precision_at_90_recall",
)


def scorecard_csv_rows(card: RunCard, rows: Sequence[ScorecardRow]) -> list[dict]:
    def row(name: str, f: Figures) -> dict:
        out = {"category": name, **{k: f.counts[k] for k in SCORECARD_CSV_FIELDS[1:8]}}
        for metric in ("precision", "recall", "f1"):
            i = getattr(f, metric)
            for suffix, value in (("", i.estimate), ("_low", i.low), ("_high", i.high)):
                out[metric + suffix] = "" if math.isnan(value) else f"{value:.6f}"
        paper = card.card.paper
        figures = None if paper is None else paper.overall if name == "ALL" else paper.per_category.get(name)
        values = (float("nan"),) * 5 if figures is None else (
            figures.aupr.estimate, figures.aupr.low, figures.aupr.high,
            figures.precision_at_80_recall.estimate, figures.precision_at_90_recall.estimate,
        )
        for key, value in zip(SCORECARD_CSV_FIELDS[-5:], values, strict=True):
            out[key] = "" if math.isnan(value) else f"{value:.6f}"
        return out

    return [row("ALL", card.card.overall)] + [row(r.category, r.figures) for r in rows]


# ---------------------------------------------------------------------------
# The leaderboard


def _num(x: float) -> float | None:
    return None if math.isnan(x) else float(x)


def standing_json(standing: Standing, paper: PaperResult | None = None) -> dict:
    """One run's figures on a board: the grade_cuad shape (P/R/F1, ``ci`` per metric, counts), the
    hallucination rate with its interval, and CUAD's own metric (or why it is not available)."""
    out = standing.overall.as_dict()
    out["hallucination_rate"] = _interval(standing.hallucination)
    out["cuad_evaluate"] = paper_json(paper)
    out["interval_note"] = standing.overall.f1.note  # the contracts behind every interval: too few, or few
    return out


def pair_json(pair: PairDifference) -> dict:
    return {
        "f1_diff": _num(pair.f1.estimate),
        "ci": [_num(pair.f1.low), _num(pair.f1.high)],
        "note": pair.f1.note,
        "p_value": _num(pair.p_value),
        "p_adjusted": _num(pair.p_adjusted),
    }


def board_meta_json(board: Board) -> dict:
    return {
        "contracts": board.n_contracts,
        "units": unit_support(board.n_contracts, unit=CONTRACT).as_json(),
        "thresholds": board.thresholds.as_dict(),
        "bootstrap": {"replicates": board.replicates, "seed": board.seed, "unit": "contract", "paired": True},
        "method": board.method,
    }


def _cell_json(cell: HeatCell) -> dict:
    return {"f1": _num(cell.f1.estimate), "ci": [_num(cell.f1.low), _num(cell.f1.high)], "spans": cell.spans,
            "extractions": cell.extractions}


def leaderboard_json(lb: Leaderboard) -> dict:
    """The page's JSON export (and the API's): ranked runs, per-type F1, every pair with Holm-adjusted p."""
    runs = []
    for e in lb.entries:
        out = {"rank": e.rank, "id": e.run.pk, "model": e.run.model, "scope": e.scope.as_dict(),
               "system": e.system.as_dict() if e.system else None}
        out.update(standing_json(e.standing, e.paper))
        out["per_category"] = {row.category.name: _cell_json(row.cells[e.rank - 1]) for row in lb.heat}
        runs.append(out)
    return {
        "sample": {"id": lb.sample.pk, "seed": lb.sample.seed, "contracts": lb.sample.n},
        "verdict": lb.verdict.as_json(),
        "population": lb.population,
        "common_contracts": lb.common,
        "notice": lb.notice,
        "matcher": lb.matcher,
        **board_meta_json(lb.board),
        "runs": runs,
        "pairs": [
            {"a": p.a.run.pk, "b": p.b.run.pk, "a_model": p.a.run.model, "b_model": p.b.run.model,
             **pair_json(p.difference)}
            for p in lb.pairs
        ],
    }


LEADERBOARD_CSV_FIELDS = (
    "kind", "rank", "run", "model", "other_run", "other_model", "category", "metric",
    "estimate", "low", "high", "p_value", "p_adjusted", "contracts", "matcher", "replicates", "seed", "note",
)


def leaderboard_csv_rows(lb: Leaderboard) -> list[dict]:
    """One tidy row per figure: ``run`` rows (each run x metric, ALL and per clause type F1) and ``pair`` rows
    (F1 difference of run minus other_run, with p-values), every row naming its population and bootstrap."""

    def fixed(x: float) -> str:
        return "" if math.isnan(x) else f"{x:.6f}"

    common = {"contracts": lb.common, "matcher": lb.matcher, "replicates": lb.board.replicates,
              "seed": lb.board.seed}
    rows = [{"kind": "verdict", "metric": "f1", "note": lb.verdict.sentence, **common}]
    for e in lb.entries:
        base = {"kind": "run", "rank": e.rank, "run": e.run.pk, "model": e.run.model, **common}
        if e.system is not None:  # what an offline system is, in the note of one row of its own
            rows.append({**base, "kind": "system", "metric": "method", "note": f"{e.system.name}: {e.system.line}"})
        f = e.standing.overall
        for metric, i in (("precision", f.precision), ("recall", f.recall), ("f1", f.f1),
                          ("hallucination_rate", e.standing.hallucination)):
            rows.append({**base, "category": "ALL", "metric": metric, "estimate": fixed(i.estimate),
                         "low": fixed(i.low), "high": fixed(i.high), "note": i.note})
        for row in lb.heat:
            cell = row.cells[e.rank - 1]
            rows.append({**base, "category": row.category.name, "metric": "f1", "estimate": fixed(cell.f1.estimate),
                         "low": fixed(cell.f1.low), "high": fixed(cell.f1.high)})
    for p in lb.pairs:
        d = p.difference
        rows.append({"kind": "pair", "run": p.a.run.pk, "model": p.a.run.model, "other_run": p.b.run.pk,
                     "other_model": p.b.run.model, "category": "ALL", "metric": "f1_difference",
                     "estimate": fixed(d.f1.estimate), "low": fixed(d.f1.low), "high": fixed(d.f1.high),
                     "p_value": fixed(d.p_value), "p_adjusted": fixed(d.p_adjusted), "note": d.f1.note, **common})
    return rows
