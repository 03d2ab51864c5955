"""Writes of a pool: declaring it with its items, its label-deciding settings, and a new version of it.

Jobs (benchmarks, grading) push items in with ``pool_create`` and read labels back through
``agreement.judgments``. The review engine never learns what a pool's items mean: it stores texts, hashes and an
opaque ``external_ref``.

Settings that decide labels (reviewers per item, kind) change only until the first judgment; after that a change
is a new version of the pool, with the same items, the same guidelines and no judgments.
"""

from __future__ import annotations

import random
from collections.abc import Mapping, Sequence
from typing import Any

from django.contrib.auth.models import User
from django.db import transaction

from reviewapp.core.http.json_input import JsonInputError, JsonSyntaxError, json_loads
from reviewapp.review.errors import PoolFrozen, ReviewError
from reviewapp.review.judgments.hashes import ITEM_TEXT_FIELDS, item_hashes_check
from reviewapp.review.judgments.models import ReviewItem
from reviewapp.review.kinds import pool_kind
from reviewapp.review.pools.guidelines import guidelines_publish, pool_guidelines
from reviewapp.review.pools.models import ReviewPool
from reviewapp.review.pools.refs import PoolRef, pool_ref

ITEM_FIELDS = {
    "query_id",
    "doc_id",
    *ITEM_TEXT_FIELDS,
    "query_hash",
    "source_hash",
    "passage_hash",
    "external_ref",
    "priority",
}


# A tier number; more tiers than this is no work order anyone could follow.
MAX_PRIORITY = 100_000


def _clean_item(index: int, raw: Mapping[str, Any]) -> dict[str, Any]:
    where = f"items[{index}]"
    if not isinstance(raw, Mapping):
        raise ReviewError(f"{where}: expected an object, got {type(raw).__name__}")
    unknown = set(raw) - ITEM_FIELDS
    if unknown:
        raise ReviewError(f"{where}: unknown field(s) {sorted(unknown)}")
    item: dict[str, Any] = {}
    for field in ("query_id", "doc_id"):
        value = raw.get(field)
        if value is None or str(value).strip() == "":
            raise ReviewError(f"{where}.{field}: required")
        item[field] = str(value)
    for field in ITEM_TEXT_FIELDS:
        value = raw.get(field, "")
        if not isinstance(value, str):
            raise ReviewError(f"{where}.{field}: must be text")
        item[field] = value
    if not item["query_text"].strip():
        raise ReviewError(f"{where}.query_text: required")
    if not (item["passage_text"].strip() or item["source_text"].strip()):
        raise ReviewError(f"{where}: needs source_text or passage_text")
    item.update(item_hashes_check(texts=item, claimed=raw, where=where))
    external_ref = raw.get("external_ref", {})
    if not isinstance(external_ref, dict):
        raise ReviewError(f"{where}.external_ref: must be an object")
    item["external_ref"] = external_ref
    priority = raw.get("priority", 0)
    if isinstance(priority, bool) or not isinstance(priority, int) or not 0 <= priority <= MAX_PRIORITY:
        raise ReviewError(f"{where}.priority: must be a whole number from 0 to {MAX_PRIORITY}")
    item["priority"] = priority
    return item


def _check_tiers_whole_queries(items: Sequence[Mapping[str, Any]]) -> None:
    """Refuse a work order that splits a query: every item of one ``query_id`` must share its ``priority``.

    A tier inside a query would put some of its passages first in every reviewer's queue, and whatever chose
    them (a system's top five, say) would be told to the reviewers by the order. Whole queries may come in any
    order; within a query each reviewer has their own keyed shuffle.
    """
    first: dict[str, int] = {}
    for i, item in enumerate(items):
        j = first.setdefault(item["query_id"], i)
        if items[j]["priority"] != item["priority"]:
            raise ReviewError(
                f"items[{i}].priority: {item['priority']} differs from items[{j}].priority {items[j]['priority']} "
                f"of the same query_id {item['query_id']!r}; the work order ranks whole queries only (an order "
                "inside a query would tell reviewers how the passages were chosen)")


# More would be no review design anyone runs; far more overflowed the column (a 500).
MAX_REVIEWERS_PER_ITEM = 100


