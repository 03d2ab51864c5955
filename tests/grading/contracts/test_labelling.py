import pytest

from grading.contracts.kinds import CONTRACT_CLAUSE_KIND_KEY
from grading.contracts.labelling import LabellingError, clause_pool_declare
from grading.contracts.services import contract_import, contract_set_get_or_create, taxonomy_publish
from reviewapp.review.assignment.models import Assignment
from reviewapp.review.judgments.models import ReviewItem
from reviewapp.review.pools.refs import pool_model
from reviewapp.review.pools.selectors import pool_find
from tests.factories import client_for

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
    items = list(ReviewItem.objects.filter(pool_id=pool.pk))
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
    assert [(i.source_heading, i.query_id) for i in pool_model(pool).items.all()] == [("beta", "Notice Period")]
    with pytest.raises(LabellingError, match="Termination"):
        clause_pool_declare(contract_set=contract_set, name="Two", categories=["Termination"])
    with pytest.raises(LabellingError, match="gamma"):
        clause_pool_declare(contract_set=contract_set, name="Three", titles=["gamma"])
    empty, _ = contract_set_get_or_create(name="No taxonomy")
    with pytest.raises(LabellingError, match="taxonomy"):
        clause_pool_declare(contract_set=empty, name="Four")


def test_an_admin_starts_labelling_from_the_gold_page_with_chosen_categories_and_lawyers(
        admin_user_, reviewer_user, reviewer2_user, stakeholder_user):
    contract_set = _set_with_two_contracts()
    client = client_for(admin_user_)
    page = client.get(f"/cuad/contracts/{contract_set.pk}/gold/").content.decode()
    assert 'data-testid="gold-start"' in page and '<option value="Notice Period">' in page
    assert f'value="{reviewer_user.pk}"> rita_reviewer' in page
    assert "alice_admin</label>" not in page  # only people who may review blind are offered
    response = client.post(f"/cuad/contracts/{contract_set.pk}/gold/start/", {
        "categories": ["Notice Period"], "reviewers": [reviewer_user.pk, reviewer2_user.pk], "per_item": "2"})
    assert response.status_code == 302
    pool = pool_find(external_ref={"contract_set": contract_set.pk}, kind=CONTRACT_CLAUSE_KIND_KEY)[0]
    assert pool.declared_params["categories"] == ["Notice Period"] and pool.reviewers_per_item == 2
    assert sorted(ReviewItem.objects.filter(pool_id=pool.pk).values_list("source_heading", "query_id")) == [
        ("alpha", "Notice Period"), ("beta", "Notice Period")]
    held = sorted(Assignment.objects.filter(pool_id=pool.pk).values_list("reviewer__username", flat=True))
    assert held == ["rita_reviewer"] * 2 + ["rob_reviewer"] * 2
    assert "Labelling started" in client.get(response["Location"]).content.decode()


def test_starting_labelling_is_refused_whole_and_only_for_admins(admin_user_, reviewer_user, stakeholder_user):
    contract_set = _set_with_two_contracts()
    url = f"/cuad/contracts/{contract_set.pk}/gold/start/"
    client = client_for(admin_user_)
    # Two lawyers per contract with one lawyer chosen: no pool is left behind unassigned.
    response = client.post(url, {"categories": ["Governing Law"], "reviewers": [reviewer_user.pk], "per_item": "2"},
                           follow=True)
    assert "2 lawyers per contract need at least 2 lawyers chosen; 1 chosen" in response.content.decode()
    response = client.post(url, {"categories": ["Nope"], "reviewers": [reviewer_user.pk], "per_item": "1"},
                           follow=True)
    assert "categories not in taxonomy v2 of &#x27;Firm set&#x27;: Nope" in response.content.decode()
    assert not pool_find(external_ref={"contract_set": contract_set.pk}, kind=CONTRACT_CLAUSE_KIND_KEY)
    assert client_for(stakeholder_user).post(url, {"categories": ["Governing Law"],
                                                   "reviewers": [reviewer_user.pk], "per_item": "1"}
                                             ).status_code == 403
    assert 'data-testid="gold-start"' not in client_for(stakeholder_user).get(
        f"/cuad/contracts/{contract_set.pk}/gold/").content.decode()


def test_an_excluded_contract_is_never_labelled_and_a_contract_in_a_pool_cannot_be_excluded():
    from grading.contracts.services import ExclusionError, contract_exclude

    contract_set = _set_with_two_contracts()
    beta = contract_set.contracts.get(title="beta")
    contract_exclude(member=beta, reason="the wrong counterparty's draft", user="admin")
    with pytest.raises(LabellingError, match="contracts excluded from set 'Firm set': beta"):
        clause_pool_declare(contract_set=contract_set, name="asked for", titles=["beta"])
    pool = clause_pool_declare(contract_set=contract_set, name="Firm labels")
    assert {i.source_heading for i in ReviewItem.objects.filter(pool_id=pool.pk)} == {"alpha"}
    assert pool.declared_params["titles"] == ["alpha"] and "(1; 1 excluded)" in pool.declared_rule
    # Once its labelling has started, a contract stays: the pool's labels are about its text.
    with pytest.raises(ExclusionError, match="'alpha' is in labelling pool 'Firm labels': its labelling has started"):
        contract_exclude(member=contract_set.contracts.get(title="alpha"), reason="changed our mind", user="admin")
    assert not hasattr(contract_set.contracts.get(title="alpha"), "exclusion")
