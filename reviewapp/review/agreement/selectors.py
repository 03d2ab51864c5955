"""Reads of a pool's judgments together: its labels (``LABEL_RULE``), progress, agreement between reviewers,
disagreements, adjudication.

Built on the counted (complete, non-stale) judgments and the labels of
``selectors``. An adjudicator sees the texts and the reviewers' grades, never
model information.

Agreement figures (quadratic kappa per reviewer pair, ordinal Krippendorff's
alpha, and beside them raw agreement, each grade's prevalence and Gwet's
quadratic AC2, which stays high when one grade dominates and kappa collapses)
carry a percentile bootstrap interval (``scoring.stats.agreement``).
The engine knows no job, so by default the unit resampled is the review item;
a job that knows how its queries cluster (the statute benchmark's query
families) passes ``units_by_query`` and ``unit`` to resample those instead.
"""

from __future__ import annotations

import itertools
import json
from collections import defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, TypedDict

from django.contrib.auth import get_user_model

from reviewapp.core.records.hashing import sha256_json
from reviewapp.review.agreement.judgments import JudgmentRecord, pool_completed_judgments, pool_judgments
from reviewapp.review.agreement.models import Adjudication
from reviewapp.review.agreement.spans import pool_span_judgments
from reviewapp.review.assignment.models import Assignment
from reviewapp.review.judgments.hashes import hashes_match
from reviewapp.review.judgments.models import Judgment, JudgmentRevision, ReviewItem
from reviewapp.review.kinds import UNKNOWN, PoolKind, kind_get
from reviewapp.review.pools.known_answers import known_answer_item_pks
from reviewapp.review.pools.models import ReviewPool
from reviewapp.review.pools.refs import PoolRef, pool_model
from scoring.stats.agreement import (
    alpha_interval,
    gwet_interval,
    kappa_interval,
    kappa_paradox_note,
    pair_agreement,
    raw_agreement_interval,
)
from scoring.stats.bootstrap import UnitBootstrap

# Items are the units here, so each figure costs resamples x items; 2,000 percentile resamples keep a pool page of
# a few thousand items within seconds (the CUAD scorecard uses 1,000). A fixed seed: one page, one interval.
AGREEMENT_REPLICATES = 2_000
AGREEMENT_SEED = 20260920

def _current(judgment: Judgment) -> JudgmentRevision:
    """The current revision of a judgment read with ``current__isnull=False``."""
    revision = judgment.current
    assert revision is not None  # the query excluded judgments without one
    return revision


# --- labels -----------------------------------------------------------------

LABEL_RULE = (
    "Adjudicated, else agreed, else unresolved. One label per item and grade: the latest adjudication "
    "if an admin adjudicated it; otherwise the "
    "grade all reviewers agreed on, when at least the pool's required number of reviewers completed it "
    "with a grade (not unknown) and all those grades are equal; otherwise unresolved. Only complete "
    "judgments whose query, source and passage hashes still match the item count. A missing or unknown "
    "grade is never read as 0."
)


@dataclass(frozen=True)
class ResolvedLabel:
    item_id: str
    query_id: str
    doc_id: str
    external_ref: dict[str, Any]
    grade_type: str
    state: str  # "adjudicated" | "agreed" | "unresolved"
    value: int | str | None  # a grade, "unknown" (adjudicated as unknown), or None when unresolved
    reason: str  # for unresolved: why
    grades: tuple[Any, ...]  # the counted (complete, non-stale) reviewers' grades, sorted by reviewer id
    query_hash: str
    source_hash: str
    passage_hash: str

    @property
    def is_grade(self) -> bool:
        """True when the label is a usable grade (not unresolved, not unknown)."""
        return self.state != "unresolved" and isinstance(self.value, int)


