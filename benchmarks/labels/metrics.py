"""Human-label metrics and calibration of one rerank run against one declared review pool.

Labels: one per pool item, by the review core's rule (adjudicated, else
agreed, else unresolved; ``reviewapp.review.agreement.selectors.LABEL_RULE``), from COMPLETE,
NON-STALE judgments only, passage grade only. An item without such a label
(unjudged, draft, stale, reviewers disagree, "unknown") is missing: never read
as 0, never replaced by the model's probability. Provisional section labels
(``benchmarks.labels.pools.provisional_labels_import``) are never read here.

Human-label metrics, per split (dev, held-out, never pooled), for the keyword
order and the reranked order of the same candidates:
- judged P@5 (scoring.ir.ranking.judged_precision_at_5): defined for a
  query only when all five of that system's top results carry a label;
- pooled nDCG@5 (scoring.ir.ranking.pooled_ndcg_at_5): gain = grade,
  ideal DCG from the judged grades of that query's declared pool only (not the
  corpus); defined only when every pool member of the query is labelled.
Undefined queries are excluded and counted. Means with percentile 95%
intervals over query families (scoring.ir.family_bootstrap), and the
paired difference reranked - keyword over queries defined for both.

Calibration, per split, of the model's P(useful) = P(2) + P(3) against
useful = human passage grade >= 2 (scoring.stats.calibration): Brier,
five equal-width reliability bins, ECE, confidence (largest probability) vs
exact-grade agreement, and the 0.8 diagnostic. Population: the labelled items
of a selected pool, so these figures describe that pool, never the model's
calibration on all candidates. Brier and ECE carry percentile 95% intervals
resampling query families (an item's family is its query's), on the same
draws for both (scoring.stats.calibration.calibration_intervals).

Reviewer agreement on the passage grade (Krippendorff's ordinal alpha over
the pool's items with two or more completed grades,
reviewapp.review.agreement.selectors) is shown with the human-label metrics, with its
interval resampling query families as well: it says how far the labels
behind the metrics can be trusted.

Layers: ``human_inputs_load`` (reads: review selectors + the report adapter)
-> ``human_metrics_compute`` / ``calibration_compute`` (plain arrays into
scoring) -> ``*_as_json`` / ``*_csv`` (exports).
"""

from __future__ import annotations

import io
import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from benchmarks.labels.pools import QueryRanking, run_rankings
from benchmarks.labels.selectors import GRADE_TYPE, PoolInfo, is_synthetic, pool_info_load, run_pools
from benchmarks.reports.figures import SPLITS
from benchmarks.reports.params import ReportParameterError, report_parameters
from benchmarks.rerank.models import RerankGrade, RerankRun
from reviewapp.core.exports.csv_export import SafeCsvWriter
from reviewapp.review.agreement.selectors import LABEL_RULE, GradeTypeAgreement, pool_agreement
from scoring.ir.family_bootstrap import DEFAULT_REPLICATES, DEFAULT_SEED, family_bootstrap, paired_family_bootstrap
from scoring.ir.ranking import judged_precision_at_5, pooled_ndcg_at_5
from scoring.stats.bootstrap import Interval
from scoring.stats.calibration import (
    DIAGNOSTIC_THRESHOLD,
    CalibrationIntervals,
    CalibrationSummary,
    calibration_intervals,
    calibration_summary,
    distribution_confidence,
    p_useful,
)

if TYPE_CHECKING:  # types only: reads of the review engine go through its selectors
    from reviewapp.review.pools.refs import PoolRef

SYSTEMS = ("keyword", "reranked")
METRICS = ("P@5", "nDCG@5")
HUMAN_SCHEMA = "human-label-metrics/1"
CALIBRATION_SCHEMA = "calibration/1"
UNIT = "query family"

