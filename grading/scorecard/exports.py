"""The scorecard's JSON and CSV exports (the API serializes the same JSON)."""

from __future__ import annotations

import math
from collections.abc import Sequence

from grading.dataset.models import Sample
from grading.scorecard.selectors import RunCard, ScorecardRow, population
from scoring.cuad.grading import Figures


def scorecard_json(card: RunCard, sample: Sample) -> dict:
    out = card.card.as_json()
    out["run"] = {"id": card.run.pk, "model": card.run.model}
    out["population"] = population(sample=sample, n_contracts=card.card.n_contracts)
    out["bootstrap"] = {"replicates": card.card.replicates, "seed": card.card.seed, "unit": "contract"}
    out["other_matcher"] = {"matcher": card.other_matcher, **card.other}
    out["extractions_outside_sample"] = card.outside
    return out


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
)


def scorecard_csv_rows(card: RunCard, rows: Sequence[ScorecardRow]) -> list[dict]:
    def row(name: str, f: Figures) -> dict:
        out = {"category": name, **{k: f.counts[k] for k in SCORECARD_CSV_FIELDS[1:8]}}
        for metric in ("precision", "recall", "f1"):
            i = getattr(f, metric)
            for suffix, value in (("", i.estimate), ("_low", i.low), ("_high", i.high)):
                out[metric + suffix] = "" if math.isnan(value) else f"{value:.6f}"
        return out

    return [row("ALL", card.card.overall)] + [row(r.category, r.figures) for r in rows]