def pool_labels(*, pool: ReviewPool | PoolRef, grade_type: str | None = None) -> list[ResolvedLabel]:
    """One label per item (and grade type) by ``LABEL_RULE``. Default grade type: the kind's qrels grade."""
    pool = pool_model(pool)
    kind = kind_get(pool.kind)
    grade_type = grade_type or kind.qrels_grade_type
    if grade_type not in kind.grade_type_keys:
        raise ValueError(f"grade_type {grade_type!r} is not one of {kind.grade_type_keys}")
    counted: dict[str, list[JudgmentRecord]] = defaultdict(list)
    for record in pool_completed_judgments(pool=pool):
        counted[record.item_id].append(record)
    rulings: dict[int, Adjudication] = {}
    for adjudication in Adjudication.objects.filter(item__pool=pool, grade_type=grade_type).order_by("id"):
        rulings[adjudication.item_id] = adjudication  # the latest wins
    labels = []
    # Known-answer items check reviewers; they are not part of the pool's labels.
    for item in pool.items.exclude(pk__in=known_answer_item_pks(pool=pool)).order_by("query_id", "doc_id"):
        records = counted.get(item.public_id, [])
        grades = tuple(r.grades.get(grade_type) for r in records)
        ruling = rulings.get(item.pk)
        if ruling is not None and hashes_match(ruling, item):
            state, value, reason = "adjudicated", ruling.value, ""
        else:
            known = [g for g in grades if isinstance(g, int)]
            if len(known) >= pool.reviewers_per_item and len(set(known)) == 1:
                state, value, reason = "agreed", known[0], ""
            else:
                state, value = "unresolved", None
                if len(set(known)) > 1:
                    reason = "reviewers disagree"
                elif any(g == UNKNOWN for g in grades):
                    reason = "a reviewer answered unknown"
                else:
                    reason = f"{len(known)} of {pool.reviewers_per_item} complete judgments"
        labels.append(
            ResolvedLabel(
                item_id=item.public_id, query_id=item.query_id, doc_id=item.doc_id,
                external_ref=dict(item.external_ref), grade_type=grade_type, state=state, value=value,
                reason=reason, grades=grades, query_hash=item.query_hash, source_hash=item.source_hash,
                passage_hash=item.passage_hash,
            )
        )
    return labels


# --- progress ---------------------------------------------------------------


@dataclass(frozen=True)
class ReviewerProgress:
    reviewer_id: int
    username: str
    assigned: int
    complete: int
    draft: int
    not_started: int
    stale: int


@dataclass(frozen=True)
class QueryProgress:
    query_id: str
    query_text: str
    items: int
    assignments: int
    complete: int
    labelled: int  # items whose label (qrels grade type) is adjudicated or agreed


@dataclass(frozen=True)
class PoolProgress:
    items: int
    assignments: int
    complete: int
    stale: int
    per_reviewer: list[ReviewerProgress]
    per_query: list[QueryProgress]


def pool_progress(*, pool: ReviewPool) -> PoolProgress:
    records = pool_judgments(pool)
    by_reviewer_item = {(r.reviewer_id, r.item_id): r for r in records}
    User = get_user_model()
    per_reviewer: dict[int, dict[str, int]] = {}
    per_query: dict[str, dict[str, Any]] = {}
    for item in pool.items.all():
        query = per_query.setdefault(
            item.query_id, {"query_text": item.query_text, "items": 0, "assignments": 0, "complete": 0}
        )
        query["items"] += 1
    for assignment in Assignment.objects.filter(pool=pool).select_related("item"):
        counts = per_reviewer.setdefault(
            assignment.reviewer_id, {"assigned": 0, "complete": 0, "draft": 0, "not_started": 0, "stale": 0}
        )
        counts["assigned"] += 1
        query = per_query[assignment.item.query_id]
        query["assignments"] += 1
        record = by_reviewer_item.get((assignment.reviewer_id, assignment.item.public_id))
        if record is None:
            counts["not_started"] += 1
        elif record.stale:
            counts["stale"] += 1
        elif record.status == JudgmentRevision.COMPLETE:
            counts["complete"] += 1
            query["complete"] += 1
        else:
            counts["draft"] += 1
    labelled: dict[str, int] = defaultdict(int)
    for label in pool_labels(pool=pool):
        if label.state != "unresolved":
            labelled[label.query_id] += 1
    names = dict(User.objects.filter(pk__in=per_reviewer).values_list("pk", User.USERNAME_FIELD))
    return PoolProgress(
        items=sum(q["items"] for q in per_query.values()),
        assignments=sum(c["assigned"] for c in per_reviewer.values()),
        complete=sum(c["complete"] for c in per_reviewer.values()),
        stale=sum(1 for r in records if r.stale),
        per_reviewer=[
            ReviewerProgress(reviewer_id=pk, username=names.get(pk, str(pk)), **counts)
            for pk, counts in sorted(per_reviewer.items(), key=lambda kv: names.get(kv[0], ""))
        ],
        per_query=[
            QueryProgress(query_id=qid, labelled=labelled.get(qid, 0), **values)
            for qid, values in sorted(per_query.items())
        ],
    )


