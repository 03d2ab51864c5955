import pytest

from grading.contracts.kinds import CONTRACT_CLAUSE_KIND_KEY
from grading.contracts.labelling import LabellingError, clause_pool_declare
from grading.contracts.services import contract_import, contract_set_get_or_create, taxonomy_publish
from reviewapp.review.models import ReviewItem

pytestmark = pytest.mark.django_db

CATEGORIES = [
    {"name": "Governing Law", "description": "Which state's law governs the contract?"},
    {"name": "Notice Period", "description": "How much notice must a party give to end it?"},
]


def _set_with_two_contracts():
    contract_set, _ = contract_set_get_or_create(name="Firm set")
    contract_import(contract_set=contract_set, filename="alpha.txt",
                    data=b"This Agreement is governed by the laws of Nevada.\nNotice: thirty days.\n")
    contract_import(contract_set=contract_set, filename="beta.txt",
                    data=b"The laws of Hawaii govern.\nEither party may end it at any time.\n")
    taxonomy_publish(contract_set=contract_set, categories=CATEGORIES, user_name="admin")
    return contract_set


def test_a_pool_has_one_item_per_contract_and_category_bound_to_the_stored_text():
    contract_set = _set_with_two_contracts()
    pool = clause_pool_declare(contract_set=contract_set, name="Firm labels")
    items = list(ReviewItem.objects.filter(pool=pool))
    assert pool.kind == CONTRACT_CLAUSE_KIND_KEY
    assert sorted((i.source_heading, i.query_id) for i in items) == [
        ("alpha", "Governing Law"), ("alpha", "Notice Period"), ("beta", "Governing Law"), ("beta", "Notice Period"),
    ]
    for item in items:
        member = contract_set.contracts.get(pk=item.external_ref["set_contract"])
        assert item.source_text == member.text.text
        assert item.doc_id == member.text.sha256  # the source hash also covers the heading (the title)
        assert item.passage_text == ""


def test_only_the_chosen_categories_and_contracts_are_declared_and_unknown_ones_are_named():
    contract_set = _set_with_two_contracts()
    pool = clause_pool_declare(contract_set=contract_set, name="One", categories=["Notice Period"], titles=["beta"])
    assert [(i.source_heading, i.query_id) for i in pool.items.all()] == [("beta", "Notice Period")]
    with pytest.raises(LabellingError, match="Termination"):
        clause_pool_declare(contract_set=contract_set, name="Two", categories=["Termination"])
    with pytest.raises(LabellingError, match="gamma"):
        clause_pool_declare(contract_set=contract_set, name="Three", titles=["gamma"])
    empty, _ = contract_set_get_or_create(name="No taxonomy")
    with pytest.raises(LabellingError, match="taxonomy"):
        clause_pool_declare(contract_set=empty, name="Four")
