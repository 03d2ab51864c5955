"""Freezing a gold set: the resolved clause labels of a contract set's pools, as one versioned, hashed row.

Which answers: the set's clause pools declared on its current taxonomy (or the one pool given), newest pool
first; for each (contract, category) the first pool whose item is agreed or adjudicated gives the answer
(``resolution``). The categories are those the pools declared, in the taxonomy's order. A contract is in the
gold set only when every one of those categories is resolved for it; the others are listed in ``left_out``
with the reason per category. Nothing resolved: nothing is frozen (``GoldSetError``).

The content (contracts by title with their text's sha256, per category absent or its spans with offsets and
text) is hashed as canonical JSON; the same content frozen again returns the version that has it.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass
from typing import Any

from django.db import transaction

from grading.contracts.gold.agreement import clause_agreement
from grading.contracts.gold.exports import gold_cuad_json
from grading.contracts.gold.models import GoldSet
from grading.contracts.gold.resolution import (
    ADJUDICATED,
    ADMIN_OWN,
    AGREED,
    PROCEDURE,
    ClauseResolution,
    PoolResolutions,
    clause_pool_resolutions,
)
from grading.contracts.kinds import CONTRACT_CLAUSE_KIND_KEY, PRESENT
from grading.contracts.models import ContractSet
from grading.contracts.services import taxonomy_current
from grading.dataset.cuad_file import CuadFileError
from grading.dataset.models import CuadDataset
from grading.dataset.services import CuadLoadError, dataset_load_gold
from reviewapp.core.records.hashing import sha256_json
from reviewapp.review.agreement.exports import pool_judgments_admin_held
from reviewapp.review.pools.refs import PoolRef
from reviewapp.review.pools.selectors import pool_find


class GoldSetError(ValueError):
    pass


@dataclass(frozen=True)
class FreezeResult:
    gold_set: GoldSet
    created: bool  # False: this content was already frozen (the existing version is returned)
    dataset: CuadDataset  # the gold set as a dataset of its own: what runs are graded against


def gold_set_dataset(gold_set: GoldSet) -> CuadDataset:
    """The gold set loaded as a CUAD-layout dataset of its own, from its own export (idempotent on the bytes).

    Loading from the exported bytes, not from the rows, is the point: what is graded is exactly what
    ``export_gold`` writes, so a file handed to someone else grades to the same figures here.
    """
    try:
        return dataset_load_gold(cuad_json=gold_cuad_json(gold_set),
                                 name=f"{gold_set.contract_set.name} gold v{gold_set.version}",
                                 contract_set_id=gold_set.contract_set_id, gold_set_version=gold_set.version)
    except (CuadFileError, CuadLoadError) as error:
        raise GoldSetError(f"gold set v{gold_set.version} could not be loaded for grading: {error}") from None


def clause_pools(*, contract_set: ContractSet, taxonomy_version: int | None = None) -> list[PoolRef]:
    """The set's clause pools (on ``taxonomy_version`` when given), newest first."""
    pools = pool_find(external_ref={"contract_set": contract_set.pk}, kind=CONTRACT_CLAUSE_KIND_KEY)
    if taxonomy_version is not None:
        pools = [p for p in pools if p.external_ref.get("taxonomy_version") == taxonomy_version]
    return sorted(pools, key=lambda p: (p.created_at, p.pk), reverse=True)


def _user_name(user: Any) -> str:
    if user is None:
        return ""
    return str(user.get_username() if hasattr(user, "get_username") else user)[:150]


def _answer(row: ClauseResolution, text: str) -> dict[str, Any]:
    if row.presence != PRESENT:
        return {"present": False, "spans": []}
    return {"present": True, "spans": [{"start": s, "end": e, "text": text[s:e]} for s, e in row.spans]}


def _chosen(resolved: list[PoolResolutions], categories: list[str]) -> tuple[dict, dict]:
    """Per (title, category): the first resolved row over the pools (newest first), else the newest row."""
    chosen: dict[tuple[str, str], tuple[ClauseResolution, PoolResolutions]] = {}
    for pool in resolved:
        for row in pool.rows:
            if row.category not in categories:
                continue
            key = (row.title, row.category)
            held = chosen.get(key)
            if held is None or (not held[0].resolved and row.resolved):
                chosen[key] = (row, pool)
    by_title: dict[str, dict[str, tuple[ClauseResolution, PoolResolutions]]] = defaultdict(dict)
    for (title, category), pair in chosen.items():
        by_title[title][category] = pair
    return chosen, by_title