# --- agreement --------------------------------------------------------------


@dataclass(frozen=True)
class PairRow:
    reviewer_a: str
    reviewer_b: str
    n: int  # items both completed with a grade
    excluded: int  # items both completed where one or both answered unknown
    raw_agreement: float | None
    kappa_quadratic: float | None
    band: str | None
    kappa_interval: UnitBootstrap  # quadratic kappa with its interval, unit, units, resamples, seed
    raw_agreement_interval: UnitBootstrap  # the same draws
    agreements: int = 0  # items on which the two grades are equal
    ac2_quadratic: float | None = None  # Gwet's AC2, quadratic weights (AC1 when the grade is yes/no)
    ac2_interval: UnitBootstrap | None = None  # the same draws
    ac1: float | None = None  # Gwet's AC1, nominal
    pabak: float | None = None
    prevalence: tuple[tuple[Any, float], ...] = ()  # (grade, share of the pair's grades)
    paradox_note: str = ""  # one line when raw agreement is high and kappa low (the kappa paradox)


@dataclass(frozen=True)
class GradeTypeAgreement:
    grade_type: str
    label: str
    pairs: list[PairRow]
    alpha: float | None  # Krippendorff's alpha, ordinal
    alpha_items: int  # items with at least two grades (pairable)
    alpha_values: int  # grades in those items
    reviewers: int
    alpha_interval: UnitBootstrap


@dataclass(frozen=True)
class ReliabilityData:
    """Reviewers x items matrix of counted grades (None = not graded or unknown), for one grade type."""

    reviewer_names: list[str]
    item_ids: list[str]
    matrix: list[list[int | None]]


def pool_reliability_data(*, pool: ReviewPool, grade_type: str) -> ReliabilityData:
    records = pool_completed_judgments(pool=pool)
    reviewers = sorted({(r.reviewer_username, r.reviewer_id) for r in records})
    items = sorted({r.item_id for r in records})
    row_of = {pk: i for i, (_, pk) in enumerate(reviewers)}
    col_of = {item_id: j for j, item_id in enumerate(items)}
    matrix: list[list[int | None]] = [[None] * len(items) for _ in reviewers]
    for r in records:
        value = r.grades.get(grade_type)
        matrix[row_of[r.reviewer_id]][col_of[r.item_id]] = value if isinstance(value, int) else None
    return ReliabilityData(reviewer_names=[name for name, _ in reviewers], item_ids=items, matrix=matrix)


def _item_units(records: list[JudgmentRecord], units_by_query: Mapping[str, str] | None) -> dict[str, str]:
    """Unit of each judged item: the item itself, or its query's unit from ``units_by_query``."""
    if units_by_query is None:
        return {r.item_id: r.item_id for r in records}
    missing = sorted({r.query_id for r in records} - set(units_by_query))
    if missing:
        raise ValueError(f"units_by_query has no unit for queries {missing[:5]} of this pool")
    return {r.item_id: units_by_query[r.query_id] for r in records}


class _IntervalOptions(TypedDict):
    """The keyword arguments every pair's intervals share (one bootstrap draw per pair)."""

    categories: Sequence[object]
    unit: str
    replicates: int
    seed: int


