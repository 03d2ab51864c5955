"""Reads for the CUAD grader: querysets become dataclasses and arrays before the pure scoring library sees them."""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from grading.dataset.models import Category, Contract, CuadDataset, Sample, Span
from grading.runs.models import Extraction, ExtractionRun
from scoring.cuad.grading import (
    DEFAULT_REPLICATES,
    OUTCOME_NAMES,
    Figures,
    PairTable,
    Thresholds,
    classify,
    grade,
)
from scoring.cuad.matching import MATCHERS
from scoring.cuad.sampler import Candidate


class ScopeError(ValueError):
    """A manifest or contract scope does not fit the loaded dataset."""


def dataset_current() -> CuadDataset | None:
    """The most recently loaded CUAD dataset."""
    return CuadDataset.objects.order_by("-loaded_at", "-id").first()


def dataset_categories(*, dataset: CuadDataset) -> list[Category]:
    return list(dataset.categories.order_by("position", "name"))


def contract_titles(*, dataset: CuadDataset) -> set[str]:
    return set(Contract.objects.filter(dataset=dataset).values_list("title", flat=True))


def sample_candidates(*, dataset: CuadDataset) -> list[Candidate]:
    """Each contract's title, text length and the clause types it has at least one span of."""
    names = dict(Category.objects.values_list("id", "name"))
    types: dict[int, set[str]] = {}
    for contract_id, category_id in (
        Span.objects.filter(contract__dataset=dataset).values_list("contract_id", "category_id").distinct()
    ):
        types.setdefault(contract_id, set()).add(names[category_id])
    return [
        Candidate(title=title, length=length, types=frozenset(types.get(pk, ())))
        for pk, title, length in Contract.objects.filter(dataset=dataset).values_list("id", "title", "length")
    ]


def sample_find(*, dataset: CuadDataset, n: int, min_per_type: int, seed: int) -> Sample | None:
    return Sample.objects.filter(dataset=dataset, n=n, min_per_type=min_per_type, seed=seed).first()


def sample_contract_ids(*, sample: Sample) -> list[int]:
    return list(sample.members.order_by("position").values_list("contract_id", flat=True))


def manifest_scope(*, manifest: dict | str | bytes) -> tuple[CuadDataset, list[int]]:
    """The dataset a manifest was drawn from (by its sha256) and its contracts' ids, in manifest order."""
    if not isinstance(manifest, dict):
        try:
            manifest = json.loads(manifest)
        except json.JSONDecodeError as exc:
            raise ScopeError(f"manifest: not valid JSON ({exc.msg} at line {exc.lineno})") from exc
    try:
        sha = manifest["source"]["sha256"]
        titles = [c["title"] for c in manifest["contracts"]]
    except (KeyError, TypeError) as exc:
        raise ScopeError(f"manifest: missing field {exc} (expected source.sha256 and contracts[].title)") from exc
    dataset = CuadDataset.objects.filter(sha256=sha).first()
    if dataset is None:
        raise ScopeError(f"manifest: its CUAD file (sha256 {sha}) is not loaded; run load_cuad on that file")
    ids = dict(Contract.objects.filter(dataset=dataset, title__in=titles).values_list("title", "id"))
    unknown = [t for t in titles if t not in ids]
    if unknown:
        raise ScopeError(f"manifest: unknown contract(s) {unknown[:5]}")
    return dataset, [ids[t] for t in titles]


@dataclass(frozen=True)
class GradingScope:
    """Graded contracts (dense index = position in ``contract_ids``) and categories (dense index = position)."""

    contract_ids: list[int]
    categories: list[Category]


def _scope(run: ExtractionRun, contract_ids: Sequence[int] | None) -> GradingScope:
    if contract_ids is None:
        contract_ids = list(Contract.objects.filter(dataset=run.dataset_id).values_list("id", flat=True))
    return GradingScope(list(contract_ids), dataset_categories(dataset=run.dataset))


@dataclass(frozen=True)
class StoredPairs:
    table: PairTable
    scope: GradingScope
    extraction_ids: np.ndarray  # Extraction pk per table row
    span_ids: np.ndarray  # Span pk per span index


def run_pair_table(
    *, run: ExtractionRun, contract_ids: Sequence[int] | None = None, matcher: str = "hungarian"
) -> StoredPairs:
    """The run's stored pair scores for one matcher as a flat table, with the ids behind each row.

    Gold is every span of the scoped contracts; extractions for contracts
    outside the scope are left out.
    """
    if matcher not in MATCHERS:
        raise ValueError(f"unknown matcher {matcher!r}; expected one of {', '.join(MATCHERS)}")
    scope = _scope(run, contract_ids)
    contract_index = {pk: i for i, pk in enumerate(scope.contract_ids)}
    category_index = {c.pk: i for i, c in enumerate(scope.categories)}
    in_scope = set(contract_index)

    span_rows = [
        r
        for r in Span.objects.filter(contract__dataset=run.dataset_id)
        .order_by("contract_id", "category_id", "answer_index")
        .values_list("id", "contract_id", "category_id")
        if r[1] in in_scope
    ]
    span_index = {r[0]: i for i, r in enumerate(span_rows)}
    ext_rows = [
        r
        for r in Extraction.objects.filter(run=run)
        .order_by("position")
        .values_list("id", "contract_id", "category_id", f"{matcher}_f1", f"{matcher}_span_id", "grounding")
        if r[1] in in_scope
    ]
    table = PairTable(
        ext_contract=np.fromiter((contract_index[r[1]] for r in ext_rows), dtype=np.int64, count=len(ext_rows)),
        ext_category=np.fromiter((category_index[r[2]] for r in ext_rows), dtype=np.int64, count=len(ext_rows)),
        ext_f1=np.fromiter((r[3] for r in ext_rows), dtype=float, count=len(ext_rows)),
        ext_grounding=np.fromiter((r[5] for r in ext_rows), dtype=float, count=len(ext_rows)),
        ext_span=np.fromiter(
            (span_index[r[4]] if r[4] is not None else -1 for r in ext_rows), dtype=np.int64, count=len(ext_rows)
        ),
        span_contract=np.fromiter((contract_index[r[1]] for r in span_rows), dtype=np.int64, count=len(span_rows)),
        span_category=np.fromiter((category_index[r[2]] for r in span_rows), dtype=np.int64, count=len(span_rows)),
        n_contracts=len(scope.contract_ids),
        n_categories=len(scope.categories),
    )
    return StoredPairs(
        table=table,
        scope=scope,
        extraction_ids=np.fromiter((r[0] for r in ext_rows), dtype=np.int64, count=len(ext_rows)),
        span_ids=np.fromiter((r[0] for r in span_rows), dtype=np.int64, count=len(span_rows)),
    )


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
