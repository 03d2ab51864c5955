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
from functools import lru_cache

import numpy as np

from grading.dataset.models import Category, Contract, Sample, Span
from grading.dataset.selectors import ScopeError, dataset_categories, sample_scope, sample_scope_clear
from grading.runs.models import ConsoleJob, Extraction, ExtractionRun
from scoring.cuad.grading import DEFAULT_REPLICATES, PairTable, Thresholds, classify, contract_tallies, micro_ratios
from scoring.cuad.matching import MATCHERS
from scoring.cuad.paper_metric import PaperResult, Question, paper_metric

_cache_lock = threading.Lock()
_scope_ids: dict[tuple[int, str], frozenset[int] | None] = {}


@dataclass(frozen=True)
class GradingScope:
    """Graded contracts (dense index = position in ``contract_ids``) and categories (dense index = position)."""

    contract_ids: list[int]
    categories: list[Category]


def run_scope_ids(*, run: ExtractionRun) -> frozenset[int] | None:
    """The contracts the run declared it attempted, or None when it declared none (then: the whole sample)."""
    key = (run.pk, run.content_sha256)
    with _cache_lock:
        if key in _scope_ids:
            return _scope_ids[key]
    ids = frozenset(ExtractionRun.scope.through.objects.filter(extractionrun_id=run.pk).values_list(
        "contract_id", flat=True))
    found = ids or None
    with _cache_lock:
        _scope_ids[key] = found
    return found


def _scope(run: ExtractionRun, contract_ids: Sequence[int] | None) -> GradingScope:
    """The graded contracts: those asked for (default: the whole dataset) that the run attempted."""
    if contract_ids is None:
        contract_ids = list(Contract.objects.filter(dataset=run.dataset_id).values_list("id", flat=True))
    declared = run_scope_ids(run=run)
    if declared is not None:
        contract_ids = [pk for pk in contract_ids if pk in declared]
        if not contract_ids:
            raise ScopeError(
                f"run {run.pk}: none of the {len(declared)} contracts it attempted is among the contracts graded"
            )
    return GradingScope(list(contract_ids), dataset_categories(dataset=run.dataset))


@dataclass(frozen=True)
class RunScope:
    """What a run covers on a sample: the graded contracts (sample ∩ what the run attempted)."""

    declared: bool  # the run named the contracts it attempted (a launched job, or the file's "contracts")
    contract_ids: tuple[int, ...]  # graded contracts, in manifest order
    sample_size: int
    sample_seed: int
    outside: int  # declared contracts outside the sample (not graded)

    @property
    def n(self) -> int:
        return len(self.contract_ids)

    @property
    def full(self) -> bool:
        return self.n == self.sample_size

    def caption(self) -> str:
        """``5 of 100 contracts of the seed-42 sample``."""
        return f"{self.n} of {self.sample_size} contracts of the seed-{self.sample_seed} sample"

    def note(self) -> str:
        """How the scope was set, for the page under the caption."""
        if not self.declared:
            return (
                "The run declares no contract list, so it is scoped to the whole sample: "
                "every CUAD span of a contract it has no extraction for counts as missed."
            )
        text = "Scope as declared by the run (the contracts it attempted); misses are counted on those only."
        if self.outside:
            plural = "s" if self.outside != 1 else ""
            text += f" {self.outside} declared contract{plural} outside the sample not graded."
        return text

    def as_dict(self) -> dict:
        return {
            "declared": self.declared,
            "contracts": self.n,
            "sample_contracts": self.sample_size,
            "sample_seed": self.sample_seed,
            "declared_outside_sample": self.outside,
            "full": self.full,
            "caption": self.caption(),
        }


def run_scope(*, run: ExtractionRun, sample: Sample) -> RunScope:
    sample_ids = sample_scope(sample=sample)
    declared = run_scope_ids(run=run)
    if declared is None:
        return RunScope(False, tuple(sample_ids), len(sample_ids), sample.seed, 0)
    graded = tuple(pk for pk in sample_ids if pk in declared)
    return RunScope(True, graded, len(sample_ids), sample.seed, len(declared) - len(graded))


def run_default(*, sample: Sample) -> ExtractionRun | None:
    """The most recent complete run of the whole sample; None when there is none (the page then asks to choose).

    Complete: its declared scope (a launched job's contracts, or the file's
    "contracts") covers the whole sample; or it declares none and has an
    extraction for every contract of the sample. A file that declares nothing
    and touches a few contracts is somebody's test, not an evaluation: it is
    shown when chosen, never as everyone's default.
    """
    sample_ids = sample_scope(sample=sample)
    for run in ExtractionRun.objects.filter(dataset=sample.dataset_id).order_by("-created_at", "-id"):
        scope = run_scope(run=run, sample=sample)
        if not scope.full:
            continue
        if scope.declared:
            return run
        touched = (
            Extraction.objects.filter(run=run, contract_id__in=sample_ids).values("contract_id").distinct().count()
        )
        if touched == len(sample_ids):
            return run
    return None


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
_CACHE_SIZE = 32