def pool_agreement(
    *,
    pool: ReviewPool | PoolRef,
    grade_types: tuple[str, ...] | None = None,
    units_by_query: Mapping[str, str] | None = None,
    unit: str = "item",
    replicates: int = AGREEMENT_REPLICATES,
    seed: int = AGREEMENT_SEED,
) -> list[GradeTypeAgreement]:
    """Per grade type: quadratic-weighted Cohen's kappa for each reviewer pair, Krippendorff's alpha (ordinal).

    Each figure carries a percentile bootstrap interval resampling items, or
    the units ``units_by_query`` gives each query (then name them in ``unit``).
    """
    pool = pool_model(pool)
    kind = kind_get(pool.kind)
    records = pool_completed_judgments(pool=pool)
    unit_of = _item_units(records, units_by_query)
    completed_by: dict[int, set[str]] = defaultdict(set)
    for r in records:
        completed_by[r.reviewer_id].add(r.item_id)
    results = []
    for grade_type in kind.grade_types:
        if grade_types is not None and grade_type.key not in grade_types:
            continue
        data = pool_reliability_data(pool=pool, grade_type=grade_type.key)
        item_units = [unit_of[item_id] for item_id in data.item_ids]
        ids = sorted({(r.reviewer_username, r.reviewer_id) for r in records})
        pairs = []
        for (i, (name_a, pk_a)), (j, (name_b, pk_b)) in itertools.combinations(enumerate(ids), 2):
            shared = completed_by[pk_a] & completed_by[pk_b]
            if not shared:
                continue
            columns = [data.item_ids.index(item_id) for item_id in sorted(shared)]
            a = [data.matrix[i][c] for c in columns]
            b = [data.matrix[j][c] for c in columns]
            result = pair_agreement(a, b, categories=kind.values)
            pair_units = [item_units[c] for c in columns]
            common: _IntervalOptions = {
                "categories": kind.values, "unit": unit, "replicates": replicates, "seed": seed}
            interval = kappa_interval(a, b, pair_units, weights="quadratic", **common)
            pairs.append(
                PairRow(
                    reviewer_a=name_a, reviewer_b=name_b, n=result.n, excluded=result.excluded,
                    raw_agreement=result.raw_agreement, kappa_quadratic=result.kappa_quadratic,
                    band=result.band_quadratic, kappa_interval=interval,
                    raw_agreement_interval=raw_agreement_interval(a, b, pair_units, **common),
                    agreements=result.agreements, ac2_quadratic=result.ac2_quadratic,
                    ac2_interval=gwet_interval(a, b, pair_units, weights="quadratic", **common),
                    ac1=result.ac1, pabak=result.pabak, prevalence=result.prevalence,
                    paradox_note=kappa_paradox_note(
                        n=result.n, agreements=result.agreements, kappa=result.kappa_quadratic,
                        ac1=result.ac2_quadratic, prevalence=result.prevalence,
                        kappa_name="quadratic kappa", ac1_name="Gwet's AC2",
                    ),
                )
            )
        per_item = [sum(1 for row in data.matrix if row[c] is not None) for c in range(len(data.item_ids))]
        pairable = [n for n in per_item if n >= 2]
        alpha = alpha_interval(data.matrix, item_units, unit=unit, replicates=replicates, seed=seed)
        results.append(
            GradeTypeAgreement(
                grade_type=grade_type.key, label=grade_type.label, pairs=pairs,
                alpha=alpha.interval.estimate if alpha.defined else None,
                alpha_items=len(pairable), alpha_values=sum(pairable), reviewers=len(ids), alpha_interval=alpha,
            )
        )
    return results


# --- disagreements ------------------------------------------------------------


def pool_document_citations(*, pool: ReviewPool) -> dict[str, str]:
    """``{doc_id: citation}`` for the pool's items whose kind can cite them (an admin reads citations, not ids)."""
    kind = kind_get(pool.kind)
    if kind.document_citations is None:
        return {}
    rows = list(pool.items.order_by("id").values_list("doc_id", "external_ref"))
    citations = kind.document_citations([ref or {} for _, ref in rows])
    return {doc_id: citation for (doc_id, _), citation in zip(rows, citations, strict=True) if citation}


@dataclass(frozen=True)
class ReviewerGrade:
    username: str
    value: Any
    note: str


@dataclass(frozen=True)
class Disagreement:
    item_id: str
    query_id: str
    doc_id: str
    grade_type: str
    grades: list[ReviewerGrade]
    adjudicated: Any  # the current ruling's value, or None
    state: str


def answers_disputed(answers: Sequence[Any]) -> bool:
    """Whether one item's counted answers on one grade type are a disagreement, the only thing a ruling resolves:
    at least two answers, not all equal (unknown is an answer like any grade)."""
    return len(answers) >= 2 and len({json.dumps(a, sort_keys=True) for a in answers}) > 1


