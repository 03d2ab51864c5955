"""Reads of stored runs: a run's pair scores as a flat table, its point figures, the runs and jobs lists.

A run's pair scores never change once imported, so the table of a run on a
sample is read once and kept in a small in-process cache keyed by run, sample
and matcher: a threshold, matcher or run change is then pure array work in
``scoring.cuad.grading``.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from grading.dataset.models import Category, Contract, Sample, Span
from grading.dataset.selectors import dataset_categories, sample_scope, sample_scope_clear
from grading.runs.models import ConsoleJob, Extraction, ExtractionRun
from scoring.cuad.grading import PairTable, Thresholds, classify, contract_tallies, micro_ratios
from scoring.cuad.matching import MATCHERS


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


# ---------------------------------------------------------------------------
# Stored pair scores, cached

_cache: OrderedDict[tuple, StoredPairs] = OrderedDict()
_cache_lock = threading.Lock()
_CACHE_SIZE = 32


def stored_pairs(*, run: ExtractionRun, sample: Sample, matcher: str) -> StoredPairs:
    """``run_pair_table`` for the sample's contracts, cached (pair scores are immutable once stored)."""
    key = (run.pk, run.content_sha256, sample.pk, sample.manifest_sha256, matcher)
    with _cache_lock:
        hit = _cache.get(key)
        if hit is not None:
            _cache.move_to_end(key)
            return hit
    pairs = run_pair_table(run=run, contract_ids=list(sample_scope(sample=sample)), matcher=matcher)
    with _cache_lock:
        _cache[key] = pairs
        while len(_cache) > _CACHE_SIZE:
            _cache.popitem(last=False)
    return pairs


def cache_clear() -> None:
    with _cache_lock:
        _cache.clear()
    sample_scope_clear()


def point_figures(pairs: StoredPairs, thresholds: Thresholds) -> dict[str, float]:
    """Micro precision, recall and F1 of the table at ``thresholds`` (point estimates, no bootstrap)."""
    classified = classify(pairs.table, thresholds)
    total = contract_tallies(pairs.table, classified).sum(axis=(0, 1))
    p, r, f = micro_ratios(total)
    return {"precision": float(p), "recall": float(r), "f1": float(f)}


# ---------------------------------------------------------------------------
# Runs and jobs


@dataclass(frozen=True)
class RunSummary:
    run: ExtractionRun
    headline: dict[str, float] | None  # point P/R/F1 on the sample at default thresholds
    in_sample: int
    job: ConsoleJob | None

    @property
    def heuristic(self) -> bool:
        return "heuristic" in self.run.model


def runs_list(*, sample: Sample | None) -> list[RunSummary]:
    if sample is None:
        return []
    jobs = {j.run_id: j for j in ConsoleJob.objects.filter(run__isnull=False).order_by("created_at")}
    out = []
    for run in ExtractionRun.objects.filter(dataset=sample.dataset_id).order_by("-created_at", "-id"):
        pairs = stored_pairs(run=run, sample=sample, matcher="hungarian")
        headline = point_figures(pairs, Thresholds()) if len(pairs.extraction_ids) else None
        out.append(RunSummary(run, headline, len(pairs.extraction_ids), jobs.get(run.pk)))
    return out


def jobs_list(*, limit: int = 20) -> list[ConsoleJob]:
    return list(ConsoleJob.objects.select_related("run", "sample").order_by("-created_at", "-id")[:limit])
