"""A statute leaderboard's exports: JSON (the API's shape), CSV, per-query CSV, TREC run and qrels, families.

Apart from ``leaderboard.py``, which computes the board: these only write what it computed."""

from __future__ import annotations

import io
import math
from typing import Any

from benchmarks.reports.figures import METRICS, PRIMARY_METRIC, PRIMARY_SPLIT
from benchmarks.reports.leaderboard import (
    FAMILY,
    LEADERBOARD_SCHEMA,
    PER_QUERY_COLUMNS,
    PRIMARY_LABEL,
    KnownTargets,
    Leaderboard,
    PairFigure,
    System,
)
from reviewapp.core.exports.csv_export import SafeCsvWriter
from scoring.ir.fusion import CITATION as RRF_CITATION
from scoring.ir.fusion import RRF_K
from scoring.ir.trec_io import format_qrels, format_run
from scoring.stats.bootstrap import Interval
from scoring.stats.units import unit_support


def _clean(x: float | None) -> float | None:
    return None if x is None or math.isnan(x) else round(float(x), 6)


def _interval_json(i: Interval | None) -> dict[str, float | str | None] | None:
    if i is None:
        return None
    return {"estimate": _clean(i.estimate), "low": _clean(i.low), "high": _clean(i.high), "note": i.note}


def _pair_json(p: PairFigure) -> dict[str, Any]:
    return {"a": p.a, "b": p.b, "metric": p.metric, "difference": _interval_json(p.difference),
            "ci": [_clean(p.difference.low), _clean(p.difference.high)], "p_value": _clean(p.p_value),
            "p_adjusted": _clean(p.p_adjusted)}


def _system_json(s: System) -> dict[str, Any]:
    r = s.rerank
    return {
        "key": s.key, "label": s.label, "figures": s.has_figures, "incomplete": s.incomplete,
        "withheld_reason": s.withheld_reason,
        "rerank": None if r is None else {"run": r.pk, "provider": r.provider, "model_id": r.model_id,
                                          "question_version": r.question_version,
                                          "question_sha256": r.question_sha256, "status": r.status,
                                          "method": r.method},
        "fusion": None if r is None or not r.fusion else {
            "name": r.fusion, "method": "reciprocal rank fusion of keyword order and the rerank run's order",
            "k": RRF_K, "citation": RRF_CITATION, "ties": "keyword rank"},
        "coverage": s.coverage.as_json() if s.coverage is not None else None,
        "heldout_exposure": s.exposure.as_json() if s.exposure is not None else None,
    }


def leaderboard_as_json(board: Leaderboard) -> dict[str, Any]:
    """Every figure of the leaderboard page as JSON-ready data (NaN written as null)."""
    inputs = board.inputs
    return {
        "schema": LEADERBOARD_SCHEMA,
        "verdict": board.verdict.as_json(),
        "suite": {"name": inputs.suite.name, "version": inputs.suite.version, "sha256": inputs.suite.sha256},
        "retrieval": {"run": inputs.retrieval.pk, "engine": inputs.retrieval.engine,
                      "configuration": inputs.retrieval.configuration,
                      "candidates_sha256": inputs.retrieval.candidates_sha256},
        "systems": [_system_json(s) for s in board.systems],
        "bootstrap": {"replicates": board.replicates, "seed": board.seed, "level": board.level,
                      "unit": "query family", "method": "paired percentile, one draw for every system and pair"},
        "multiple_comparisons": {"method": board.method, "family": board.holm_family},
        "primary_endpoint": {"split": PRIMARY_SPLIT, "metric": PRIMARY_METRIC},
        "labels": None if inputs.labels is None else {"pools": list(inputs.labels.pools),
                                                      "labelled_items": len(inputs.labels.labels),
                                                      "conflicting_items": inputs.labels.conflicts},
        "notes": list(board.notes),
        "known_targets": None if board.known_targets is None else known_targets_as_json(board.known_targets),
        "splits": [
            {"split": s.split, "label": s.label, "queries": s.queries, "families": s.families,
             "units": unit_support(s.families, unit=FAMILY).as_json(),
             "systems": [
                 {"system": r.system.key, "means": {m: _interval_json(i) for m, i in r.means.items()},
                  "vs_keyword": {m: _pair_json(p) for m, p in r.vs_keyword.items()},
                  "human": {m: _interval_json(i) for m, i in r.human.items()} or None,
                  "labels_note": r.labels_note, "labels_judged": r.labels_judged,
                  "labels_needed": r.labels_needed}
                 for r in s.rows],
             "pairs": [_pair_json(p) for p in s.pairs]}
            for s in board.splits
        ],
    }