def item_dispute(*, item: ReviewItem, grade_type: str) -> str:
    """Why ``item`` has no disagreement on ``grade_type`` to rule on, or "" when its reviewers dispute it.

    Read as every label is: the counted judgments (complete, not stale, linked ones included; known-answer items
    have none). For a kind that answers spans, an answer is its grade and its span set, so reviewers who give the
    same grade but highlight different text dispute the item too.
    """
    answers: list[Any]
    if kind_get(item.pool.kind).answers_spans:
        answers = [[s.record.grades.get(grade_type), s.spans] for s in pool_span_judgments(pool=item.pool)
                   if s.record.item_id == item.public_id]
    else:
        answers = [r.grades.get(grade_type) for r in pool_completed_judgments(pool=item.pool)
                   if r.item_id == item.public_id]
    if answers_disputed(answers):
        return ""
    if len(answers) >= 2:
        return f"the {len(answers)} reviewers who completed it agree"
    return f"{len(answers)} reviewer{'s' * (len(answers) != 1)} completed it (a dispute needs two who differ)"


def pool_disagreements(*, pool: ReviewPool) -> list[Disagreement]:
    """Items where the counted reviewers' grades (unknown included) are not all equal, per grade type
    (``answers_disputed``)."""
    kind = kind_get(pool.kind)
    records = pool_completed_judgments(pool=pool)
    notes = {
        (j.item.public_id, j.reviewer_id): _current(j).note
        for j in Judgment.objects.filter(item__pool=pool, current__isnull=False).select_related("item", "current")
    }
    by_item: dict[str, list[JudgmentRecord]] = defaultdict(list)
    for r in records:
        by_item[r.item_id].append(r)
    out = []
    for grade_type in kind.grade_type_keys:
        labels = {label.item_id: label for label in pool_labels(pool=pool, grade_type=grade_type)}
        for item_id, rows in by_item.items():
            values = [r.grades.get(grade_type) for r in rows]
            if not answers_disputed(values):
                continue
            label = labels[item_id]
            out.append(
                Disagreement(
                    item_id=item_id, query_id=rows[0].query_id, doc_id=rows[0].doc_id, grade_type=grade_type,
                    grades=[
                        ReviewerGrade(username=r.reviewer_username, value=r.grades.get(grade_type),
                                      note=notes.get((item_id, r.reviewer_id), ""))
                        for r in rows
                    ],
                    adjudicated=label.value if label.state == "adjudicated" else None,
                    state=label.state,
                )
            )
    out.sort(key=lambda d: (d.state == "adjudicated", d.query_id, d.doc_id, d.grade_type))
    return out


@dataclass(frozen=True)
class AdjudicationItem:
    """What an adjudicator sees: the texts and the reviewers' grades; no model information."""

    item_id: str
    kind: PoolKind
    query_text: str
    source_heading: str
    source_text: str
    passage_caption: str
    passage_text: str
    reviewer_grades: list[tuple[str, str, dict[str, Any], str, bool]]  # username, status, grades, note, stale
    rulings: dict[str, Any]  # grade_type -> latest ruling value
    # A digest of the disagreement as shown (texts, every reviewer's current grades, the latest rulings): a ruling
    # posted with another digest was made on a stale view and is refused (``disagreements.RulingChanged``).
    seen: str = ""


def pool_adjudication_item(*, pool: ReviewPool, item_id: str) -> AdjudicationItem:
    item = ReviewItem.objects.get(pool=pool, public_id=item_id)
    rows = []
    for judgment in Judgment.objects.filter(item=item, current__isnull=False).select_related("current", "reviewer"):
        revision = _current(judgment)
        rows.append(
            (judgment.reviewer.get_username(), revision.status, dict(revision.grades), revision.note,
             not hashes_match(revision, item))
        )
    rulings = {}
    ruling_ids = {}
    for ruling in Adjudication.objects.filter(item=item).order_by("id"):
        if hashes_match(ruling, item):
            rulings[ruling.grade_type] = ruling.value
            ruling_ids[ruling.grade_type] = ruling.pk
    rows.sort()
    seen = sha256_json({"texts": [item.query_hash, item.source_hash, item.passage_hash],
                        "grades": [[name, status, grades, stale] for name, status, grades, _note, stale in rows],
                        "rulings": ruling_ids})
    return AdjudicationItem(
        item_id=item.public_id, kind=kind_get(pool.kind), query_text=item.query_text,
        source_heading=item.source_heading, source_text=item.source_text, passage_caption=item.passage_caption,
        passage_text=item.passage_text, reviewer_grades=rows, rulings=rulings, seen=seen,
    )
