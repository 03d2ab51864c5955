"""Append-only tables refuse UPDATE and DELETE in the database itself, and through every ORM path; on PostgreSQL
they refuse TRUNCATE too (directly or by CASCADE from a table they reference).

Runs on SQLite, and on PostgreSQL when DATABASE_URL points there (CI runs both); the TRUNCATE tests are marked
postgresql (SQLite has no TRUNCATE).
"""

from __future__ import annotations

import pytest
from django.core.management import call_command
from django.db import DatabaseError, connection, transaction
from django.utils import timezone

from benchmarks.comparisons.models import DeclaredComparison
from benchmarks.reports.models import HeldoutExposure
from benchmarks.suites.models import Suite
from grading.comparisons.models import CuadComparison
from grading.contracts.gold.models import GoldSet
from grading.contracts.models import ClauseTaxonomy, ContractExclusion, ContractText
from reviewapp.core.models import AccountAudit, AppendOnlyError
from reviewapp.core.records.append_only import (
    append_only_bypassed,
    append_only_models,
    expected_triggers,
    triggers_present,
)
from reviewapp.providers.models import BudgetRaise, Ledger, Receipt
from reviewapp.review.agreement import disagreements
from reviewapp.review.agreement.models import Adjudication
from reviewapp.review.exchange.models import ImportedAnnotation, LabelImport
from reviewapp.review.judgments.models import JudgmentRevision
from reviewapp.review.pools.models import KnownAnswer, PoolGuidelines, ReviewPool
from reviewapp.review.workspace.services import judgment_submit
from tests.helpers import shown_hashes
from tests.reviewapp.review.conftest import make_pool

APPEND_ONLY = [JudgmentRevision, Adjudication, PoolGuidelines, KnownAnswer, AccountAudit, BudgetRaise, Receipt,
               HeldoutExposure, DeclaredComparison, ContractText, ClauseTaxonomy, GoldSet, LabelImport,
               ImportedAnnotation, CuadComparison, ContractExclusion]
HASH = "0" * 64


def _receipt(ledger: Ledger, seq: int, status: str) -> Receipt:
    receipt = Receipt(ledger=ledger, seq=seq, request_key=f"{seq:064d}", method="logprobs",
                      request_url="http://127.0.0.1/v1", request_body={"n": seq}, request_bytes=10,
                      estimated_input_tokens=266, sent_at=timezone.now(), status=status)
    receipt.save(force_insert=True)
    return receipt


@pytest.fixture
def evidence(reviewer_user, reviewer2_user, admin_user_) -> dict[type, int]:
    """One row of each append-only table; returns model -> pk."""
    pool = make_pool(reviewers=[reviewer_user, reviewer2_user])
    item = pool.items.order_by("id").first()
    judgment_submit(item=item, reviewer=reviewer_user, grades={"section": 2, "passage": 1},
                             complete=True, shown=shown_hashes(item.public_id))
    judgment_submit(item=item, reviewer=reviewer2_user, grades={"section": 1, "passage": 1},
                    complete=True, shown=shown_hashes(item.public_id))  # a disagreement, for the ruling to resolve
    disagreements.adjudication_record(item=item, grade_type="section", value=3, adjudicator=admin_user_)
    guidelines = PoolGuidelines.objects.create(pool=pool, version=1, text="Grade what you read.", text_hash=HASH)
    known = KnownAnswer.objects.create(item=item, grade_type="section", expected=2, set_by=admin_user_,
                                       query_hash=HASH, source_hash=HASH, passage_hash=HASH)
    audit = AccountAudit.objects.create(actor="tests", action="user.change", target_type="user", target="rita")
    ledger = Ledger.objects.create(purpose="tests", provider="local", model_id="m", max_requests=5,
                                   max_input_tokens=5000)
    raise_ = BudgetRaise(ledger=ledger, actor="tests", reason="room", old_max_requests=5, new_max_requests=6,
                         old_max_input_tokens=5000, new_max_input_tokens=5000)
    raise_.save(force_insert=True)
    receipt = _receipt(ledger, 1, Receipt.Status.ANSWERED)
    suite = Suite.objects.create(name="s", version=1, corpus="nrs", definition="{}", sha256=HASH,
                                 sources_sha256=HASH, frozen_at=timezone.now())
    exposure = HeldoutExposure.objects.create(suite=suite, retrieval_sha256=HASH, configuration={}, purpose="page")
    comparison = DeclaredComparison.objects.create(suite=suite, systems=[], sha256=HASH, declared_by=admin_user_,
                                                   declared_via="command", declared_at=timezone.now())
    label_import = LabelImport.objects.create(pool=pool, tool="argilla", content_sha256=HASH)
    imported = ImportedAnnotation.objects.create(label_import=label_import, item=item, location="records[0]",
                                                 annotator="a", grade_type="section", value=1, query_hash=HASH,
                                                 source_hash=HASH, passage_hash=HASH)
    return {
        JudgmentRevision: JudgmentRevision.objects.get(judgment__item=item, judgment__reviewer=reviewer_user).pk,
        Adjudication: Adjudication.objects.get(item=item).pk,
        PoolGuidelines: guidelines.pk, KnownAnswer: known.pk, AccountAudit: audit.pk, BudgetRaise: raise_.pk,
        Receipt: receipt.pk, HeldoutExposure: exposure.pk, DeclaredComparison: comparison.pk,
        **_contract_evidence(), LabelImport: label_import.pk, ImportedAnnotation: imported.pk,
    }