NDCG_NOTE = (
    "Pooled nDCG@5: gain = the human grade (0-3), discount log2(rank + 1); the ideal ranking uses only the judged "
    "grades of that query's declared review pool, not the whole corpus. A query counts only when every member of "
    "its pool carries a completed label."
)
P5_NOTE = (
    "Judged P@5: share of the five top results with a human passage grade of 2 or 3, counted for a system on a "
    "query only when all five carry a completed label; otherwise the query is excluded and counted as excluded."
)
MISSING_NOTE = (
    "A missing judgment is never treated as irrelevant, and model probabilities are never labels. Drafts, stale "
    "judgments (texts changed since), disagreements and 'unknown' leave an item without a label."
)
CONFIDENCE_NOTE = (
    "Confidence here is the largest of the four grade probabilities: how concentrated the distribution is, not "
    "the probability that the grade is right (the run page's confidence, 1 - normalised entropy, is another "
    "concentration measure)."
)
THRESHOLD_NOTE = (
    f"P(useful) >= {DIAGNOSTIC_THRESHOLD} is a diagnostic, not a production cutoff: it shows how many labelled "
    "items reach it and how many of those people judged useful."
)
SELECTED_NOTE = (
    "These labelled items are a selected pool, not a random sample of candidates: they cannot establish the "
    "model's calibration on the population of candidates or queries. Read them as a description of this pool."
)
INCOMPLETE_NOTE = (
    "The pool is incomplete: only part of it carries labels, so the labelled items may differ from the rest."
)
SYNTHETIC_NOTE = (
    "DEMO DATA: this pool's judgments were generated by the demo loader (reviewers named demo-synthetic-labels), "
    "not made by people. Nothing on this page says anything about the model."
)


# --------------------------------------------------------------------------- inputs


@dataclass(frozen=True)
class HumanInputs:
    run_pk: int
    run_label: str
    provider: str
    rankings: tuple[QueryRanking, ...]
    pool: PoolInfo | None
    labels: dict[tuple[str, str], int]  # (qid, docid) -> grade, labelled items only
    members: dict[str, frozenset[str]]  # qid -> docids in the declared pool
    distributions: dict[tuple[str, str], tuple[float, float, float, float]]  # graded candidates only


def model_distributions(*, rerank_run: RerankRun) -> dict[tuple[str, int], tuple[float, float, float, float]]:
    """(qid, provision id) -> (P0..P3) of the latest attempt of every graded candidate; failed ones are absent."""
    # The last row of a candidate wins: its latest attempt.
    latest = {row["candidate_id"]: row for row in (
        RerankGrade.objects.filter(run=rerank_run).order_by("attempt", "id")
        .values("candidate_id", "candidate__provision_id", "status", "p0", "p1", "p2", "p3", "query__qid"))}
    out: dict[tuple[str, int], tuple[float, float, float, float]] = {}
    for row in latest.values():
        p0, p1, p2, p3 = row["p0"], row["p1"], row["p2"], row["p3"]
        if row["status"] != RerankGrade.Status.GRADED or p0 is None or p1 is None or p2 is None or p3 is None:
            continue
        out[(row["query__qid"], row["candidate__provision_id"])] = (float(p0), float(p1), float(p2), float(p3))
    return out


def human_inputs_load(*, rerank_run: RerankRun, pool: PoolRef | None) -> HumanInputs:
    info, labels, members = pool_info_load(pool=pool) if pool is not None else (None, {}, {})
    rankings = tuple(run_rankings(rerank_run=rerank_run))
    by_provision = model_distributions(rerank_run=rerank_run)
    distributions = {
        (r.qid, docid): by_provision[(r.qid, provision_id)]
        for r in rankings for docid, provision_id in r.provision_of.items() if (r.qid, provision_id) in by_provision
    }
    return HumanInputs(
        run_pk=rerank_run.pk, run_label=f"rerank run #{rerank_run.pk} ({rerank_run.provider}:{rerank_run.model_id}, "
        f"{rerank_run.method_label})", provider=rerank_run.provider,
        rankings=rankings, pool=info, labels=labels, members=members, distributions=distributions,
    )


