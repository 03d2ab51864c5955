"""Declaring the blind labelling of a contract set: one review item per (contract, category) of a taxonomy.

The items carry the contract text as it is stored (``ContractText``): the review engine hashes it, so every
label is bound to the exact text the lawyer read, and a gold set frozen later can name the text it is about.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from django.db import transaction

from grading.contracts.kinds import CONTRACT_CLAUSE_KIND_KEY
from grading.contracts.models import ClauseTaxonomy, ContractSet, SetContract
from grading.contracts.services import taxonomy_current
from reviewapp.review.assignment.services import pool_assign
from reviewapp.review.errors import ReviewError
from reviewapp.review.pools.refs import PoolRef
from reviewapp.review.pools.services import pool_create


class LabellingError(ValueError):
    pass


def clause_item_ref(*, member: SetContract, taxonomy: ClauseTaxonomy, category: str) -> dict[str, Any]:
    """The item's job-side reference (never shown to a reviewer): which set, contract, text and category."""
    return {
        "contract_set": member.contract_set_id,
        "set_contract": member.pk,
        "text_sha256": member.text.sha256,
        "taxonomy_version": taxonomy.version,
        "taxonomy_sha256": taxonomy.sha256,
        "category": category,
    }


@transaction.atomic
def clause_pool_declare(
    *,
    contract_set: ContractSet,
    name: str,
    categories: Sequence[str] | None = None,
    titles: Sequence[str] | None = None,
    reviewers_per_item: int = 2,
    instructions: str = "",
    created_by: Any = None,
) -> PoolRef:
    """A review pool (as a ``PoolRef``): the set's contracts x its current taxonomy's categories (None: all of either).
    Contracts excluded from the set (``ContractExclusion``) are never in it.

    Refused, naming what is wrong, when the set has no taxonomy or no contracts, or a category or title asked for
    is not in it. Every item of one category shares a ``query_id`` (the category), and ``doc_id`` is the text's
    hash: qrels and agreement group by them.
    """
    taxonomy = taxonomy_current(contract_set)
    if taxonomy is None:
        raise LabellingError(f"set {contract_set.name!r}: publish a taxonomy first (its clause categories)")
    by_name = {row["name"]: row for row in taxonomy.categories}
    chosen = list(by_name) if categories is None else list(dict.fromkeys(categories))
    missing = [c for c in chosen if c not in by_name]
    if missing:
        raise LabellingError(f"categories not in taxonomy v{taxonomy.version} of {contract_set.name!r}: "
                             f"{', '.join(missing)}")
    # Locked as contract_exclude locks it: a contract is either excluded or in this pool, never both.
    ContractSet.objects.select_for_update().filter(pk=contract_set.pk).first()
    members = list(SetContract.objects.filter(contract_set=contract_set).select_related("text", "exclusion")
                   .order_by("title"))
    excluded = {m.title for m in members if hasattr(m, "exclusion")}
    members = [m for m in members if m.title not in excluded]
    if titles is not None:
        wanted = set(titles)
        taken_back = sorted(wanted & excluded)
        if taken_back:
            raise LabellingError(f"contracts excluded from set {contract_set.name!r}: {', '.join(taken_back)}")
        unknown = sorted(wanted - {m.title for m in members})
        if unknown:
            raise LabellingError(f"contracts not in set {contract_set.name!r}: {', '.join(unknown)}")
        members = [m for m in members if m.title in wanted]
    if not members or not chosen:
        raise LabellingError(f"set {contract_set.name!r}: nothing to label (no contracts or no categories)")
    items = [
        {
            "query_id": category,
            "doc_id": member.text.sha256,
            "query_text": f"{category}: {by_name[category]['description']}".strip(),
            "source_heading": member.title,
            "source_text": member.text.text,
            "passage_caption": "",
            "passage_text": "",
            "external_ref": clause_item_ref(member=member, taxonomy=taxonomy, category=category),
        }
        for member in members
        for category in chosen
    ]
    try:
        return pool_create(
            name=name, kind=CONTRACT_CLAUSE_KIND_KEY, items=items,
            declared_rule=(f"every contract of set {contract_set.name!r} ({len(members)}"
                           f"{f'; {len(excluded)} excluded' if excluded else ''}) x "
                           f"{len(chosen)} categories of taxonomy v{taxonomy.version}"),
            declared_params={"contract_set": contract_set.pk, "taxonomy_version": taxonomy.version,
                             "taxonomy_sha256": taxonomy.sha256, "categories": chosen,
                             "titles": [m.title for m in members]},
            reviewers_per_item=reviewers_per_item, instructions=instructions,
            external_ref={"contract_set": contract_set.pk, "taxonomy_version": taxonomy.version},
            created_by=created_by,
        )
    except ReviewError as error:
        raise LabellingError(str(error)) from None


@transaction.atomic
def clause_labelling_start(
    *,
    contract_set: ContractSet,
    categories: Sequence[str],
    reviewers: Sequence[Any],
    per_item: int = 2,
    name: str = "",
    created_by: Any = None,
) -> tuple[PoolRef, int]:
    """Declare a clause pool on ``categories`` of every contract and give each item to ``per_item`` of
    ``reviewers`` (the engine's balanced, judge-once assignment): the pool and how many assignments were added.

    One transaction: a pool whose lawyers cannot be assigned (too few chosen, one refused) is not declared either,
    so the gold page never shows a pool nobody can label.
    """
    if not categories:
        raise LabellingError("choose at least one category to label")
    if per_item < 1:
        raise LabellingError("lawyers per contract: at least 1")
    if len(reviewers) < per_item:
        raise LabellingError(f"{per_item} lawyers per contract need at least {per_item} lawyers chosen; "
                             f"{len(reviewers)} chosen")
    title = (name.strip() or f"{contract_set.name}: {', '.join(categories)}")[:200]
    pool = clause_pool_declare(contract_set=contract_set, name=title, categories=categories,
                               reviewers_per_item=per_item, created_by=created_by)
    try:
        added = pool_assign(pool=pool, reviewers=reviewers, per_item=per_item)
    except ReviewError as error:
        raise LabellingError(str(error)) from None
    return pool, added