def _contract_evidence() -> dict[type, int]:
    from grading.contracts.services import contract_exclude, contract_import, contract_set_get_or_create

    contract_set, _ = contract_set_get_or_create(name="evidence")
    member = contract_import(contract_set=contract_set, filename="a.txt", data=b"Governing Law.").contract
    gold = GoldSet.objects.create(contract_set=contract_set, version=1, sha256=HASH, taxonomy_version=1,
                                  taxonomy_sha256=HASH, content={}, provenance={}, left_out=[], counts={},
                                  agreement=[], pools=[], created_by="tests")
    from grading.dataset.models import CuadDataset, Sample

    dataset = CuadDataset.objects.create(sha256=HASH, source_name="evidence.json", n_contracts=0, n_spans=0)
    sample = Sample.objects.create(dataset=dataset, n=0, min_per_type=0, seed=0, manifest="{}", manifest_sha256=HASH)
    cuad = CuadComparison.objects.create(dataset=dataset, sample=sample, runs=[], sha256=HASH, declared_via="command",
                                         declared_at=timezone.now())
    wrong = contract_import(contract_set=contract_set, filename="b.txt", data=b"Not a contract.").contract
    exclusion = contract_exclude(member=wrong, reason="a wrong file", user="tests")
    return {ContractText: member.text_id, ClauseTaxonomy: contract_set.taxonomies.get().pk, GoldSet: gold.pk,
            CuadComparison: cuad.pk, ContractExclusion: exclusion.pk}


def _raw(sql: str, params: list) -> None:
    with transaction.atomic(), connection.cursor() as cursor:
        cursor.execute(sql, params)


@pytest.mark.django_db
@pytest.mark.parametrize("model", APPEND_ONLY, ids=lambda m: m.__name__)
def test_the_database_refuses_a_raw_update_or_delete_of_an_append_only_row(model, evidence):
    table, pk = model._meta.db_table, evidence[model]
    with pytest.raises(DatabaseError, match="append-only"):
        _raw(f'UPDATE "{table}" SET id = id WHERE id = %s', [pk])  # noqa: S608 (a model's own table)
    with pytest.raises(DatabaseError, match="append-only"):
        _raw(f'DELETE FROM "{table}" WHERE id = %s', [pk])  # noqa: S608 (a model's own table)
    assert model._base_manager.filter(pk=pk).exists()


@pytest.mark.django_db
@pytest.mark.parametrize("model", APPEND_ONLY, ids=lambda m: m.__name__)
def test_the_orm_refuses_to_delete_an_append_only_row_or_update_it_in_bulk(model, evidence):
    row = model._base_manager.get(pk=evidence[model])
    with pytest.raises(AppendOnlyError, match="never deleted"):
        row.delete()
    with pytest.raises(AppendOnlyError, match="never deleted"):
        model.objects.filter(pk=row.pk).delete()
    if model is not Receipt:  # a receipt's one completion is a conditional UPDATE (see the next test)
        with pytest.raises(AppendOnlyError, match="never updated"):
            model.objects.filter(pk=row.pk).update(id=row.pk)
    assert model._base_manager.filter(pk=row.pk).exists()