def pool_choose(*, rerank_run: RerankRun, public_id: str | None) -> tuple[PoolRef | None, list[PoolRef]]:
    """(chosen pool, all pools of the run). Default: the newest pool with people's judgments (not synthetic)."""
    pools = run_pools(rerank_run=rerank_run)
    if public_id:
        chosen = next((p for p in pools if p.public_id == public_id), None)
        if chosen is None:
            raise ReportParameterError(f"pool={public_id!r} is not a review pool of rerank run #{rerank_run.pk}")
        return chosen, pools
    real = [p for p in pools if not is_synthetic(p)]
    return (real[0] if real else (pools[0] if pools else None)), pools


# --------------------------------------------------------------------------- human-label metrics


@dataclass(frozen=True)
class QueryHuman:
    qid: str
    split: str
    family: str
    values: dict[str, float | None]  # "keyword P@5", "reranked nDCG@5", ... (None = excluded)
    top5_labelled: dict[str, int]  # system -> how many of its top five carry a label
    pool_members: int
    pool_labelled: int


@dataclass(frozen=True)
class SystemFigure:
    system: str
    interval: Interval
    included: int
    excluded: int
    families: int


@dataclass(frozen=True)
class MetricSplit:
    metric: str
    split: str
    label: str
    queries: int
    keyword: SystemFigure
    reranked: SystemFigure
    difference: Interval  # reranked - keyword, over queries defined for both
    paired_included: int


@dataclass(frozen=True)
class HumanMetrics:
    inputs: HumanInputs
    replicates: int
    seed: int
    queries: tuple[QueryHuman, ...]
    splits: tuple[MetricSplit, ...]
    agreement: GradeTypeAgreement | None = None  # reviewers' passage-grade agreement, intervals over families

    @property
    def has_labels(self) -> bool:
        return bool(self.inputs.labels)


def _key(system: str, metric: str) -> str:
    return f"{system} {metric}"


def query_values(ranking: QueryRanking, labels: dict[str, int], pool: frozenset[str]) -> dict[str, float | None]:
    """Per-system P@5 and pooled nDCG@5 of one query (None when undefined)."""
    out: dict[str, float | None] = {}
    for system, ranked in (("keyword", ranking.keyword), ("reranked", ranking.reranked)):
        out[_key(system, "P@5")] = judged_precision_at_5(list(ranked), labels)
        out[_key(system, "nDCG@5")] = pooled_ndcg_at_5(list(ranked), pool, labels) if pool else None
    return out


def reviewer_agreement_load(*, pool: PoolRef | None, rankings: Sequence[QueryRanking], replicates: int,
                            seed: int) -> GradeTypeAgreement | None:
    """The reviewers' agreement on the passage grade of ``pool``, intervals resampling query families."""
    if pool is None:
        return None
    families = {r.qid: r.family for r in rankings}
    (passage,) = pool_agreement(pool=pool, grade_types=(GRADE_TYPE,), units_by_query=families, unit=UNIT,
                                replicates=replicates, seed=seed)
    return passage