def known_targets_as_json(known: KnownTargets) -> dict[str, Any]:
    return {
        "note": known.note, "holm_family": known.holm_family, "metrics": list(known.metrics),
        "verdict": known.verdict.as_json(), "replicates": known.replicates, "seed": known.seed,
        "systems": [{"key": s.key, "label": s.label, "retrieval_run": s.retrieval.pk,
                     "configuration": s.retrieval.configuration, "engine": s.retrieval.engine, "k": s.retrieval.k,
                     "candidates_sha256": s.retrieval.candidates_sha256,
                     "heldout_exposure": s.exposure.as_json() if s.exposure is not None else None}
                    for s in known.systems],
        "splits": [{"split": s.split, "label": s.label, "queries": s.queries, "families": s.families,
                    "units": unit_support(s.families, unit=FAMILY).as_json(),
                    "systems": [{"system": r.system.key, "means": {m: _interval_json(i) for m, i in r.means.items()}}
                                for r in s.rows],
                    "pairs": [_pair_json(p) for p in s.pairs]}
                   for s in known.splits],
    }


CSV_COLUMNS = ("split", "kind", "system", "baseline", "metric", "estimate", "low", "high", "p_value", "p_adjusted",
               "queries", "families", "note")


def leaderboard_csv(board: Leaderboard) -> str:
    """One row per (split, system, metric) mean and per (split, pair, metric) difference; blanks for none."""
    out = io.StringIO()
    writer = SafeCsvWriter(out, lineterminator="\n")
    writer.writerow(CSV_COLUMNS)
    verdict = board.verdict
    writer.writerow(["", "verdict", "", "", f"{PRIMARY_LABEL} {PRIMARY_METRIC}", "", "", "", "", "", "", "",
                     verdict.sentence])

    def cell(x: float | None) -> Any:
        x = _clean(x)
        return "" if x is None else x

    for s in board.splits:
        for r in s.rows:
            note = "; ".join(x for x in (r.system.caveat, r.system.incomplete) if x)
            for m, i in [*r.means.items(), *r.human.items()]:
                writer.writerow([s.split, "mean", r.system.key, "", m, cell(i.estimate), cell(i.low), cell(i.high),
                                 "", "", s.queries, s.families, "; ".join(x for x in (note, i.note) if x)])
            if not r.human:
                writer.writerow([s.split, "labels", r.system.key, "", "P@5 nDCG@5", "", "", "", "", "", s.queries,
                                 s.families, r.labels_note])
        for p in s.pairs:
            d = p.difference
            writer.writerow([s.split, "difference", p.a, p.b, p.metric, cell(d.estimate), cell(d.low), cell(d.high),
                             cell(p.p_value), cell(p.p_adjusted), s.queries, s.families,
                             "; ".join(x for x in (d.note, board.method) if x)])
    known = board.known_targets
    for ks in known.splits if known is not None else ():
        for kr in ks.rows:
            retrieval = kr.system.retrieval
            configuration = retrieval.configuration if retrieval is not None else ""
            for m, i in kr.means.items():
                writer.writerow([ks.split, "known-target mean", kr.system.key, "", m, cell(i.estimate), cell(i.low),
                                 cell(i.high), "", "", ks.queries, ks.families,
                                 "; ".join(x for x in (configuration, i.note) if x)])
        for p in ks.pairs:
            d = p.difference
            writer.writerow([ks.split, "known-target difference", p.a, p.b, p.metric, cell(d.estimate), cell(d.low),
                             cell(d.high), cell(p.p_value), cell(p.p_adjusted), ks.queries, ks.families,
                             "; ".join(x for x in (d.note, board.method) if x)])
    if known is not None:
        writer.writerow(["", "known-target verdict", "", "", f"{PRIMARY_LABEL} {PRIMARY_METRIC}", "", "", "", "",
                         "", "", "", known.verdict.sentence])
        for stage in known.systems:
            writer.writerow(["", "system", stage.key, "", "", "", "", "", "", "", "", "", stage.label])
    for system in board.systems:
        writer.writerow(["", "system", system.key, "", "", "", "", "", "", "", "", "", system.label])
    for system in board.systems:
        if not system.has_figures:
            writer.writerow(["", "withheld", system.key, "", "", "", "", "", "", "", "", "",
                             " ".join(system.withheld_reason.split())])
    return out.getvalue()


def leaderboard_per_query(board: Leaderboard) -> str:
    """TREC-style per-query table, tab-separated: qid, system, Hit@1, Hit@5, Hit@10, RR, split, family."""
    lines = ["\t".join(PER_QUERY_COLUMNS)]
    for q in board.queries:
        for key, values in q.values.items():
            lines.append("\t".join([q.qid, key, *(_number(values[m]) for m in METRICS), q.split, q.family]))
    return "\n".join(lines) + "\n"


def _number(x: float) -> str:
    return repr(float(x))


def leaderboard_trec_run(board: Leaderboard, *, system: str) -> str:
    """TREC run of one system (scores from the rank, so trec_eval's order is the file order)."""
    if not any(s.key == system and s.has_figures for s in board.systems):
        raise ValueError(f"this leaderboard has no {system!r} system with figures")
    return format_run({q.qid: list(q.rankings[system]) for q in board.queries if q.rankings.get(system)},
                      tag=system)


def leaderboard_trec_qrels(board: Leaderboard) -> str:
    """Qrels of the nominated targets (relevance 1), for ir_measures / trec_eval."""
    return format_qrels({q.qid: dict.fromkeys(q.targets, 1) for q in board.queries if q.targets})


def leaderboard_families(board: Leaderboard) -> str:
    return "".join(f"{q.qid} {q.family}\n" for q in board.queries)
