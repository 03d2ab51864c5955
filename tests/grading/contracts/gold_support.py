"""Clause pools labelled in tests: judgments written straight to the engine's tables (as a lawyer's saves would)."""

from __future__ import annotations

from django.contrib.auth.models import Permission, User
from django.db import transaction

from grading.contracts.labelling import clause_pool_declare
from grading.contracts.services import contract_import, contract_set_get_or_create, taxonomy_publish
from reviewapp.review.judgments.models import Judgment, JudgmentRevision, ReviewItem
from reviewapp.review.pools.refs import pool_model
from reviewapp.review.spans.offsets import spans_clean
from reviewapp.review.workspace.services import judgment_advance
from tests.grading.cuad_fixture import CATEGORIES, contracts


def lawyer(name: str) -> User:
    return User.objects.create_user(name, password="x")


def admin(name: str = "adjudicator") -> User:
    user = User.objects.create_user(name, password="x")
    user.user_permissions.add(Permission.objects.get(codename="manage_reviews"))
    return User.objects.get(pk=user.pk)


def label(item: ReviewItem, user: User, presence: int | str, spans: list[list[int]] | None = None, *,
          complete: bool = True) -> None:
    """A judgment of ``item`` by ``user`` (complete, or a draft): presence and spans (normalised as the engine
    stores them)."""
    # One transaction, as the engine's own save is: the queue refresh locks the reviewer's rows, which a test on a
    # live server (autocommit, PostgreSQL) would otherwise refuse.
    with transaction.atomic():
        judgment, _ = Judgment.objects.get_or_create(item=item, reviewer=user)
        judgment.refresh_from_db()
        revision = JudgmentRevision.objects.create(
            judgment=judgment, number=judgment.revision_count + 1,
            status=JudgmentRevision.COMPLETE if complete else JudgmentRevision.DRAFT,
            grades={"presence": presence}, spans=spans_clean(text=item.source_text, spans=spans or []),
            query_hash=item.query_hash, source_hash=item.source_hash, passage_hash=item.passage_hash,
        )
        judgment_advance(judgment=judgment, decided_on=judgment.current, revision=revision)


def cuad_fixture_set(name: str = "Fixture set"):
    """The CUAD fixture's four contracts as a firm set with its three categories, and a clause pool on them."""
    contract_set, _ = contract_set_get_or_create(name=name)
    for c in contracts():
        outcome = contract_import(contract_set=contract_set, filename=f"{c['title']}.txt",
                                  data=c["context"].encode("utf-8"))
        assert outcome.status == "imported", outcome.detail
    taxonomy_publish(contract_set=contract_set, user_name="admin",
                     categories=[{"name": c, "description": f"What the contract says on {c}."} for c in CATEGORIES])
    pool = pool_model(clause_pool_declare(contract_set=contract_set, name=f"{name} labels"))
    return contract_set, pool


def cuad_answer(item: ReviewItem) -> tuple[int, list[list[int]]]:
    """CUAD's own answer to the item (the fixture's spans, found in the stored text)."""
    answers = {c["title"]: c["answers"] for c in contracts()}[item.source_heading][item.query_id]
    spans = [[item.source_text.index(text), item.source_text.index(text) + len(text)] for _, text in answers]
    return (1 if spans else 0), spans


def label_all_as_cuad(pool, *users: User) -> None:
    for item in pool.items.all():
        presence, spans = cuad_answer(item)
        for user in users:
            label(item, user, presence, spans)