def human_metrics_compute(inputs: HumanInputs, *, replicates: int = DEFAULT_REPLICATES,
                          seed: int = DEFAULT_SEED, agreement: GradeTypeAgreement | None = None) -> HumanMetrics:
    replicates, seed = report_parameters(replicates=replicates, seed=seed)
    rows = []
    for r in inputs.rankings:
        labels = {docid: grade for (qid, docid), grade in inputs.labels.items() if qid == r.qid}
        pool = inputs.members.get(r.qid, frozenset())
        rows.append(QueryHuman(
            qid=r.qid, split=r.split, family=r.family, values=query_values(r, labels, pool),
            top5_labelled={"keyword": sum(d in labels for d in r.keyword[:5]),
                           "reranked": sum(d in labels for d in r.reranked[:5])},
            pool_members=len(pool), pool_labelled=sum(d in labels for d in pool),
        ))
    splits = []
    for split, label in SPLITS:
        in_split = [q for q in rows if q.split == split]
        families = [q.family for q in in_split]
        for metric in METRICS:
            kw = [q.values[_key("keyword", metric)] for q in in_split]
            rr = [q.values[_key("reranked", metric)] for q in in_split]
            figures = {}
            for system, values in (("keyword", kw), ("reranked", rr)):
                single = family_bootstrap(values, families, replicates=replicates, seed=seed)
                figures[system] = SystemFigure(system, single.interval, single.included, single.excluded,
                                               single.families)
            paired = paired_family_bootstrap(rr, kw, families, replicates=replicates, seed=seed)
            splits.append(MetricSplit(metric=metric, split=split, label=label, queries=len(in_split),
                                      keyword=figures["keyword"], reranked=figures["reranked"],
                                      difference=paired.difference, paired_included=paired.included))
    return HumanMetrics(inputs=inputs, replicates=replicates, seed=seed, queries=tuple(rows), splits=tuple(splits),
                        agreement=agreement)


# --------------------------------------------------------------------------- calibration


@dataclass(frozen=True)
class CalibrationItem:
    qid: str
    docid: str
    split: str
    distribution: tuple[float, float, float, float] | None  # None: the model did not grade it (failed)
    label: int | None  # None: no completed label


@dataclass(frozen=True)
class CalibrationSplit:
    split: str
    label: str
    declared: int  # pool items of this split
    no_label: int  # pool items without a completed, non-stale label
    no_probability: int  # labelled items the model did not grade
    summary: CalibrationSummary
    intervals: CalibrationIntervals  # Brier and ECE with percentile intervals over query families


@dataclass(frozen=True)
class Calibration:
    inputs: HumanInputs
    items: tuple[CalibrationItem, ...]
    splits: tuple[CalibrationSplit, ...]
    replicates: int = DEFAULT_REPLICATES
    seed: int = DEFAULT_SEED

    @property
    def has_labels(self) -> bool:
        return any(s.summary.included for s in self.splits)

    @property
    def caveats(self) -> list[str]:
        pool = self.inputs.pool
        out = []
        if pool is not None and pool.synthetic:
            out.append(SYNTHETIC_NOTE)
        if pool is not None and pool.selected:
            out.append(SELECTED_NOTE)
        if pool is not None and not pool.complete:
            out.append(INCOMPLETE_NOTE)
        if self.inputs.provider == "local":
            out.append("The model is the local heuristic (MiniLM cosine similarity mapped to grades), not an LLM.")
        return out


def calibration_compute(inputs: HumanInputs, *, replicates: int = DEFAULT_REPLICATES,
                        seed: int = DEFAULT_SEED) -> Calibration:
    replicates, seed = report_parameters(replicates=replicates, seed=seed)
    split_of = {r.qid: r.split for r in inputs.rankings}
    family_of = {r.qid: r.family for r in inputs.rankings}
    items = tuple(
        CalibrationItem(qid=qid, docid=docid, split=split_of.get(qid, ""),
                        distribution=inputs.distributions.get((qid, docid)), label=inputs.labels.get((qid, docid)))
        for qid in sorted(inputs.members) for docid in sorted(inputs.members[qid])
    )
    splits = []
    for split, label in SPLITS:
        in_split = [i for i in items if i.split == split]
        usable = [i for i in in_split if i.distribution is not None]
        distributions = [i.distribution for i in usable if i.distribution is not None]  # usable's, typed
        summary = calibration_summary(distributions, [i.label for i in usable])
        intervals = calibration_intervals(
            [p_useful(d) for d in distributions], [i.label for i in usable],
            [family_of[i.qid] for i in usable], unit=UNIT, replicates=replicates, seed=seed,
        )
        splits.append(CalibrationSplit(
            split=split, label=label, declared=len(in_split), no_label=sum(i.label is None for i in in_split),
            no_probability=sum(i.distribution is None and i.label is not None for i in in_split), summary=summary,
            intervals=intervals,
        ))
    return Calibration(inputs=inputs, items=items, splits=tuple(splits), replicates=replicates, seed=seed)


