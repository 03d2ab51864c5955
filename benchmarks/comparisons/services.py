"""Declare a comparison: the systems to be compared on a suite's held-out split, fixed before any is scored there.

Refused, with nothing written, when a system was already scored on that split (its held-out figures may have
been seen, so it cannot be planned before them), when it is in another declaration of the split, or when the
systems are not of one suite. The check and the insert run in one transaction holding the suite's row lock,
the lock every held-out computation takes before it appends to the ledger (``exposure.heldout_lock``), so a
computation cannot slip in between the check and the declaration.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Any

from django.db import transaction
from django.db.models import Count, Min
from django.utils import timezone

from benchmarks.comparisons.models import DeclaredComparison
from benchmarks.comparisons.selectors import comparisons_of
from benchmarks.reports.exposure import Key, configuration_key, configuration_of, heldout_lock
from benchmarks.reports.figures import PRIMARY_SPLIT, SPLITS
from benchmarks.reports.leaderboard import FUSION
from benchmarks.reports.models import HeldoutExposure
from benchmarks.reports.selectors import run_metas
from benchmarks.rerank.models import RerankRun
from benchmarks.retrieval.models import RetrievalRun, RunStatus
from benchmarks.suites.models import QueryKind, SuiteQuery
from reviewapp.core.auth.roles import LAUNCH_RUNS
from reviewapp.core.records.hashing import sha256_json

MIN_SYSTEMS = 2

# One system: a retrieval run's keyword order (rerank None), one of its rerank runs, or (third element True) the
# hybrid of that rerank run: reciprocal rank fusion of the keyword order and the rerank run's order.
SystemChoice = tuple[RetrievalRun, RerankRun | None] | tuple[RetrievalRun, RerankRun | None, bool]


class ComparisonError(ValueError):
    """The comparison cannot be declared; the message says why and names the system."""


@dataclass(frozen=True)
class PlannedSystem:
    key: str  # "retrieval-3" (keyword order alone) / "rerank-5" / "hybrid-5"
    label: str
    retrieval_run: RetrievalRun
    rerank_run: RerankRun | None
    configuration: dict[str, Any]
    hashes: Key
    hybrid: bool = False


def system_label(retrieval_run: RetrievalRun, rerank_run: RerankRun | None, hybrid: bool = False) -> str:
    if rerank_run is None:
        return (f"keyword order of retrieval run #{retrieval_run.pk} ({retrieval_run.configuration}, "
                f"k={retrieval_run.k})")
    own = (f"rerank #{rerank_run.pk}: {rerank_run.provider} {rerank_run.model_id}, question "
           f"{rerank_run.question_version} (retrieval run #{retrieval_run.pk})")
    if hybrid:
        return f"hybrid of {own}: RRF of the {retrieval_run.configuration} order and the rerank order"
    return own


def _planned(retrieval_run: RetrievalRun, rerank_run: RerankRun | None, hybrid: bool = False) -> PlannedSystem:
    retrieval_meta, rerank_meta = run_metas(retrieval_run=retrieval_run, rerank_run=rerank_run)
    if hybrid and rerank_meta is not None:
        rerank_meta = replace(rerank_meta, fusion=FUSION)
    configuration = configuration_of(retrieval_meta, rerank_meta)
    key = (f"retrieval-{retrieval_run.pk}" if rerank_run is None
           else f"{'hybrid' if hybrid else 'rerank'}-{rerank_run.pk}")
    return PlannedSystem(key=key, label=system_label(retrieval_run, rerank_run, hybrid),
                         retrieval_run=retrieval_run, rerank_run=rerank_run, configuration=configuration,
                         hashes=configuration_key(configuration), hybrid=hybrid)


def comparison_systems(systems: Sequence[SystemChoice]) -> list[PlannedSystem]:
    """The systems as the ledger will key them; raises ComparisonError for runs that do not fit together.

    Any systems of one suite fit: keyword orders of several retrieval runs (each configuration: bm25 keyword
    configurations, rm3, qld, ...), rerank runs of any of them and their hybrids.
    """
    planned: list[PlannedSystem] = []
    for choice in systems:
        retrieval_run, rerank_run = choice[0], choice[1]
        hybrid = bool(choice[2]) if len(choice) > 2 else False
        if rerank_run is not None and rerank_run.retrieval_run_id != retrieval_run.pk:
            raise ComparisonError(f"rerank run #{rerank_run.pk} reranks retrieval run #{rerank_run.retrieval_run_id},"
                                  f" not #{retrieval_run.pk}")
        if hybrid and rerank_run is None:
            raise ComparisonError(f"a hybrid fuses keyword order with a rerank run: name the rerank run of retrieval "
                                  f"run #{retrieval_run.pk} it is made of")
        planned.append(_planned(retrieval_run, rerank_run, hybrid))
    if len({p.key for p in planned}) != len(planned):
        raise ComparisonError("a system is named twice")
    suites = {p.retrieval_run.suite_id for p in planned}
    if len(suites) > 1:
        raise ComparisonError(f"the systems are runs of {len(suites)} different suites; a comparison is on one "
                              "suite's held-out split")
    by_hashes: dict[Key, PlannedSystem] = {}
    for p in planned:
        twin = by_hashes.setdefault(p.hashes, p)
        if twin is not p:
            raise ComparisonError(f"{twin.label} and {p.label} have the same configuration (the ledger cannot tell "
                                  "them apart): declare one of them")
    if len(planned) < MIN_SYSTEMS:
        raise ComparisonError(f"a comparison needs at least {MIN_SYSTEMS} systems; got {len(planned)}")
    return planned


def _check_split(suite_id: int, split: str) -> None:
    if split not in dict(SPLITS):
        raise ComparisonError(f"no split {split!r}; one of {', '.join(dict(SPLITS))}")
    if split != PRIMARY_SPLIT:
        raise ComparisonError(f"only the {PRIMARY_SPLIT} split is ledgered: {split} figures are never recorded and "
                              "never warn, so there is nothing to plan on it")
    if not SuiteQuery.objects.filter(suite_id=suite_id, split=split, kind=QueryKind.RANKING).exists():
        raise ComparisonError(f"this suite has no {split} ranking queries: there are no held-out figures to plan")


def comparison_declare(*, systems: Sequence[SystemChoice], user: Any, via: str,
                       split: str = PRIMARY_SPLIT) -> DeclaredComparison:
    """Declare ``systems`` (each a retrieval run alone, with one of its rerank runs, or that rerank run's hybrid)
    one comparison on ``split``.

    Raises ComparisonError, writing nothing, for a system already scored on the split or already declared.
    """
    if not getattr(user, "is_authenticated", False) or not user.has_perm(LAUNCH_RUNS):
        raise ComparisonError("only an admin (who may launch runs) declares a comparison")
    planned = comparison_systems(systems)
    suite = planned[0].retrieval_run.suite
    _check_split(suite.pk, split)
    with transaction.atomic():
        heldout_lock(suite.pk)
        seen = {(row["retrieval_sha256"], row["rerank_sha256"]): row for row in HeldoutExposure.objects.filter(
            suite_id=suite.pk, split=split).values("retrieval_sha256", "rerank_sha256").annotate(
            first=Min("scored_at"), times=Count("id"))}
        scored = [(p, seen[p.hashes]) for p in planned if p.hashes in seen]
        if scored:
            named = "; ".join(f"{p.label} (first on {row['first']:%Y-%m-%d %H:%M} UTC, {row['times']} "
                              f"computation{'s' * (row['times'] != 1)})" for p, row in scored)
            raise ComparisonError(
                f"already scored on the {split} split of {suite.name} v{suite.version}, so its held-out figures "
                f"were seen and it cannot be planned before them: {named}. Declare only systems not yet scored "
                "there, or freeze a fresh held-out suite.")
        for declaration in comparisons_of(suite_id=suite.pk, split=split):
            both = [p.label for p in planned if p.hashes in declaration.keys]
            if both:
                raise ComparisonError(f"already in the comparison declared by {declaration.declared_by} on "
                                      f"{declaration.declared_at:%Y-%m-%d %H:%M} UTC (#{declaration.pk}): "
                                      f"{'; '.join(both)}")
        declared_at = timezone.now()
        body = [{"key": p.key, "label": p.label, "retrieval_sha256": p.hashes[0], "rerank_sha256": p.hashes[1],
                 "configuration": p.configuration, "retrieval_run_id": p.retrieval_run.pk,
                 "rerank_run_id": p.rerank_run.pk if p.rerank_run is not None else None, "hybrid": p.hybrid}
                for p in planned]
        sha = sha256_json({
            "suite": {"name": suite.name, "version": suite.version, "sha256": suite.sha256}, "split": split,
            # The set of configurations: in hash order, so the order they were listed in does not matter.
            "systems": [p.configuration for p in sorted(planned, key=lambda p: p.hashes)],
            "declared_by": user.get_username(), "declared_at": declared_at.isoformat()})
        return DeclaredComparison.objects.create(suite=suite, split=split, systems=body, sha256=sha,
                                                 declared_by=user, declared_via=via, declared_at=declared_at)


@dataclass(frozen=True)
class PlanRow:
    """One system a retrieval run offers for a declaration, and whether it can still be planned."""

    system: PlannedSystem
    first_scored: Any  # datetime of its first held-out computation, or None: not yet seen
    declared_in: Any  # the Declaration it is already in, or None

    @property
    def refusal(self) -> str:
        if self.first_scored is not None:
            return f"already scored on the held-out split ({self.first_scored:%Y-%m-%d %H:%M} UTC): seen"
        if self.declared_in is not None:
            d = self.declared_in
            return f"already declared by {d.declared_by} on {d.declared_at:%Y-%m-%d} (#{d.pk})"
        return ""


def comparison_plan(*, retrieval_run: RetrievalRun) -> list[PlanRow]:
    """Every system of ``retrieval_run``'s suite, with what would refuse declaring it: the keyword order of each
    finished retrieval run (``retrieval_run`` first), each of its rerank runs and each rerank run's hybrid."""
    others = (RetrievalRun.objects.filter(suite_id=retrieval_run.suite_id, status=RunStatus.DONE)
              .exclude(pk=retrieval_run.pk).select_related("suite").order_by("id"))
    planned = []
    for run in [retrieval_run, *others]:
        planned.append(_planned(run, None))
        for rerank in run.rerank_runs.order_by("id"):
            planned += [_planned(run, rerank), _planned(run, rerank, hybrid=True)]
    first = {(row["retrieval_sha256"], row["rerank_sha256"]): row["first"] for row in HeldoutExposure.objects.filter(
        suite_id=retrieval_run.suite_id, split=PRIMARY_SPLIT).values("retrieval_sha256", "rerank_sha256").annotate(
        first=Min("scored_at"))}
    declarations = comparisons_of(suite_id=retrieval_run.suite_id, split=PRIMARY_SPLIT)
    return [PlanRow(system=p, first_scored=first.get(p.hashes),
                    declared_in=next((d for d in declarations if p.hashes in d.keys), None)) for p in planned]