@transaction.atomic
def pool_create_model(
    *,
    name: str,
    kind: str,
    items: Sequence[Mapping[str, Any]],
    declared_rule: str,
    declared_params: Mapping[str, Any] | None = None,
    reviewers_per_item: int = 2,
    reviewer_title: str = "",
    instructions: str = "",
    external_ref: Mapping[str, Any] | None = None,
    created_by: User | None = None,
) -> ReviewPool:
    """Declare a pool with its items, all or nothing.

    ``items``: objects with ``query_id``, ``doc_id`` (the job's ids; qrels use
    them), ``query_text``, ``source_heading``, ``source_text``,
    ``passage_caption``, ``passage_text``, optional ``query_hash`` /
    ``source_hash`` / ``passage_hash`` (always computed here from the texts;
    one sent is only a check, and a mismatch is refused) and an opaque
    ``external_ref`` (never shown to reviewers), optional
    ``priority`` (the work order's tier, 0 first; never shown; the same for
    every item of one ``query_id``). The order of ``items`` is not kept: ids
    are random and each reviewer gets a shuffle within each tier.
    """
    pool_kind(kind)
    if not name.strip():
        raise ReviewError("name: required")
    if not declared_rule.strip():
        raise ReviewError("declared_rule: required (say how the pool was chosen)")
    if not isinstance(reviewers_per_item, int) or not 1 <= reviewers_per_item <= MAX_REVIEWERS_PER_ITEM:
        raise ReviewError(f"reviewers_per_item: must be a whole number from 1 to {MAX_REVIEWERS_PER_ITEM}")
    if not items:
        raise ReviewError("items: a pool needs at least one item")
    cleaned = [_clean_item(i, raw) for i, raw in enumerate(items)]
    seen: dict[tuple[str, str], int] = {}
    for i, item in enumerate(cleaned):
        key = (item["query_id"], item["doc_id"])
        if key in seen:
            raise ReviewError(f"items[{i}]: query_id {key[0]!r} with doc_id {key[1]!r} repeats items[{seen[key]}]")
        seen[key] = i
    _check_tiers_whole_queries(cleaned)
    pool = ReviewPool.objects.create(
        name=name.strip(),
        kind=kind,
        declared_rule=declared_rule.strip(),
        declared_params=dict(declared_params or {}),
        reviewers_per_item=reviewers_per_item,
        reviewer_title=reviewer_title.strip(),
        instructions=instructions.strip(),
        external_ref=dict(external_ref or {}),
        created_by=created_by,
    )
    # Shuffle before inserting so that even primary keys carry no trace of the job's order.
    random.SystemRandom().shuffle(cleaned)
    ReviewItem.objects.bulk_create([ReviewItem(pool=pool, **item) for item in cleaned])
    return pool


def pool_create(
    *,
    name: str,
    kind: str,
    items: Sequence[Mapping[str, Any]],
    declared_rule: str,
    declared_params: Mapping[str, Any] | None = None,
    reviewers_per_item: int = 2,
    reviewer_title: str = "",
    instructions: str = "",
    external_ref: Mapping[str, Any] | None = None,
    created_by: User | None = None,
) -> PoolRef:
    """``pool_create_model`` for the jobs: the declared pool as a ``PoolRef``, never the model."""
    return pool_ref(pool_create_model(
        name=name, kind=kind, items=items, declared_rule=declared_rule, declared_params=declared_params,
        reviewers_per_item=reviewers_per_item, reviewer_title=reviewer_title, instructions=instructions,
        external_ref=external_ref, created_by=created_by,
    ))


@transaction.atomic
def pool_settings_change(*, pool: ReviewPool, reviewers_per_item: int | None = None,
                         kind: str | None = None) -> ReviewPool:
    """Change a pool's label-deciding settings; refused once any judgment exists (make a new version then)."""
    locked = ReviewPool.objects.select_for_update().get(pk=pool.pk)
    if reviewers_per_item is not None:
        if not isinstance(reviewers_per_item, int) or not 1 <= reviewers_per_item <= MAX_REVIEWERS_PER_ITEM:
            raise ReviewError(f"reviewers_per_item: must be a whole number from 1 to {MAX_REVIEWERS_PER_ITEM}")
        locked.reviewers_per_item = reviewers_per_item
    if kind is not None:
        pool_kind(kind)
        locked.kind = kind
    try:
        locked.save()
    except PoolFrozen as error:
        raise ReviewError(error.messages[0]) from None
    return locked


@transaction.atomic
def pool_new_version(*, pool: ReviewPool, reviewers_per_item: int | None = None,
                     created_by: User | None = None) -> ReviewPool:
    """A new pool with the same items and a changed label-deciding setting; the judged pool stays as it was.

    The new version has no judgments or assignments (assign it like any pool). Its declared parameters name
    the version it replaces and its number.
    """
    per_item = pool.reviewers_per_item if reviewers_per_item is None else reviewers_per_item
    params = dict(pool.declared_params or {})
    version = int(params.get("pool_version", 1)) + 1
    params.update({"pool_version": version, "previous_version": pool.public_id})
    items = [
        {field: getattr(item, field) for field in ITEM_FIELDS}
        for item in pool.items.all()
    ]
    new = pool_create_model(
        name=f"{pool.name} (v{version})"[:200], kind=pool.kind, items=items,
        declared_rule=pool.declared_rule, declared_params=params, reviewers_per_item=per_item,
        reviewer_title=pool.reviewer_title, instructions=pool.instructions, external_ref=pool.external_ref,
        created_by=created_by,
    )
    # Reviewers of the new version follow the same guidelines until an admin publishes new ones.
    current = pool_guidelines(pool=pool)
    if current is not None:
        guidelines_publish(pool=new, text=current.text, by=created_by)
    return new


def json_lines_parse(text: str) -> list:
    """A JSON array, or one JSON object per line; errors name the line."""
    text = text.strip()
    if not text:
        return []
    if text.startswith("["):
        try:
            return json_loads(text)
        except JsonInputError as error:
            raise ReviewError(f"JSON: {error}") from None
    rows = []
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            rows.append(json_loads(line))
        except JsonSyntaxError as error:
            raise ReviewError(f"line {number}: {error.msg}") from None
        except JsonInputError as error:
            raise ReviewError(f"line {number}: {error}") from None
    return rows