# --------------------------------------------------------------------------- exports


def _clean(x: float | None) -> float | None:
    return None if x is None or (isinstance(x, float) and math.isnan(x)) else round(float(x), 6)


def _interval(i: Interval) -> dict[str, float | None]:
    return {"estimate": _clean(i.estimate), "low": _clean(i.low), "high": _clean(i.high)}


def pool_json(pool: PoolInfo | None) -> dict[str, Any] | None:
    if pool is None:
        return None
    return {"public_id": pool.public_id, "name": pool.name, "declared_rule": pool.declared_rule,
            "declared_params": pool.declared_params, "reviewers_per_item": pool.reviewers_per_item,
            "items_declared": pool.items, "items_labelled": pool.labelled, "label_states": pool.label_states,
            "complete_judgments": pool.complete_judgments, "stale_judgments": pool.stale_judgments,
            "selected": pool.selected, "complete": pool.complete, "synthetic": pool.synthetic,
            "label_rule": LABEL_RULE}


def human_summary_rows(metrics: HumanMetrics) -> list[dict[str, Any]]:
    rows = []
    for s in metrics.splits:
        for fig in (s.keyword, s.reranked):
            rows.append({"split": s.split, "metric": s.metric, "system": fig.system, **_interval(fig.interval),
                         "included": fig.included, "excluded": fig.excluded, "families": fig.families})
        rows.append({"split": s.split, "metric": s.metric, "system": "reranked - keyword",
                     **_interval(s.difference), "included": s.paired_included,
                     "excluded": s.queries - s.paired_included, "families": None})
    return rows


def human_query_rows(metrics: HumanMetrics) -> list[dict[str, Any]]:
    return [
        {"qid": q.qid, "split": q.split, "family": q.family,
         **{_key(system, m).replace(" ", "_"): _clean(q.values[_key(system, m)]) for system in SYSTEMS
            for m in METRICS},
         "keyword_top5_labelled": q.top5_labelled["keyword"], "reranked_top5_labelled": q.top5_labelled["reranked"],
         "pool_members": q.pool_members, "pool_labelled": q.pool_labelled}
        for q in metrics.queries
    ]


def reviewer_agreement_json(agreement: GradeTypeAgreement | None) -> dict[str, Any] | None:
    """Alpha of the reviewers' passage grades with its interval; reviewers are not named (stakeholders read this)."""
    if agreement is None:
        return None
    return {"grade_type": agreement.grade_type, "reviewers": agreement.reviewers,
            "items_with_two_grades": agreement.alpha_items, "grades": agreement.alpha_values,
            "krippendorff_alpha_ordinal": agreement.alpha_interval.as_dict()}


def human_metrics_as_json(metrics: HumanMetrics) -> dict[str, Any]:
    return {
        "schema": HUMAN_SCHEMA, "run": metrics.inputs.run_label, "pool": pool_json(metrics.inputs.pool),
        "notes": [P5_NOTE, NDCG_NOTE, MISSING_NOTE],
        "bootstrap": {"replicates": metrics.replicates, "seed": metrics.seed, "level": 0.95, "unit": UNIT,
                      "method": "percentile; difference paired over queries defined for both systems"},
        "summary": human_summary_rows(metrics), "queries": human_query_rows(metrics),
        "reviewer_agreement": reviewer_agreement_json(metrics.agreement),
    }


