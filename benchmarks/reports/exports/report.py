"""Exports of a benchmark report: the JSON document, the per-query CSV, TREC run and qrels files, families.

The JSON carries every figure of the page (NaN written as null); the TREC files
feed trec_eval / ir_measures so the figures can be checked independently.
"""

from __future__ import annotations

import io
import math
from typing import Any

from benchmarks.reports.figures import (
    COVERAGE_NOTE,
    DIAGNOSTIC_THRESHOLD,
    METRICS,
    PRIMARY_METRIC,
    PRIMARY_SPLIT,
    THRESHOLD_NOTE,
    QueryRow,
    Report,
    report_systems,
)
from benchmarks.reports.inputs import Candidate
from reviewapp.core.exports.csv_export import SafeCsvWriter
from scoring.ir.trec_io import format_qrels, format_run
from scoring.stats.bootstrap import Interval

REPORT_SCHEMA = "benchmark-report/1"


def _interval_json(interval: Interval | None) -> dict[str, float | str | None] | None:
    if interval is None:
        return None

    def clean(x: float) -> float | None:
        return None if math.isnan(x) else round(x, 6)

    return {"estimate": clean(interval.estimate), "low": clean(interval.low), "high": clean(interval.high),
            "note": interval.note}


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
        "conclusion": report.conclusion.as_json(),
        "coverage": report.coverage.as_json() if report.coverage is not None else None,
        "heldout_exposure": report.exposure.as_json() if report.exposure is not None else None,
        "population": report.population,
        "caveats": list(report.caveats),
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
    """One row per ranking query; blank cells where a system is absent.

    A report on an incomplete rerank run starts with ``#`` lines (its headline label and banner) before the
    header row, so the file cannot pass for a complete run's (``pandas.read_csv(..., comment="#")`` skips them).
    """
    out = io.StringIO()
    coverage = report.coverage
    if coverage is not None and not coverage.complete:
        out.write(f"# {coverage.headline_label}\n# {' '.join(coverage.banner.split())}\n")
    writer = SafeCsvWriter(out, lineterminator="\n")
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


def report_text_export(report: Report, export: str) -> str | None:
    """The body of one of the report's text exports (``queries.csv``, ``qrels.txt``, ``families.txt`` or
    ``<system>.run``), the same for the page and the API; None when the report has no such system."""
    if export == "queries.csv":
        return report_csv(report)
    if export == "qrels.txt":
        return report_trec_qrels(report)
    if export == "families.txt":
        return report_families(report)
    system = export.removesuffix(".run")
    return report_trec_run(report, system=system) if system in report_systems(report) else None
