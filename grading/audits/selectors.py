"""Reads of an audit: its candidates with verdicts, the judges' agreement, the measured impact on the scorecard.

- Agreement (``audit_agreement``): Cohen's kappa over the candidates both
  judges ruled on, its Landis-Koch band, the 2x2 table and raw agreement
  (``scoring.stats.agreement``), with a percentile bootstrap interval that
  resamples contracts (candidates of one contract are correlated), B = 1000
  and seed 0 as the impact's intervals; resamples in which both judges gave
  one and the same verdict leave kappa undefined and are counted.
- Impact (``audit_impact``): candidates BOTH judges confirm join the CUAD spans
  of their contract (one new span each, equal to the candidate's text) and
  their extraction is matched to it with F1 = 1, so it counts as Correct: the
  run's credit and the gold span count both grow by one per confirmed
  candidate. Recall after = (credit + k) / (spans + k). The same with a single
  judge's confirmations (and with the humans' resolved "yes", once there are
  any) is shown alongside for context. Intervals: the same seeded contract
  bootstrap as the scorecard (same draws before and after).
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TypedDict

import numpy as np

from grading.audits.models import Audit, AuditCandidate, AuditJudge, AuditVerdict
from grading.audits.review import HumanLabel, audit_human_labels, audit_pool
from grading.dataset.models import Category
from grading.dataset.selectors import sample_contract_ids
from grading.runs.selectors import run_pair_table
from reviewapp.review.pools.refs import PoolRef
from scoring.cuad.grading import DEFAULT_REPLICATES, Figures, PairTable, Thresholds, grade
from scoring.stats.agreement import (
    gwet_interval,
    kappa_interval,
    kappa_paradox_note,
    pair_agreement,
    raw_agreement_interval,
)
from scoring.stats.bootstrap import UnitBootstrap

VERDICT_CATEGORIES = ("no", "yes")


@dataclass(frozen=True)
class CandidateRow:
    candidate: AuditCandidate
    contract: str
    category: str
    verdicts: dict[str, AuditVerdict | None]
    human: HumanLabel | None

    @property
    def both_yes(self) -> bool:
        return all(v is not None and v.verdict for v in self.verdicts.values())


@dataclass(frozen=True)
class AuditAgreement:
    """Agreement of the two judges over the candidates both ruled on (rows judge A, columns judge B; no, yes)."""

    n: int
    excluded: int
    raw_agreement: float | None
    kappa: float | None
    band: str | None
    table: list[list[int]]
    kappa_interval: UnitBootstrap  # kappa with its interval over contracts, B, seed, undefined resamples
    raw_agreement_interval: UnitBootstrap  # the same draws
    agreements: int = 0  # candidates on which the two verdicts are equal
    ac1: float | None = None  # Gwet's AC1: robust when one verdict dominates
    ac1_interval: UnitBootstrap | None = None  # the same draws
    pabak: float | None = None  # 2 x raw agreement - 1
    prevalence: tuple[tuple[str, float], ...] = ()  # (verdict, share of both judges' verdicts)
    paradox_note: str = ""  # the kappa paradox in one line, or ''


def audit_agreement(
    *,
    verdicts_a: Sequence[bool | None],
    verdicts_b: Sequence[bool | None],
    contracts: Sequence[str],
    replicates: int = DEFAULT_REPLICATES,
    seed: int = 0,
) -> AuditAgreement:
    """Cohen's kappa (unweighted) with its Landis-Koch band, the 2x2 table, raw agreement, Gwet's AC1, PABAK and
    each verdict's prevalence, with the kappa paradox in words when it applies; None = not ruled.

    ``contracts[i]`` is candidate i's contract, the unit the interval resamples.
    """

    def word(v: bool | None) -> str | None:
        return None if v is None else ("yes" if v else "no")

    a, b = [word(v) for v in verdicts_a], [word(v) for v in verdicts_b]
    pa = pair_agreement(a, b, categories=VERDICT_CATEGORIES)
    common = _IntervalOptions(categories=VERDICT_CATEGORIES, unit="contract", observation="candidate",
                              replicates=replicates, seed=seed)
    return AuditAgreement(
        pa.n, pa.excluded, pa.raw_agreement, pa.kappa, pa.band, pa.table.tolist(),
        kappa_interval(a, b, contracts, **common), raw_agreement_interval(a, b, contracts, **common),
        agreements=pa.agreements, ac1=pa.ac1, ac1_interval=gwet_interval(a, b, contracts, **common),
        pabak=pa.pabak, prevalence=tuple((str(v), share) for v, share in pa.prevalence),
        paradox_note=kappa_paradox_note(n=pa.n, agreements=pa.agreements, kappa=pa.kappa, ac1=pa.ac1,
                                        prevalence=pa.prevalence, ac1_name="Gwet's AC1"),
    )


class _IntervalOptions(TypedDict):
    """What the three agreement intervals of an audit share (keyword arguments)."""

    categories: Sequence[object]
    unit: str
    observation: str
    replicates: int
    seed: int


def credit_extractions(table: PairTable, rows: Sequence[int]) -> PairTable:
    """The table with each extraction in ``rows`` given a new CUAD span of its own (its own text) at F1 = 1.

    The rows must be unmatched (their cell has no CUAD span): each new span
    joins the gold of the extraction's contract and category, and the
    extraction is matched to it. Nothing else changes, so each credited row
    adds exactly one span and, at a grounding threshold it meets, one credit.
    """
    credited = np.asarray(sorted({int(r) for r in rows}), dtype=np.int64)
    if credited.size and np.any(table.ext_span[credited] >= 0):
        raise ValueError("a credited extraction is already matched to a CUAD span; only candidates can be credited")
    n_spans = len(table.span_contract)
    ext_span = table.ext_span.copy()
    ext_f1 = table.ext_f1.copy()
    ext_span[credited] = n_spans + np.arange(credited.size)
    ext_f1[credited] = 1.0
    return PairTable(
        ext_contract=table.ext_contract,
        ext_category=table.ext_category,
        ext_f1=ext_f1,
        ext_grounding=table.ext_grounding,
        ext_span=ext_span,
        span_contract=np.concatenate([table.span_contract, table.ext_contract[credited]]),
        span_category=np.concatenate([table.span_category, table.ext_category[credited]]),
        n_contracts=table.n_contracts,
        n_categories=table.n_categories,
    )


@dataclass(frozen=True)
class ImpactRow:
    key: str  # "before", "both", "a", "b", "humans"
    label: str
    credited: int
    figures: Figures
    per_category: tuple[Figures, ...]


@dataclass(frozen=True)
class CategoryImpact:
    category: str
    candidates: int
    both_yes: int
    before: Figures
    after: Figures


@dataclass(frozen=True)
class AuditImpact:
    rows: list[ImpactRow]
    per_category: list[CategoryImpact]
    thresholds: Thresholds
    replicates: int
    seed: int
    n_contracts: int

    def row(self, key: str) -> ImpactRow | None:
        return next((r for r in self.rows if r.key == key), None)


def audit_impact(
    *,
    audit: Audit,
    rows: Sequence[CandidateRow],
    judges: Sequence[AuditJudge],
    replicates: int = DEFAULT_REPLICATES,
    seed: int = 0,
) -> AuditImpact:
    """Scorecard figures before and after crediting confirmed candidates (both judges; each judge; humans)."""
    thresholds = Thresholds(correct=audit.correct, partial=audit.partial, grounding=audit.grounding)
    assert audit.run is not None  # an audit's impact is read once it has its run
    pairs = run_pair_table(
        run=audit.run, contract_ids=sample_contract_ids(sample=audit.sample), matcher=audit.matcher
    )
    index = {int(eid): i for i, eid in enumerate(pairs.extraction_ids)}

    def graded(selected: Sequence[CandidateRow]):
        table = credit_extractions(pairs.table, [index[r.candidate.extraction_id] for r in selected])
        return grade(table, thresholds, replicates=replicates, seed=seed)

    variants: list[tuple[str, str, list[CandidateRow]]] = [("before", "CUAD labels as they are", [])]
    variants.append(("both", "both judges yes (conservative)", [r for r in rows if r.both_yes]))
    for judge in judges:
        picked = [r for r in rows if (v := r.verdicts.get(judge.slot)) is not None and v.verdict]
        variants.append((judge.slot, f"judge {judge.slot.upper()} alone yes (context)", picked))
    human_yes = [r for r in rows if r.human is not None and r.human.value == "yes"]
    if any(r.human is not None and r.human.state != "unresolved" for r in rows):
        variants.append(("humans", "reviewers' resolved yes", human_yes))
    out = []
    for key, label, selected in variants:
        g = graded(selected)
        out.append(ImpactRow(key, label, len(selected), g.overall, g.per_category))
    before, both = out[0], out[1]
    names = [c.name for c in pairs.scope.categories]
    cand_by_cat: dict[str, int] = defaultdict(int)
    yes_by_cat: dict[str, int] = defaultdict(int)
    for r in rows:
        cand_by_cat[r.category] += 1
        yes_by_cat[r.category] += int(r.both_yes)
    per_category = [
        CategoryImpact(name, cand_by_cat[name], yes_by_cat[name], before.per_category[k], both.per_category[k])
        for k, name in enumerate(names)
        if cand_by_cat[name]
    ]
    return AuditImpact(out, per_category, thresholds, replicates, seed, pairs.table.n_contracts)


@dataclass
class AuditReport:
    audit: Audit
    judges: list[AuditJudge]
    rows: list[CandidateRow]
    agreement: AuditAgreement | None
    impact: AuditImpact | None
    pool: PoolRef | None
    ruled: dict[str, int] = field(default_factory=dict)

    @property
    def total_rulings(self) -> int:
        return 2 * self.audit.n_candidates

    @property
    def done_rulings(self) -> int:
        return sum(self.ruled.values())

    @property
    def percent(self) -> int:
        return int(100 * self.done_rulings / self.total_rulings) if self.total_rulings else 0


def audit_progress(*, audit: Audit) -> dict[str, int]:
    """Verdicts written so far, per judge slot."""
    counts = dict.fromkeys(("a", "b"), 0)
    for slot in AuditVerdict.objects.filter(judge__audit=audit).values_list("judge__slot", flat=True):
        counts[slot] = counts.get(slot, 0) + 1
    return counts


def audit_report(*, audit: Audit, with_impact: bool = True) -> AuditReport:
    """Everything the audit page, its exports and its API show."""
    judges = list(audit.judges.order_by("slot"))
    by_slot = {j.pk: j.slot for j in judges}
    verdicts: dict[int, dict[str, AuditVerdict]] = defaultdict(dict)
    for v in AuditVerdict.objects.filter(judge__audit=audit):
        verdicts[v.candidate_id][by_slot[v.judge_id]] = v
    humans = audit_human_labels(audit=audit)
    names = dict(Category.objects.values_list("id", "name"))
    candidates = list(audit.candidates.select_related("contract").order_by("position"))
    rows = [
        CandidateRow(
            candidate=c,
            contract=c.contract.title,
            category=names[c.category_id],
            verdicts={j.slot: verdicts[c.pk].get(j.slot) for j in judges},
            human=humans.get(c.pk),
        )
        for c in candidates
    ]
    agreement = None
    if len(judges) == 2 and rows:
        a, b = judges[0].slot, judges[1].slot

        def verdict_of(row: CandidateRow, slot: str) -> bool | None:
            v = row.verdicts.get(slot)
            return None if v is None else v.verdict

        agreement = audit_agreement(
            verdicts_a=[verdict_of(r, a) for r in rows], verdicts_b=[verdict_of(r, b) for r in rows],
            contracts=[str(r.candidate.contract_id) for r in rows],
        )
    impact = audit_impact(audit=audit, rows=rows, judges=judges) if with_impact and audit.run_id else None
    ruled = {j.slot: sum(1 for r in rows if r.verdicts.get(j.slot) is not None) for j in judges}
    return AuditReport(audit, judges, rows, agreement, impact, audit_pool(audit=audit), ruled)


def audit_list() -> list[Audit]:
    return list(Audit.objects.select_related("run", "sample").order_by("-created_at", "-id"))
