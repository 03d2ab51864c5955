"""A contract set labelled blind by two reviewers: the world of the span workspace's tests."""

from __future__ import annotations

from typing import Any

from grading.contracts.labelling import clause_pool_declare
from grading.contracts.services import contract_import, contract_set_get_or_create, taxonomy_publish
from reviewapp.review.assignment.services import pool_assign
from reviewapp.review.judgments.models import ReviewItem
from reviewapp.review.pools.refs import pool_model

CATEGORIES = [
    {"name": "Governing Law", "description": "Which state's law governs the contract?"},
    {"name": "Non-Compete", "description": "Is a party restricted from competing?"},
]
CONTRACT = (b"SUPPLY AGREEMENT\n\n1. Term. This Agreement runs for two years.\n\n"
            b"2. Governing Law. This Agreement is governed by the laws of the State of Nevada.\n\n"
            b"3. Notice. Either party may end it on thirty days' notice.\n")


def labelling_pool(*, reviewers: list[Any], contract: bytes = CONTRACT, filename: str = "supply.txt") -> Any:
    contract_set, _ = contract_set_get_or_create(name="Firm set")
    contract_import(contract_set=contract_set, filename=filename, data=contract)
    taxonomy_publish(contract_set=contract_set, categories=CATEGORIES, user_name="admin")
    pool = pool_model(clause_pool_declare(contract_set=contract_set, name="Firm labels",
                                          reviewers_per_item=len(reviewers)))
    pool_assign(pool=pool, reviewers=reviewers, per_item=len(reviewers))
    return pool


def item_of(pool: Any, category: str) -> ReviewItem:
    return ReviewItem.objects.select_related("pool").get(pool=pool, query_id=category)


def span_of(item: ReviewItem, words: str) -> list[int]:
    start = item.source_text.index(words)
    return [start, start + len(words)]
