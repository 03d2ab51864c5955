"""The contract pages and API: upload in the browser's form, read a contract in windows, search it; the taxonomy
published as versions (CUAD's 41 by default, a subset, renamed, added)."""

from __future__ import annotations

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.db import connection, transaction
from django.db.utils import DatabaseError

from grading.contracts.models import ClauseTaxonomy, ContractSet
from grading.contracts.services import TaxonomyError, contract_set_get_or_create, cuad_categories, taxonomy_publish
from tests.factories import client_for
from tests.grading.contracts import files

pytestmark = pytest.mark.django_db


def test_a_new_set_starts_with_cuads_categories_and_their_descriptions():
    contract_set, created = contract_set_get_or_create(name="Firm A")
    taxonomy = contract_set.taxonomies.get()
    assert created and taxonomy.version == 1
    cuad = cuad_categories()
    assert len(cuad) == 41
    assert [c["name"] for c in taxonomy.categories] == [c["name"] for c in cuad]
    assert {c["origin"] for c in taxonomy.categories} == {"cuad"}
    governing = next(c for c in taxonomy.categories if c["name"] == "Governing Law")
    assert "law" in governing["description"].lower()


def test_a_taxonomy_version_keeps_what_came_from_cuad_and_what_the_firm_added():
    contract_set, _ = contract_set_get_or_create(name="Firm A")
    cuad = {c["name"]: c["description"] for c in cuad_categories()}
    rows = [{"name": "Governing Law", "description": cuad["Governing Law"], "cuad_name": "Governing Law"},
            {"name": "Choice of law", "description": "Which law governs", "cuad_name": "Parties"},
            {"name": "Data protection", "description": "GDPR processing terms"}]
    v2 = taxonomy_publish(contract_set=contract_set, categories=rows, user_name="rita", note="our three")
    assert v2.version == 2
    assert [c["origin"] for c in v2.categories] == ["cuad", "cuad:Parties", "firm"]
    # The same categories again publish nothing new.
    assert taxonomy_publish(contract_set=contract_set, categories=rows, user_name="rita").pk == v2.pk
    with pytest.raises(TaxonomyError, match="category 2: name 'governing law' is also category 1"):
        taxonomy_publish(contract_set=contract_set, user_name="rita",
                         categories=[rows[0], {"name": "governing law", "description": "x"}])
    with pytest.raises(TaxonomyError, match="category 1: cuad_name 'Nope' is not one of CUAD's categories"):
        taxonomy_publish(contract_set=contract_set, user_name="rita",
                         categories=[{"name": "X", "description": "x", "cuad_name": "Nope"}])
    with pytest.raises(TaxonomyError, match="category 1: a category the firm adds needs a description"):
        taxonomy_publish(contract_set=contract_set, user_name="rita", categories=[{"name": "X"}])
    with pytest.raises(DatabaseError), transaction.atomic(), connection.cursor() as cursor:
        cursor.execute("DELETE FROM grading_clausetaxonomy WHERE id = %s", [v2.pk])
    assert ClauseTaxonomy.objects.filter(pk=v2.pk).exists()


def test_an_admin_uploads_files_in_the_page_and_each_gets_its_outcome(admin_user_):
    client = client_for(admin_user_)
    response = client.post("/cuad/contracts/", {"name": "Firm A"})
    contract_set = ContractSet.objects.get(name="Firm A")
    assert response.status_code == 302 and response["Location"] == f"/cuad/contracts/{contract_set.pk}/"
    response = client.post(f"/cuad/contracts/{contract_set.pk}/", {"files": [
        SimpleUploadedFile("supply.pdf", files.pdf_with_text(), content_type="application/pdf"),
        SimpleUploadedFile("nda.docx", files.docx_bytes()),
        SimpleUploadedFile("scan.pdf", files.pdf_image_only(), content_type="application/pdf"),
    ]})
    html = response.content.decode()
    assert response.status_code == 200
    assert "imported as &#x27;supply&#x27; (3 pages" in html and "imported as &#x27;nda&#x27;" in html
    assert "scan.pdf</strong>:\n  refused: the PDF has no text layer" in html
    assert contract_set.contracts.count() == 2
    # The set's JSON lists the contracts with their hashes; the taxonomy is CUAD's.
    data = client.get(f"/cuad/contracts/{contract_set.pk}/contract-set.json").json()
    assert [c["title"] for c in data["contracts"]] == ["nda", "supply"]
    assert data["taxonomy"]["version"] == 1 and len(data["taxonomy"]["categories"]) == 41