@pytest.mark.django_db
def test_a_receipt_is_completed_once_while_sent_and_its_request_never_changes(evidence):
    ledger = Receipt.objects.get(pk=evidence[Receipt]).ledger
    receipt = _receipt(ledger, 2, Receipt.Status.SENT)
    with pytest.raises(DatabaseError, match="append-only"):
        _raw('UPDATE "providers_receipt" SET request_body = %s WHERE id = %s', ['{"n": 99}', receipt.pk])
    assert Receipt.objects.filter(pk=receipt.pk, status="sent").update(status="answered", response_body="{}") == 1
    with pytest.raises(DatabaseError, match="append-only"):
        _raw('UPDATE "providers_receipt" SET status = %s WHERE id = %s', ["sent", receipt.pk])
    with pytest.raises(DatabaseError, match="append-only"), transaction.atomic():
        Receipt.objects.filter(pk=receipt.pk).update(response_body="forged")
    assert Receipt.objects.get(pk=receipt.pk).response_body == "{}"


def test_every_append_only_model_is_tried_here():
    # A new append-only model (an AppendOnlyQuerySet manager) must join the raw-SQL and ORM tests above.
    assert set(append_only_models()) == set(APPEND_ONLY)


@pytest.mark.django_db
def test_every_append_only_table_carries_its_triggers_after_migrate():
    for model in append_only_models():
        table = model._meta.db_table
        assert triggers_present(connection, table) == expected_triggers(connection.vendor, table), model.__name__
    assert len(expected_triggers("postgresql", "t")) == 3 and len(expected_triggers("sqlite", "t")) == 2


def _truncate(table: str) -> None:
    with transaction.atomic(), connection.cursor() as cursor:
        # The fixture's rows leave deferred foreign-key checks pending, and PostgreSQL refuses to TRUNCATE a table
        # with pending trigger events before any trigger runs: check them now, as a commit would.
        cursor.execute("SET CONSTRAINTS ALL IMMEDIATE")
        cursor.execute(f'TRUNCATE "{table}" CASCADE')


@pytest.mark.postgresql
@pytest.mark.django_db
@pytest.mark.parametrize("model", APPEND_ONLY, ids=lambda m: m.__name__)
def test_postgresql_refuses_to_truncate_an_append_only_table(model, evidence):
    table, pk = model._meta.db_table, evidence[model]
    with pytest.raises(DatabaseError, match=r"append-only( \(.*\))?: the table is never truncated"):
        _truncate(table)
    assert model._base_manager.filter(pk=pk).exists()


@pytest.mark.postgresql
@pytest.mark.django_db
def test_postgresql_refuses_a_truncate_that_would_cascade_into_append_only_tables(evidence):
    # Truncating pools cascades into judgment revisions, guidelines, known answers and label imports: the first
    # of their guards to fire refuses the whole statement.
    with pytest.raises(DatabaseError, match="append-only: the table is never truncated"):
        _truncate(ReviewPool._meta.db_table)
    assert ReviewPool.objects.exists()
    for model in (JudgmentRevision, PoolGuidelines, KnownAnswer, LabelImport, ImportedAnnotation):
        assert model._base_manager.filter(pk=evidence[model]).exists(), model.__name__


@pytest.mark.django_db(transaction=True)
def test_flush_empties_append_only_tables_and_the_triggers_hold_again_after(evidence):
    call_command("flush", verbosity=0, interactive=False)
    assert not JudgmentRevision.objects.exists() and not Receipt.objects.exists()
    audit = AccountAudit.objects.create(actor="tests", action="x", target_type="user", target="t")
    with pytest.raises(DatabaseError, match="append-only"):
        _raw('DELETE FROM "reviewapp_accountaudit" WHERE id = %s', [audit.pk])
    with append_only_bypassed(connection):
        _raw('DELETE FROM "reviewapp_accountaudit" WHERE id = %s', [audit.pk])
    assert not AccountAudit.objects.exists()