@transaction.atomic
def gold_set_freeze(*, contract_set: ContractSet | None = None, pool: PoolRef | None = None,
                    user: Any = None) -> FreezeResult:
    """Freeze the resolved labels of ``pool`` (one clause pool) or of every clause pool of ``contract_set``."""
    if (pool is None) == (contract_set is None):
        raise GoldSetError("freeze a contract set or one of its clause pools (exactly one of the two)")
    if pool is not None:
        if pool.kind != CONTRACT_CLAUSE_KIND_KEY:
            raise GoldSetError(f"pool {pool.public_id} is not a clause-labelling pool")
        set_pk = pool.external_ref.get("contract_set")
        if not isinstance(set_pk, int):
            raise GoldSetError(f"pool {pool.public_id} names no contract set")
        contract_set = ContractSet.objects.get(pk=set_pk)
    assert contract_set is not None
    ContractSet.objects.select_for_update().filter(pk=contract_set.pk).first()  # one version number at a time
    taxonomy = taxonomy_current(contract_set)
    if taxonomy is None:
        raise GoldSetError(f"set {contract_set.name!r} has no taxonomy: nothing was labelled")
    pools = [pool] if pool is not None else clause_pools(contract_set=contract_set, taxonomy_version=taxonomy.version)
    if pool is not None and pool.external_ref.get("taxonomy_version") != taxonomy.version:
        raise GoldSetError(f"pool {pool.public_id} labels taxonomy v{pool.external_ref.get('taxonomy_version')}, "
                           f"the set's current taxonomy is v{taxonomy.version}")
    if not pools:
        raise GoldSetError(f"set {contract_set.name!r}: no clause pool on taxonomy v{taxonomy.version}")
    declared = {c for p in pools for c in (p.declared_params or {}).get("categories", [])}
    described = {row["name"]: row for row in taxonomy.categories}
    categories = [name for name in described if name in declared]
    resolved = [clause_pool_resolutions(pool=p) for p in pools]
    chosen, by_title = _chosen(resolved, categories)
    # (pool, item, lawyer) of every answer saved after signing in with credentials an admin once held.
    held = {(p.public_id, item, reviewer) for p in pools for item, reviewer in pool_judgments_admin_held(pool=p)}

    def _entry(row: ClauseResolution) -> dict[str, Any]:
        ruled = row.state in (ADJUDICATED, ADMIN_OWN) and row.ruling is not None
        return {"state": row.state, "procedure": str(PROCEDURE[row.state]), "pool": row.pool_id, "item": row.item_id,
                "lawyers": [a.username for a in row.answers],
                "admin_held": [a.username for a in row.answers if (row.pool_id, row.item_id, a.reviewer_id) in held],
                "adjudicator": row.ruling.adjudicator if ruled and row.ruling else None}

    contracts, provenance, left_out = [], {}, []
    for title in sorted(by_title):
        cells = by_title[title]
        reasons = [f"{c}: {'not in any pool' if c not in cells else (cells[c][0].reason or cells[c][0].state)}"
                   for c in categories if c not in cells or not cells[c][0].resolved]
        if reasons:
            left_out.append({"title": title, "reasons": reasons})
            continue
        first = cells[categories[0]][0]
        contracts.append({
            "title": title, "text_sha256": first.text_sha256,
            "answers": {c: _answer(cells[c][0], cells[c][1].text_of(cells[c][0])) for c in categories},
        })
        lawyers = sorted({(a.reviewer_id, a.username) for c in categories for a in cells[c][0].answers})
        provenance[title] = {
            "labelled_by": [{"id": i, "username": name} for i, name in lawyers],
            "categories": {c: _entry(cells[c][0]) for c in categories},
        }
    if not contracts:
        raise GoldSetError(f"set {contract_set.name!r}: no contract has every category ({len(categories)}) agreed or "
                           f"adjudicated yet ({len(left_out)} left out)")
    content = {
        "taxonomy": {"version": taxonomy.version, "sha256": taxonomy.sha256},
        "categories": [{"name": c, "description": described[c]["description"]} for c in categories],
        "contracts": contracts,
    }
    sha256 = sha256_json(content)
    existing = GoldSet.objects.filter(contract_set=contract_set, sha256=sha256).first()
    if existing is not None:
        return FreezeResult(gold_set=existing, created=False, dataset=gold_set_dataset(existing))
    cells = [pair[0] for pair in chosen.values()]
    included = {c["title"] for c in contracts}
    kept = [row for row in cells if row.title in included]
    texts = {h: t for p in resolved for h, t in p.texts.items()}
    agreement = clause_agreement(resolutions=[r for p in resolved for r in p.rows if r.category in categories],
                                 texts=texts, categories=categories)
    counts = {
        "contracts": len(contracts), "categories": len(categories), "left_out": len(left_out),
        "answers": len(kept), "present": sum(1 for r in kept if r.presence == PRESENT),
        "absent": sum(1 for r in kept if r.presence != PRESENT),
        "spans": sum(len(r.spans) for r in kept if r.presence == PRESENT),
        "agreed": sum(1 for r in kept if r.state == AGREED),
        "adjudicated": sum(1 for r in kept if r.state == ADJUDICATED),
        "admin_own": sum(1 for r in kept if r.state == ADMIN_OWN),
        "by_procedure": {str(PROCEDURE[state]): sum(1 for r in kept if r.state == state)
                         for state in (AGREED, ADJUDICATED, ADMIN_OWN)},
        "admin_held": sum(1 for r in kept for a in r.answers if (r.pool_id, r.item_id, a.reviewer_id) in held),
        "lawyers": len({a.reviewer_id for r in kept for a in r.answers}),
    }
    last = GoldSet.objects.filter(contract_set=contract_set).order_by("-version").first()
    gold_set = GoldSet.objects.create(
        contract_set=contract_set, version=1 if last is None else last.version + 1, sha256=sha256,
        taxonomy_version=taxonomy.version, taxonomy_sha256=taxonomy.sha256, content=content, provenance=provenance,
        left_out=left_out, counts=counts, agreement=[row.as_dict() for row in agreement],
        pools=[p.public_id for p in pools], created_by=_user_name(user),
    )
    # In the freeze's transaction: a gold set that cannot be graded against is not frozen either.
    return FreezeResult(gold_set=gold_set, created=True, dataset=gold_set_dataset(gold_set))