def calibration_summary_rows(calibration: Calibration) -> list[dict[str, Any]]:
    rows = []
    for s in calibration.splits:
        d = s.summary.diagnostic
        brier, ece = s.intervals.brier, s.intervals.ece
        rows.append({"split": s.split, "declared": s.declared, "included": s.summary.included,
                     "excluded_no_label": s.no_label, "excluded_no_model_probability": s.no_probability,
                     "brier": _clean(s.summary.brier), "brier_low": _clean(brier.interval.low),
                     "brier_high": _clean(brier.interval.high), "ece": _clean(s.summary.ece),
                     "ece_low": _clean(ece.interval.low), "ece_high": _clean(ece.interval.high),
                     "interval_unit": brier.unit, "interval_units": brier.units,
                     "interval_replicates": brier.replicates, "interval_seed": brier.seed,
                     "interval_undefined_replicates": brier.undefined + ece.undefined,
                     "interval_caveat": brier.caveat,
                     "diagnostic_threshold": d.threshold, "at_or_above_threshold": d.at_or_above,
                     "at_or_above_judged_useful": d.judged_useful})
    return rows


def reliability_rows(calibration: Calibration) -> list[dict[str, Any]]:
    return [{"split": s.split, "bin": n, "low": b.low, "high": b.high, "count": b.count,
             "mean_predicted": _clean(b.mean_predicted), "observed_rate": _clean(b.observed_rate)}
            for s in calibration.splits for n, b in enumerate(s.summary.bins, start=1)]


def agreement_rows(calibration: Calibration) -> list[dict[str, Any]]:
    return [{"split": s.split, "bin": n, "low": b.low, "high": b.high, "count": b.count,
             "mean_confidence": _clean(b.mean_confidence), "exact_agreement": _clean(b.exact_agreement)}
            for s in calibration.splits for n, b in enumerate(s.summary.agreement_bins, start=1)]


def item_rows(calibration: Calibration) -> list[dict[str, Any]]:
    out = []
    for i in calibration.items:
        dist = i.distribution
        out.append({"qid": i.qid, "docid": i.docid, "split": i.split,
                    "p0": dist[0] if dist else None, "p1": dist[1] if dist else None,
                    "p2": dist[2] if dist else None, "p3": dist[3] if dist else None,
                    "p_useful": _clean(p_useful(dist)) if dist else None,
                    "confidence": _clean(distribution_confidence(dist)) if dist else None,
                    "human_grade": i.label})
    return out


def calibration_as_json(calibration: Calibration) -> dict[str, Any]:
    return {
        "schema": CALIBRATION_SCHEMA, "run": calibration.inputs.run_label,
        "pool": pool_json(calibration.inputs.pool), "caveats": calibration.caveats,
        "notes": [MISSING_NOTE, CONFIDENCE_NOTE, THRESHOLD_NOTE],
        "bootstrap": {"replicates": calibration.replicates, "seed": calibration.seed, "level": 0.95, "unit": UNIT,
                      "method": "percentile; Brier and ECE on the same resamples of query families"},
        "definitions": {"p_useful": "P(grade 2) + P(grade 3), renormalised", "useful": "human passage grade >= 2",
                        "bins": "five equal-width bins of P(useful) over [0, 1]; the last includes 1.0",
                        "ece": "sum over bins of (count / total) * |mean predicted - observed rate|"},
        "summary": calibration_summary_rows(calibration), "reliability": reliability_rows(calibration),
        "agreement": agreement_rows(calibration), "items": item_rows(calibration),
    }


ITEM_COLUMNS = ("qid", "docid", "split", "p0", "p1", "p2", "p3", "p_useful", "confidence", "human_grade")


def rows_csv(rows: Sequence[dict[str, Any]], columns: Sequence[str] | None = None) -> str:
    """CSV of dict rows; blank cells for None."""
    out = io.StringIO()
    writer = SafeCsvWriter(out, lineterminator="\n")
    columns = list(columns or (rows[0].keys() if rows else ITEM_COLUMNS))
    writer.writerow(columns)
    for row in rows:
        writer.writerow(["" if row.get(c) is None else row.get(c) for c in columns])
    return out.getvalue()


HUMAN_TABLES = {"summary.csv": human_summary_rows, "queries.csv": human_query_rows}
CALIBRATION_TABLES = {"summary.csv": calibration_summary_rows, "reliability.csv": reliability_rows,
                      "agreement.csv": agreement_rows, "items.csv": item_rows}