def test_a_contract_opens_in_windows_of_its_pages_and_search_names_the_page(admin_user_):
    contract_set, _ = contract_set_get_or_create(name="Firm A")
    pages = tuple(f"Page {n} text. " + ("Governing Law applies. " if n == 7 else "Nothing here. ") for n in
                  range(1, 13))
    from grading.contracts.services import contract_import

    member = contract_import(contract_set=contract_set, filename="long.pdf", data=files.pdf_with_text(pages)).contract
    client = client_for(admin_user_)
    html = client.get(f"/cuad/contracts/{contract_set.pk}/{member.pk}/").content.decode()
    assert "Pages 1–5" in html and 'id="unit-5"' in html and 'id="unit-6"' not in html
    assert "?start=6" in html  # next window
    html = client.get(f"/cuad/contracts/{contract_set.pk}/{member.pk}/?q=governing+law").content.decode()
    assert "1 match for" in html and 'href="?start=7&amp;q=governing%20law#unit-7"' in html
    data = client.get(f"/cuad/contracts/{contract_set.pk}/{member.pk}/contract.json?start=7").json()
    assert data["window"]["first"] == 7 and data["window"]["last"] == 11  # the window opens at the page asked for


def test_readers_see_sets_but_only_admins_import_or_publish(stakeholder_user, reviewer_user):
    contract_set, _ = contract_set_get_or_create(name="Firm A")
    reader = client_for(stakeholder_user)
    assert reader.get(f"/cuad/contracts/{contract_set.pk}/").status_code == 200
    upload = SimpleUploadedFile("a.txt", b"Text.")
    assert reader.post(f"/cuad/contracts/{contract_set.pk}/", {"files": [upload]}).status_code == 403
    assert reader.post(f"/cuad/contracts/{contract_set.pk}/taxonomy/", {"rows": "0"}).status_code == 403
    assert client_for(reviewer_user).get("/cuad/contracts/").status_code == 403
    assert contract_set.contracts.count() == 0


def test_the_taxonomy_form_publishes_a_subset_with_a_renamed_and_an_added_category(admin_user_):
    contract_set, _ = contract_set_get_or_create(name="Firm A")
    client = client_for(admin_user_)
    html = client.get(f"/cuad/contracts/{contract_set.pk}/taxonomy/").content.decode()
    assert html.count('name="include-') == 41 + 3
    rows = {"rows": "44", "include-0": "on", "name-0": "Title of the agreement",
            "description-0": "The name of the contract", "cuad-0": "Document Name",
            "include-41": "on", "name-41": "Sanctions", "description-41": "Sanctions compliance", "cuad-41": ""}
    response = client.post(f"/cuad/contracts/{contract_set.pk}/taxonomy/", rows)
    assert response.status_code == 302
    taxonomy = contract_set.taxonomies.order_by("-version").first()
    assert taxonomy.version == 2
    assert taxonomy.categories == [
        {"name": "Title of the agreement", "description": "The name of the contract", "origin": "cuad:Document Name"},
        {"name": "Sanctions", "description": "Sanctions compliance", "origin": "firm"}]


