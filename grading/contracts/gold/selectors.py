"""Reading gold sets and the state of a set's clause labels (agreement, open disagreements) for its gold page."""

from __future__ import annotations

from dataclasses import dataclass

from django.db.models import QuerySet

from grading.contracts.gold.agreement import ClauseAgreement, clause_agreement
from grading.contracts.gold.freeze import clause_pools
from grading.contracts.gold.models import GoldSet
from grading.contracts.gold.resolution import INCOMPLETE, OPEN, ClauseResolution, clause_pool_resolutions
from grading.contracts.models import ContractSet
from grading.contracts.services import taxonomy_current
from reviewapp.review.pools.refs import PoolRef


class GoldSetMissing(LookupError):
    pass


def gold_sets(*, contract_set: ContractSet) -> QuerySet[GoldSet]:
    """The set's gold set versions, newest first (without their content)."""
    return GoldSet.objects.filter(contract_set=contract_set).defer("content", "provenance").order_by("-version")


def gold_set_get(*, contract_set: ContractSet, version: int | None = None) -> GoldSet:
    """One version (the latest when ``version`` is None); ``GoldSetMissing`` says what there is instead."""
    rows = GoldSet.objects.filter(contract_set=contract_set)
    found = rows.order_by("-version").first() if version is None else rows.filter(version=version).first()
    if found is None:
        versions = sorted(rows.values_list("version", flat=True))
        have = f"its versions are {', '.join(map(str, versions))}" if versions else "nothing is frozen yet"
        wanted = "a gold set" if version is None else f"gold set version {version}"
        raise GoldSetMissing(f"set {contract_set.name!r} has no {wanted}: {have}")
    return found


def gold_set_by_name(*, name: str, version: int | None = None) -> GoldSet:
    contract_set = ContractSet.objects.filter(name=name).first()
    if contract_set is None:
        known = list(ContractSet.objects.order_by("name").values_list("name", flat=True)[:20])
        raise GoldSetMissing(f"no contract set named {name!r}" + (f" (sets: {', '.join(known)})" if known else ""))
    return gold_set_get(contract_set=contract_set, version=version)


@dataclass(frozen=True)
class PoolState:
    pool: PoolRef
    rows: list[ClauseResolution]
    agreement: list[ClauseAgreement]

    @property
    def open_rows(self) -> list[ClauseResolution]:
        return [r for r in self.rows if r.state == OPEN]

    def count(self, state: str) -> int:
        return sum(1 for r in self.rows if r.state == state)

    @property
    def incomplete(self) -> int:
        return self.count(INCOMPLETE)


def labelling_state(*, contract_set: ContractSet) -> list[PoolState]:
    """Each clause pool of the set on its current taxonomy, newest first: its items resolved and its agreement."""
    taxonomy = taxonomy_current(contract_set)
    if taxonomy is None:
        return []
    order = [row["name"] for row in taxonomy.categories]
    out = []
    for pool in clause_pools(contract_set=contract_set, taxonomy_version=taxonomy.version):
        resolved = clause_pool_resolutions(pool=pool)
        declared = (pool.declared_params or {}).get("categories") or order
        categories = [c for c in order if c in declared]
        out.append(PoolState(pool=pool, rows=resolved.rows,
                             agreement=clause_agreement(resolutions=resolved.rows, texts=resolved.texts,
                                                        categories=categories)))
    return out