def stored_pairs(
    *, run: ExtractionRun, sample: Sample, matcher: str, within: tuple[int, ...] | None = None
) -> StoredPairs:
    """``run_pair_table`` for the sample's contracts the run attempted, cached (pair scores never change).

    ``within`` narrows further (a comparison of runs with different scopes grades each on the common contracts).
    """
    key = (run.pk, run.content_sha256, sample.pk, sample.manifest_sha256, matcher, within)
    with _cache_lock:
        hit = _cache.get(key)
        if hit is not None:
            _cache.move_to_end(key)
            return hit
    ids = sample_scope(sample=sample)
    if within is not None:
        keep = set(within)
        ids = tuple(pk for pk in ids if pk in keep)
    pairs = run_pair_table(run=run, contract_ids=list(ids), matcher=matcher)
    with _cache_lock:
        _cache[key] = pairs
        while len(_cache) > _CACHE_SIZE:
            _cache.popitem(last=False)
    return pairs


def cache_clear() -> None:
    with _cache_lock:
        _cache.clear()
        _scope_ids.clear()
    sample_scope_clear()
    _paper_metric_cached.cache_clear()


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
    headline: dict[str, float] | None  # point P/R/F1 on the run's scope in the sample at default thresholds
    in_sample: int
    job: ConsoleJob | None
    scope: RunScope

    @property
    def heuristic(self) -> bool:
        return "heuristic" in self.run.model


def runs_list(*, sample: Sample | None) -> list[RunSummary]:
    if sample is None:
        return []
    jobs = {j.run_id: j for j in ConsoleJob.objects.filter(run__isnull=False).order_by("created_at")}
    out = []
    for run in ExtractionRun.objects.filter(dataset=sample.dataset_id).order_by("-created_at", "-id"):
        scope = run_scope(run=run, sample=sample)
        if not scope.n:  # it attempted no contract of this sample: nothing to grade here
            out.append(RunSummary(run, None, 0, jobs.get(run.pk), scope))
            continue
        pairs = stored_pairs(run=run, sample=sample, matcher="hungarian")
        headline = point_figures(pairs, Thresholds()) if len(pairs.extraction_ids) else None
        out.append(RunSummary(run, headline, len(pairs.extraction_ids), jobs.get(run.pk), scope))
    return out


def jobs_list(*, limit: int = 20) -> list[ConsoleJob]:
    return list(ConsoleJob.objects.select_related("run", "sample").order_by("-created_at", "-id")[:limit])


def run_has_confidences(*, run: ExtractionRun) -> bool:
    """Whether the run gave a confidence per extraction (all of them or none, as the run format requires)."""
    return Extraction.objects.filter(run=run, confidence__isnull=False).exists()


def run_paper_questions(*, run: ExtractionRun, contract_ids: Sequence[int] | None = None) -> list[Question] | None:
    """Every (contract, category) of the run's scope as a CUAD question, for CUAD's own metric; None without
    confidences.

    Answers are the gold span texts in CUAD's order (a text given twice stays twice, as in CUAD's file);
    predictions are the run's extraction texts with their confidences, in run order.
    """
    if not run_has_confidences(run=run):
        return None
    scope = _scope(run, contract_ids)
    in_scope = set(scope.contract_ids)
    titles = dict(Contract.objects.filter(pk__in=in_scope).values_list("id", "title"))
    category_names = {c.pk: c.name for c in scope.categories}
    answers: dict[tuple[int, int], list[str]] = {}
    for contract_id, category_id, text in (
        Span.objects.filter(contract_id__in=in_scope).order_by("contract_id", "category_id", "answer_index")
        .values_list("contract_id", "category_id", "text")
    ):
        answers.setdefault((contract_id, category_id), []).append(text)
    predictions: dict[tuple[int, int], list[tuple[str, float]]] = {}
    for contract_id, category_id, text, confidence in (
        Extraction.objects.filter(run=run, contract_id__in=in_scope).order_by("position")
        .values_list("contract_id", "category_id", "text", "confidence")
    ):
        assert confidence is not None  # a run gives confidences on every extraction or on none (run_format)
        predictions.setdefault((contract_id, category_id), []).append((text, confidence))
    return [
        Question(
            contract=titles[contract_id],
            category=category_names[category_id],
            answers=tuple(answers.get((contract_id, category_id), ())),
            predictions=tuple(predictions.get((contract_id, category_id), ())),
        )
        for contract_id in scope.contract_ids
        for category_id in category_names
    ]


def run_paper_metric(
    *, run: ExtractionRun, contract_ids: Sequence[int] | None = None, seed: int = 0,
    replicates: int = DEFAULT_REPLICATES,
) -> PaperResult | None:
    """CUAD's own AUPR and precision at 80%/90% recall of a run with confidences (None without), contract bootstrap.

    It depends on neither the thresholds nor the matcher, and a run never changes once stored: the console's
    pages, which regrade on every move of a slider, read it from a small in-process cache.
    """
    ids = None if contract_ids is None else tuple(contract_ids)
    return _paper_metric_cached(run, run.content_sha256, ids, seed, replicates)


@lru_cache(maxsize=32)
def _paper_metric_cached(run: ExtractionRun, content_sha256: str, contract_ids: tuple[int, ...] | None, seed: int,
                         replicates: int) -> PaperResult | None:
    questions = run_paper_questions(run=run, contract_ids=contract_ids)
    if questions is None:
        return None
    return paper_metric(questions, replicates=replicates, seed=seed)