def test_the_api_creates_a_set_imports_files_and_publishes_a_taxonomy(admin_user_):
    from rest_framework.test import APIClient

    api = APIClient()
    api.force_authenticate(admin_user_)
    created = api.post("/api/v1/cuad/contract-sets/", {"name": "Firm API"}, format="json")
    assert created.status_code == 201 and len(created.json()["taxonomy"]["categories"]) == 41
    pk = created.json()["id"]
    response = api.post(f"/api/v1/cuad/contract-sets/{pk}/contracts/", {"files": [
        SimpleUploadedFile("a.txt", b"Governing Law. Nevada."), SimpleUploadedFile("b.pdf", b"")]},
        format="multipart")
    assert response.status_code == 200
    assert [(o["filename"], o["status"]) for o in response.json()["outcomes"]] == [("a.txt", "imported"),
                                                                                   ("b.pdf", "refused")]
    response = api.post(f"/api/v1/cuad/contract-sets/{pk}/contracts/", {"files": [
        SimpleUploadedFile("b.pdf", b"")]}, format="multipart")
    assert response.status_code == 400 and response.json()["outcomes"][0]["detail"] == "the file is empty"
    response = api.post(f"/api/v1/cuad/contract-sets/{pk}/taxonomy/",
                        {"categories": [{"name": "Sanctions", "description": "Sanctions compliance"}]}, format="json")
    assert response.status_code == 201 and response.json()["version"] == 2
    detail = api.get(f"/api/v1/cuad/contract-sets/{pk}/").json()
    assert detail["taxonomy"]["categories"][0]["origin"] == "firm"
    assert [c["title"] for c in detail["contracts"]] == ["a"]


def test_an_admin_excludes_a_wrong_file_with_its_reason_and_every_figure_of_the_set_shows_it(admin_user_,
                                                                                          stakeholder_user):
    from grading.contracts.models import ContractExclusion
    from reviewapp.core.models import AppendOnlyError

    client = client_for(admin_user_)
    contract_set, _ = contract_set_get_or_create(name="Firm A")
    base = f"/cuad/contracts/{contract_set.pk}/"
    client.post(base, {"files": [SimpleUploadedFile("supply.txt", b"SUPPLY AGREEMENT\nGoverning law: Nevada.\n"),
                                 SimpleUploadedFile("vendorA.json", b'{"run": "vendorA", "extractions": []}')]})
    wrong = contract_set.contracts.get(title="vendorA")  # a run file dropped onto the contract upload
    page = f"{base}{wrong.pk}/"
    assert client_for(stakeholder_user).post(page, {"reason": "not mine to take"}).status_code == 403
    refused = client.post(page, {"reason": "  "})
    assert refused.status_code == 400 and "give a reason" in refused.content.decode()
    response = client.post(page, {"reason": "a run file (vendorA.json), not a contract"})
    assert response.status_code == 302 and response["Location"] == f"{base}#excluded"
    exclusion = ContractExclusion.objects.get(member=wrong)
    assert exclusion.reason == "a run file (vendorA.json), not a contract" and exclusion.excluded_by == "alice_admin"
    # Every place the set's figures are: its page, the list of sets, their JSON and CSV, the API.
    html = client.get(base).content.decode()
    assert '<span class="ci" data-testid="set-figures">1 · 1 excluded</span>' in html
    assert "a run file (vendorA.json), not a contract · excluded by alice_admin" in html
    assert html.count(f'href="{page}"') == 1  # listed once, under "Excluded", not among the contracts
    assert '<td class="num">1</td><td class="num">1</td>' in client.get("/cuad/contracts/").content.decode()
    data = client.get(f"{base}contract-set.json").json()
    assert data["contract_set"]["contracts"] == 1 and data["contract_set"]["excluded"] == 1
    assert {c["title"]: c["excluded_reason"] for c in data["contracts"]} == {
        "supply": "", "vendorA": "a run file (vendorA.json), not a contract"}
    assert "excluded_reason" in client.get(f"{base}contract-set.csv").content.decode().splitlines()[0]
    assert client.get("/cuad/contracts/contract-sets.json").json()["contract_sets"][0]["excluded"] == 1
    listed = client.get("/api/v1/cuad/contract-sets/").json()["contract_sets"]
    assert listed == [{"id": contract_set.pk, "name": "Firm A", "contracts": 1, "excluded": 1}]
    assert "Excluded from Firm A" in client.get(page).content.decode()
    assert "Contracts of the set: 1 (1 excluded, never labelled)." in client.get(f"{base}gold/").content.decode()
    # Recorded once and for good.
    again = client.post(page, {"reason": "twice"})
    assert again.status_code == 400 and "already excluded" in again.content.decode()
    with pytest.raises(AppendOnlyError, match="never deleted"):
        exclusion.delete()
