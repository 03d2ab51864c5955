"""The gold pages: agreement and open items, the adjudication page (admins only), freeze, versions, downloads,
and the gold-set API."""

from __future__ import annotations

import json

import pytest

from grading.contracts.gold.models import GoldSet
from grading.dataset.selectors import dataset_of_gold_set
from tests.factories import client_for, make_user
from tests.grading.contracts.gold_support import cuad_fixture_set, label, label_all_as_cuad, lawyer

pytestmark = pytest.mark.django_db


@pytest.fixture
def labelled(django_user_model):
    contract_set, pool = cuad_fixture_set(name="Pages set")
    ann, ben = lawyer("ann"), lawyer("ben")
    label_all_as_cuad(pool, ann, ben)
    item = pool.items.get(source_heading="GAMMA-SUPPLY AGREEMENT", query_id="Anti-Assignment")
    label(item, ben, 1, [[0, 16]])
    admin = make_user(django_user_model, "boss", "admin")
    reader = make_user(django_user_model, "reader", "stakeholder")
    return contract_set, pool, item, admin, reader


def test_an_admin_rules_on_a_disagreement_side_by_side_and_freezes_with_one_button(labelled):
    contract_set, pool, item, admin, _ = labelled
    client = client_for(admin)
    page = client.get(f"/cuad/contracts/{contract_set.pk}/gold/").content.decode()
    assert "the lawyers disagree on presence" in page and "Freeze gold set" in page
    url = f"/cuad/contracts/{contract_set.pk}/gold/adjudicate/{pool.public_id}/{item.public_id}/"
    shown = client.get(url).content.decode()
    assert "Lawyer A" in shown and "Lawyer B" in shown and 'title="B"' in shown
    refused = client.post(url, {"ruling": "offsets", "offsets": "9-x"})
    assert refused.status_code == 400 and "is not &#x27;start-end&#x27;" in refused.content.decode()
    assert client.post(url, {"ruling": "absent", "note": "Nothing on assignment"}).status_code == 302
    assert "the lawyers disagree" not in client.get(f"/cuad/contracts/{contract_set.pk}/gold/").content.decode()
    frozen = client.post(f"/cuad/contracts/{contract_set.pk}/gold/freeze/")
    gold = GoldSet.objects.get()
    assert frozen.status_code == 302 and frozen["Location"].endswith(f"/gold/v{gold.version}/")
    assert gold.counts["contracts"] == 4 and gold.counts["adjudicated"] == 1
    detail = client.get(frozen["Location"]).content.decode()
    assert "1 ruled by boss after the lawyers disagreed (adjudicated)" in detail
    assert "ann, ben" in detail and "gold.json" in detail and "gold.provenance.json" in detail
    sidecar = json.loads(client.get(f"/cuad/contracts/{contract_set.pk}/gold/v1/gold.provenance.json").content)
    assert {e["procedure"] for e in sidecar["entries"]} == {"lawyer_blind", "adjudicated"}
    body = client.get(f"/cuad/contracts/{contract_set.pk}/gold/v1/gold.json").content
    assert json.loads(body)["data"][0]["title"] == "ALPHA-DISTRIBUTOR AGREEMENT"
    assert client.get(f"/cuad/contracts/{contract_set.pk}/gold/v1/gold.csv").content.startswith(b"contract_set,")
    assert client.get(f"/cuad/contracts/{contract_set.pk}/gold/v9/").status_code == 404
    assert "v1" in client.get(f"/cuad/contracts/{contract_set.pk}/").content.decode()


def test_readers_see_gold_sets_but_cannot_adjudicate_or_freeze(labelled):
    contract_set, pool, item, _, reader = labelled
    client = client_for(reader)
    assert client.get(f"/cuad/contracts/{contract_set.pk}/gold/").status_code == 200
    url = f"/cuad/contracts/{contract_set.pk}/gold/adjudicate/{pool.public_id}/{item.public_id}/"
    assert client.get(url).status_code == 403
    assert client.post(f"/cuad/contracts/{contract_set.pk}/gold/freeze/").status_code == 403
    assert not GoldSet.objects.exists()


def test_the_api_lists_gold_sets_and_serves_one_with_its_exports(labelled):
    contract_set, pool, item, admin, reader = labelled
    client = client_for(admin)
    client.post(f"/cuad/contracts/{contract_set.pk}/gold/adjudicate/{pool.public_id}/{item.public_id}/",
                {"ruling": "absent"})
    client.post(f"/cuad/contracts/{contract_set.pk}/gold/freeze/")
    api = client_for(reader)
    listed = api.get(f"/api/v1/cuad/contract-sets/{contract_set.pk}/gold-sets/").json()
    assert [g["version"] for g in listed["gold_sets"]] == [1] and listed["gold_sets"][0]["contracts"] == 4
    detail = api.get(f"/api/v1/cuad/contract-sets/{contract_set.pk}/gold-sets/1/").json()
    assert detail["counts"]["adjudicated"] == 1 and detail["sha256"] == GoldSet.objects.get().sha256
    (statement,) = detail["statement"]
    assert statement["by_procedure"] == {"lawyer_blind": 11, "adjudicated": 1}
    assert statement["lawyers"] == ["ann", "ben"]
    assert {row["category"] for row in detail["agreement"]} >= {"Governing Law", "ALL"}
    exported = api.get(f"/api/v1/cuad/contract-sets/{contract_set.pk}/gold-sets/1/cuad.json")
    assert exported.status_code == 200 and len(json.loads(exported.content)["data"]) == 4
    assert api.get(f"/api/v1/cuad/contract-sets/{contract_set.pk}/gold-sets/2/").status_code == 404
    frozen = client.post(f"/api/v1/cuad/contract-sets/{contract_set.pk}/gold-sets/")
    assert frozen.status_code == 200 and frozen.json()["created"] is False
    assert api.post(f"/api/v1/cuad/contract-sets/{contract_set.pk}/gold-sets/").status_code == 403


def test_the_runs_page_forms_name_the_gold_set_when_it_is_the_only_dataset(labelled):
    contract_set, pool, item, admin, _ = labelled
    client = client_for(admin)
    client.post(f"/cuad/contracts/{contract_set.pk}/gold/adjudicate/{pool.public_id}/{item.public_id}/",
                {"ruling": "absent"})
    client.post(f"/cuad/contracts/{contract_set.pk}/gold/freeze/")
    dataset = dataset_of_gold_set(contract_set_id=contract_set.pk, version=1)
    # No CUAD release is loaded: the page shows no dataset choice, so the form itself names the gold set (the
    # form posts to /cuad/runs/ without the query string; without the field the run went to CUAD's, none).
    page = client.get(f"/cuad/runs/?dataset={dataset.pk}").content.decode()
    assert 'data-testid="dataset-select"' not in page
    assert f'<input type="hidden" name="dataset" value="{dataset.pk}">' in page
    gold_page = client.get(f"/cuad/contracts/{contract_set.pk}/gold/v1/").content.decode()
    link = gold_page.split('data-testid="gold-summary-link"')[0].rsplit("<a ", 1)[1]
    assert f'href="/cuad/scorecard/summary/?dataset={dataset.pk}"' in link
