"""The suite workbench: drafts written, checked live with the import rules, frozen exactly as ``import_suite``
freezes, exported as JSON and YAML that import back to the same hash, re-versioned with a visible diff."""

from __future__ import annotations

import json

import pytest

from benchmarks.suites.files import SuiteInvalid, suite_load
from benchmarks.suites.models import Suite, SuiteDraft
from benchmarks.suites.services import (
    suite_check,
    suite_draft_create,
    suite_draft_edit,
    suite_draft_freeze,
    suite_import,
)
from benchmarks.suites.workbench import DraftEditError, FamilyFields, QueryFields, family_add, query_add, query_save
from tests.factories import client_for, make_user

QUESTION = ("When may a police officer take a child into protective custody without the parents' consent or a "
            "court order?")


def _edit(client, draft: SuiteDraft, htmx: bool = False, **data):
    headers = {"HTTP_HX_REQUEST": "true"} if htmx else {}
    return client.post(f"/benchmarks/suites/workbench/{draft.pk}/edit/", data, **headers)


def _problems(draft: SuiteDraft) -> list[str]:
    from benchmarks.suites.services import suite_draft_check

    draft.refresh_from_db()
    return [str(p) for p in suite_draft_check(draft=draft).problems]


def _small_draft(client, owner) -> SuiteDraft:
    """Through the pages: a dev family, one ranking query with a target, one control of each kind."""
    response = client.post("/benchmarks/suites/workbench/", {"name": "wb_small", "corpus": "nrs"})
    assert response.status_code == 302
    draft = SuiteDraft.objects.get(owner=owner)
    assert response["Location"] == f"/benchmarks/suites/workbench/{draft.pk}/"
    _edit(client, draft, action="header", name="wb_small", version="1", corpus="nrs",
          description="Written in the workbench", nominated_by="J. Lawyer", synthetic="true")
    _edit(client, draft, action="family-add", id="custody", split="dev", description="protective custody")
    _edit(client, draft, action="query-add", id="dev-01", kind="ranking")
    _edit(client, draft, action="query-save", index="0", expect="dev-01", id="dev-01", kind="ranking", split="dev",
          family="custody", text=QUESTION)
    _edit(client, draft, action="target-add", index="0", expect="dev-01", citation="NRS 432B.390")
    _edit(client, draft, action="query-add", id="oc-01", kind="outside_corpus")
    _edit(client, draft, action="query-save", index="1", expect="oc-01", id="oc-01", kind="outside_corpus",
          text="How many days' notice does a summary eviction need?")
    _edit(client, draft, action="query-add", id="ec-01", kind="exact_citation")
    _edit(client, draft, action="query-save", index="2", expect="ec-01", id="ec-01", kind="exact_citation",
          text="N.R.S. 432B.220", expected_citation="Nev. Rev. Stat. § 432B.220")
    draft.refresh_from_db()
    return draft


@pytest.fixture
def admin(django_user_model, db):
    return make_user(django_user_model, "wb_admin", "admin")


@pytest.fixture
def admin_client(admin):
    return client_for(admin)


# --------------------------------------------------------------------------- live checks: the import rules


def test_a_new_draft_is_refused_for_each_missing_piece_naming_the_query_and_field(nrs_imported, admin):
    draft = suite_draft_create(owner=admin, name="wb_checks", corpus="nrs")
    assert _problems(draft) == ["suite: queries: required (a non-empty list)"]

    def add_ranking_query(doc):
        family_add(doc, FamilyFields(id="custody", split="dev"))
        query_add(doc, qid="dev-01", kind="ranking")

    suite_draft_edit(draft=draft, edit=add_ranking_query)
    problems = _problems(draft)
    assert "dev-01: text: required" in problems
    assert "dev-01: split: required for a ranking query" in problems
    assert "dev-01: family: required for a ranking query" in problems
    assert "dev-01: targets: a ranking query needs at least one nominated target" in problems


def test_a_target_outside_the_pinned_snapshot_is_named_by_query_and_field(nrs_imported, admin, admin_client):
    draft = _small_draft(admin_client, admin)
    assert _problems(draft) == []
    _edit(admin_client, draft, action="target-add", index="0", expect="dev-01", citation="NRS 999.999")
    assert _problems(draft) == ["dev-01: targets[1].citation: NRS 999.999 is not in the nrs corpus snapshot"]
    page = admin_client.get(f"/benchmarks/suites/workbench/{draft.pk}/").content.decode()
    assert "dev-01: targets[1].citation: NRS 999.999 is not in the nrs corpus snapshot" in page
    assert 'data-testid="freeze" disabled' in page


def test_a_family_that_crosses_splits_is_refused_on_the_query_that_crosses(nrs_imported, admin, admin_client):
    draft = _small_draft(admin_client, admin)
    _edit(admin_client, draft, action="family-save", index="0", expect="custody", id="custody", split="",
          description="")
    _edit(admin_client, draft, action="query-add", id="ho-01", kind="ranking")
    _edit(admin_client, draft, action="query-save", index="3", expect="ho-01", id="ho-01", kind="ranking",
          split="heldout", family="custody", text="Who may hold a child in protective custody?")
    _edit(admin_client, draft, action="target-add", index="3", expect="ho-01", citation="NRS 432B.390")
    assert _problems(draft) == ["ho-01: family: family 'custody' used in both dev (dev-01) and heldout; "
                                "topic families must not cross splits"]


def test_a_citation_written_as_lawyers_write_it_is_accepted_and_frozen_in_the_corpus_form(nrs_imported, admin,
                                                                                          admin_client):
    draft = _small_draft(admin_client, admin)
    _edit(admin_client, draft, action="target-remove", index="0", expect="dev-01", position="0",
          citation="NRS 432B.390")
    _edit(admin_client, draft, action="target-add", index="0", expect="dev-01",
          citation="Nev. Rev. Stat. Ann. § 432B.390(1)(a)")
    assert _problems(draft) == []
    suite = suite_draft_freeze(draft=draft, user=admin)
    definition = json.loads(suite.definition)
    assert definition["queries"][0]["targets"][0]["citation"] == "NRS 432B.390"
    assert definition["queries"][2]["expected_citation"] == "NRS 432B.220"
    assert definition["queries"][0]["targets"][0]["nominated_by"] == "J. Lawyer"
    assert definition["synthetic"] is True


def test_an_unreadable_citation_is_refused_naming_the_query_and_field(nrs_imported, admin, admin_client):
    draft = _small_draft(admin_client, admin)
    _edit(admin_client, draft, action="query-save", index="2", expect="ec-01", id="ec-01", kind="exact_citation",
          text="the abuse statute", expected_citation="the abuse statute")
    assert _problems(draft) == ["ec-01: expected_citation: the abuse statute is not in the nrs corpus snapshot"]


def test_the_check_refuses_a_version_already_frozen_with_another_definition(nrs_imported, admin, admin_client):
    draft = _small_draft(admin_client, admin)
    suite_draft_freeze(draft=draft, user=admin)
    other = _small_draft_copy(admin, draft, text="How long may the police hold a child in protective custody?")
    problems = _problems(other)
    assert len(problems) == 1 and problems[0].startswith("suite: version: wb_small v1 is frozen with sha256")


def _small_draft_copy(owner, draft: SuiteDraft, *, text: str) -> SuiteDraft:
    document = json.loads(json.dumps(draft.document))
    document["queries"][0]["text"] = text
    return SuiteDraft.objects.create(owner=owner, document=document)


# --------------------------------------------------------------------------- edits that cannot be applied


def test_an_edit_from_a_stale_page_is_refused_naming_the_query(nrs_imported, admin, admin_client):
    draft = _small_draft(admin_client, admin)
    before = draft.document
    response = _edit(admin_client, draft, htmx=True, action="query-save", index="0", expect="dev-99", id="x",
                     kind="ranking", text="changed")
    assert response.status_code == 200
    assert "dev-99: id: query 1 is no longer &#x27;dev-99&#x27;" in response.content.decode()
    draft.refresh_from_db()
    assert draft.document == before


def test_nominating_the_same_section_twice_is_refused_even_in_another_form(nrs_imported, admin):
    draft = suite_draft_create(owner=admin, name="wb_twice", corpus="nrs")

    def setup(doc):
        query_add(doc, qid="dev-01", kind="ranking")

    suite_draft_edit(draft=draft, edit=setup)
    from benchmarks.suites.workbench import target_add

    suite_draft_edit(draft=draft, edit=lambda doc: target_add(doc, index=0, expect="dev-01",
                                                              citation="NRS 432B.390"))
    with pytest.raises(DraftEditError, match=r"dev-01: targets\[0\].citation: N.R.S. 432B.390 is already a target"):
        suite_draft_edit(draft=draft, edit=lambda doc: target_add(doc, index=0, expect="dev-01",
                                                                  citation="N.R.S. 432B.390"))


def test_renaming_a_family_renames_it_in_its_queries(db):
    doc = {"families": [{"id": "a", "split": "dev", "description": ""}], "queries": []}
    query_add(doc, qid="dev-01", kind="ranking")
    query_save(doc, index=0, expect="dev-01", fields=QueryFields(id="dev-01", kind="ranking", family="a"))
    from benchmarks.suites.workbench import family_save

    family_save(doc, index=0, expect="a", fields=FamilyFields(id="custody", split="dev"))
    assert doc["queries"][0]["family"] == "custody" and doc["families"][0]["id"] == "custody"


# --------------------------------------------------------------------------- freezing and exports


def test_freezing_gives_the_same_suite_and_hash_as_importing_the_draft_and_its_exports(nrs_imported, admin,
                                                                                       admin_client):
    draft = _small_draft(admin_client, admin)
    would_be = admin_client.get(f"/benchmarks/suites/workbench/{draft.pk}/").content.decode()
    response = admin_client.post(f"/benchmarks/suites/workbench/{draft.pk}/freeze/")
    suite = Suite.objects.get(name="wb_small", version=1)
    assert response.status_code == 302 and response["Location"] == f"/benchmarks/suites/{suite.pk}/"
    assert suite.sha256 in would_be  # the page said which hash freezing would give
    draft.refresh_from_db()
    assert draft.frozen_suite == suite and suite.frozen_by == "wb_admin"
    # importing the draft's document as a file is a no-op that finds this very suite
    assert suite_import(raw=json.dumps(draft.document).encode(), filename="again.json") == (suite, False)
    for fmt in ("json", "yaml"):
        exported = admin_client.get(f"/benchmarks/suites/{suite.pk}/export/{fmt}")
        assert exported.status_code == 200
        assert f'filename="wb_small-v1.{fmt}"' in exported["Content-Disposition"]
        definition, digest = suite_check(data=suite_load(exported.content, filename=f"suite.{fmt}"))
        assert digest == suite.sha256
        assert definition == json.loads(suite.definition)
        assert suite_import(raw=exported.content, filename=f"suite.{fmt}") == (suite, False)


@pytest.mark.parametrize("name", ["nrs_v1.json", "nrs_dev_v1.json"])
def test_the_shipped_suites_export_as_json_and_yaml_that_read_back_to_their_hash(nrs_imported, admin_client,
                                                                                 name):
    from tests.benchmarks.conftest import EXAMPLE_SUITE

    path = EXAMPLE_SUITE.parent / name
    suite, _ = suite_import(raw=path.read_bytes(), filename=str(path))
    for fmt in ("json", "yaml"):
        raw = admin_client.get(f"/benchmarks/suites/{suite.pk}/export/{fmt}").content
        _, digest = suite_check(data=suite_load(raw, filename=f"x.{fmt}"))
        assert digest == suite.sha256, fmt
    assert "§" in admin_client.get(f"/benchmarks/suites/{suite.pk}/export/yaml").content.decode() \
        or name == "nrs_v1.json"


def test_a_draft_with_problems_is_not_frozen_and_nothing_is_written(nrs_imported, admin, admin_client):
    draft = _small_draft(admin_client, admin)
    _edit(admin_client, draft, action="query-save", index="0", expect="dev-01", id="dev-01", kind="ranking",
          split="dev", family="nowhere", text=QUESTION)
    response = admin_client.post(f"/benchmarks/suites/workbench/{draft.pk}/freeze/")
    assert response.status_code == 400
    assert "dev-01: family: unknown family &#x27;nowhere&#x27;" in response.content.decode()
    assert not Suite.objects.exists()
    draft.refresh_from_db()
    assert draft.frozen_suite is None
    with pytest.raises(SuiteInvalid):
        suite_draft_freeze(draft=draft, user=admin)


def test_a_frozen_draft_is_read_only_on_its_page_and_to_every_post(nrs_imported, admin, admin_client):
    draft = _small_draft(admin_client, admin)
    suite = suite_draft_freeze(draft=draft, user=admin)
    before = SuiteDraft.objects.get(pk=draft.pk).document
    page = admin_client.get(f"/benchmarks/suites/workbench/{draft.pk}/").content.decode()
    assert f'href="/benchmarks/suites/{suite.pk}/" data-testid="frozen-suite"' in page
    assert 'name="action"' not in page and 'data-testid="freeze"' not in page and "search-panel" not in page
    for data in ({"action": "query-save", "index": "0", "expect": "dev-01", "id": "dev-01", "kind": "ranking",
                  "text": "changed"},
                 {"action": "target-add", "index": "0", "expect": "dev-01", "citation": "NRS 432B.220"},
                 {"action": "header", "name": "renamed", "version": "1", "corpus": "nrs"}):
        response = _edit(admin_client, draft, **data)
        assert response.status_code == 409
        assert f"draft #{draft.pk} is frozen as wb_small v1 and is read-only" in response.content.decode()
    assert admin_client.post(f"/benchmarks/suites/workbench/{draft.pk}/freeze/").status_code == 409
    assert SuiteDraft.objects.get(pk=draft.pk).document == before
    assert Suite.objects.count() == 1


# --------------------------------------------------------------------------- who may write


def test_only_admins_write_suites(nrs_imported, admin, admin_client, reviewer_client, stakeholder_client, client):
    draft = _small_draft(admin_client, admin)
    suite = suite_draft_freeze(draft=draft, user=admin)
    open_draft = suite_draft_create(owner=admin, name="wb_open", corpus="nrs")
    writes = [
        ("get", "/benchmarks/suites/workbench/", {}),
        ("post", "/benchmarks/suites/workbench/", {"name": "x", "corpus": "nrs"}),
        ("get", f"/benchmarks/suites/workbench/{open_draft.pk}/", {}),
        ("get", f"/benchmarks/suites/workbench/{open_draft.pk}/search/", {"q": "custody"}),
        ("post", f"/benchmarks/suites/workbench/{open_draft.pk}/edit/", {"action": "query-add", "id": "x",
                                                                         "kind": "ranking"}),
        ("post", f"/benchmarks/suites/workbench/{open_draft.pk}/freeze/", {}),
        ("post", f"/benchmarks/suites/{suite.pk}/new-version/", {}),
    ]
    for other in (reviewer_client, stakeholder_client):
        for method, url, data in writes:
            assert getattr(other, method)(url, data).status_code == 403, (method, url)
    for method, url, data in writes:
        response = getattr(client, method)(url, data)
        assert response.status_code == 302 and response["Location"].startswith("/accounts/login/"), url
    open_draft.refresh_from_db()
    assert open_draft.document["queries"] == [] and SuiteDraft.objects.count() == 2
    # reading a frozen suite and its files is for whoever reads reports
    assert stakeholder_client.get(f"/benchmarks/suites/{suite.pk}/export/yaml").status_code == 200
    assert reviewer_client.get(f"/benchmarks/suites/{suite.pk}/export/yaml").status_code == 403
    assert 'data-testid="new-version"' not in stakeholder_client.get(f"/benchmarks/suites/{suite.pk}/").content.decode()


# --------------------------------------------------------------------------- search and nominate


def test_searching_then_nominating_in_one_click_updates_the_query_and_the_check(nrs_imported, admin, admin_client):
    draft = suite_draft_create(owner=admin, name="wb_search", corpus="nrs")

    def setup(doc):
        family_add(doc, FamilyFields(id="custody", split="dev"))
        query_add(doc, qid="dev-01", kind="ranking")
        query_save(doc, index=0, expect="dev-01",
                   fields=QueryFields(id="dev-01", kind="ranking", split="dev", family="custody", text=QUESTION))

    suite_draft_edit(draft=draft, edit=setup)
    assert _problems(draft) == ["dev-01: targets: a ranking query needs at least one nominated target"]
    found = admin_client.get(f"/benchmarks/suites/workbench/{draft.pk}/search/",
                             {"q": "protective custody child", "query": "0", "expect": "dev-01"},
                             HTTP_HX_REQUEST="true").content.decode()
    assert 'data-citation="NRS 432B.390"' in found and "Nominate as target of dev-01" in found
    assert "<html" not in found  # a fragment
    response = _edit(admin_client, draft, htmx=True, action="target-add", index="0", expect="dev-01",
                     citation="NRS 432B.390", query="0", q="protective custody child")
    body = response.content.decode()
    assert response.status_code == 200 and 'id="q-0"' in body
    assert 'id="problems" class="wb-problems" data-testid="problems" hx-swap-oob="true"' in body
    assert 'data-testid="ready"' in body  # the check says it can be frozen now
    assert 'data-testid="nominated">target of dev-01' in body  # the search result says so too
    assert _problems(draft) == []
    draft.refresh_from_db()
    assert draft.document["queries"][0]["targets"] == [{"citation": "NRS 432B.390"}]


def test_a_citation_in_the_search_box_finds_its_section_first(nrs_imported, admin, admin_client):
    draft = suite_draft_create(owner=admin, name="wb_cite", corpus="nrs")
    page = admin_client.get(f"/benchmarks/suites/workbench/{draft.pk}/search/", {"q": "N.R.S. 432B.390"})
    assert page.status_code == 200
    body = page.content.decode()
    first = body.index('data-testid="result"')
    assert body.index('data-citation="NRS 432B.390"') == first + len('data-testid="result" ')
    assert "<html" in body  # without htmx, the whole page


def test_reading_a_provision_shows_its_text(nrs_imported, admin, admin_client):
    from benchmarks.corpus.models import Provision

    provision = Provision.objects.filter(citation="NRS 432B.390").first()
    draft = suite_draft_create(owner=admin, name="wb_read", corpus="nrs")
    body = admin_client.get(f"/benchmarks/suites/workbench/{draft.pk}/provisions/{provision.pk}/",
                            HTTP_HX_REQUEST="true").content.decode()
    assert 'data-testid="reading"' in body and provision.body.split()[0] in body
    assert "<html" not in body
    # without htmx: the whole workbench, with the provision open beside the draft
    page = admin_client.get(f"/benchmarks/suites/workbench/{draft.pk}/provisions/{provision.pk}/",
                            {"q": "custody"}).content.decode()
    assert "<html" in page and 'data-testid="reading"' in page and 'data-testid="problems"' in page
    hrs_draft = suite_draft_create(owner=admin, name="wb_read_hrs", corpus="hrs")
    assert admin_client.get(f"/benchmarks/suites/workbench/{hrs_draft.pk}/provisions/{provision.pk}/").status_code \
        == 404


# --------------------------------------------------------------------------- new versions and their differences


def test_a_new_version_starts_as_a_copy_and_the_suite_page_shows_what_changed(example_suite, admin, admin_client):
    response = admin_client.post(f"/benchmarks/suites/{example_suite.pk}/new-version/")
    draft = SuiteDraft.objects.get(based_on=example_suite)
    assert response.status_code == 302 and response["Location"] == f"/benchmarks/suites/workbench/{draft.pk}/"
    assert draft.document == {**json.loads(example_suite.definition), "version": 2}
    # asking again opens the same draft rather than a second copy
    admin_client.post(f"/benchmarks/suites/{example_suite.pk}/new-version/")
    assert SuiteDraft.objects.filter(based_on=example_suite).count() == 1
    queries = draft.document["queries"]
    first, second = queries[0]["id"], queries[1]["id"]
    _edit(admin_client, draft, action="query-save", index="0", expect=first, id=first, kind="ranking",
          split=queries[0]["split"], family=queries[0]["family"], text="A rewritten question about shall and may?")
    _edit(admin_client, draft, action="target-add", index="0", expect=first, citation="NRS 0.039")
    _edit(admin_client, draft, action="query-remove", index="1", expect=second)
    _edit(admin_client, draft, action="family-add", id="new-family", split="heldout", description="")
    assert _problems(draft) == []
    v2 = suite_draft_freeze(draft=draft, user=admin)
    assert v2.version == 2 and v2.sha256 != example_suite.sha256
    page = admin_client.get(f"/benchmarks/suites/{v2.pk}/").content.decode()
    assert "Changes from v1 to v2" in page
    assert f'data-testid="query-removed">removed <span class="mono">{second}</span>' in page
    assert 'data-testid="family-added">added <span class="mono">new-family</span> (heldout)' in page
    assert "<ins>A rewritten question about shall and may?</ins>" in page
    assert 'data-testid="targets-added">targets added: NRS 0.039' in page
    assert f"workbench draft #{draft.pk}" in page


def test_the_diff_names_every_kind_of_change(db):
    from benchmarks.suites.diff import definition_diff

    target = {"citation": "NRS 1.010", "provisional": True, "nominated_by": "a", "note": ""}
    old = {"version": 1, "corpus": "nrs", "description": "d", "nominated_by": "a",
           "families": [{"id": "f", "split": "dev", "description": ""}, {"id": "g", "split": "dev", "description": ""}],
           "queries": [
               {"id": "q1", "kind": "ranking", "split": "dev", "family": "f", "text": "one", "expected_citation": "",
                "targets": [target]},
               {"id": "q2", "kind": "outside_corpus", "split": "", "family": "", "text": "two",
                "expected_citation": "", "targets": []}]}
    new = {"version": 2, "corpus": "nrs", "description": "d2", "nominated_by": "a", "synthetic": False,
           "families": [{"id": "f", "split": "heldout", "description": ""}],
           "queries": [
               {"id": "q1", "kind": "ranking", "split": "heldout", "family": "f", "text": "one",
                "expected_citation": "", "targets": [{**target, "provisional": False},
                                                     {**target, "citation": "NRS 1.020"}]},
               {"id": "q3", "kind": "outside_corpus", "split": "", "family": "", "text": "three",
                "expected_citation": "", "targets": []}]}
    diff = definition_diff(old, new)
    assert [(c.field, c.old, c.new) for c in diff.suite_fields] == [("description", "d", "d2"),
                                                                     ("synthetic", None, False)]
    assert [f["id"] for f in diff.families_removed] == ["g"] and diff.families_added == []
    assert [(fid, [(c.field, c.old, c.new) for c in cs]) for fid, cs in diff.families_changed] == [
        ("f", [("split", "dev", "heldout")])]
    assert [q["id"] for q in diff.queries_added] == ["q3"] and [q["id"] for q in diff.queries_removed] == ["q2"]
    (change,) = diff.queries_changed
    assert change.qid == "q1" and not change.text_changed
    assert [(c.field, c.old, c.new) for c in change.fields] == [("split", "dev", "heldout")]
    assert change.targets_added == ["NRS 1.020"] and change.targets_removed == []
    assert [(c, [(x.field, x.old, x.new) for x in cs]) for c, cs in change.targets_changed] == [
        ("NRS 1.010", [("provisional", True, False)])]
    assert definition_diff(old, old).empty


# --------------------------------------------------------------------------- API


def test_the_api_lists_each_suite_file_and_serves_it(example_suite, stakeholder_client, reviewer_client):
    detail = stakeholder_client.get(f"/api/v1/benchmarks/suites/{example_suite.pk}/").json()
    assert detail["exports"] == {
        "json": f"http://testserver/api/v1/benchmarks/suites/{example_suite.pk}/export/json",
        "yaml": f"http://testserver/api/v1/benchmarks/suites/{example_suite.pk}/export/yaml"}
    for fmt in ("json", "yaml"):
        response = stakeholder_client.get(f"/api/v1/benchmarks/suites/{example_suite.pk}/export/{fmt}")
        assert response.status_code == 200
        _, digest = suite_check(data=suite_load(response.content, filename=f"x.{fmt}"))
        assert digest == example_suite.sha256
    assert stakeholder_client.get(f"/api/v1/benchmarks/suites/{example_suite.pk}/export/xml").status_code == 404
    assert reviewer_client.get(f"/api/v1/benchmarks/suites/{example_suite.pk}/export/json").status_code == 403


def test_the_workbench_warns_before_and_at_freeze_that_one_family_carries_no_interval(nrs_imported, admin,
                                                                                      admin_client):
    draft = _small_draft(admin_client, admin)  # one development family
    warning = ("Development split: 1 query family: too few for an interval or a p-value (at least 3 needed): its "
               "figures will have no interval and no p-value; add families to this split for intervals.")
    page = admin_client.get(f"/benchmarks/suites/workbench/{draft.pk}/").content.decode()
    assert 'data-testid="interval-warnings"' in page and warning in page
    response = admin_client.post(f"/benchmarks/suites/workbench/{draft.pk}/freeze/", follow=True)
    assert response.status_code == 200 and warning in response.content.decode()  # said again once frozen


def test_it_marks_a_split_of_three_to_nine_families_as_few_units_and_says_nothing_from_ten():
    from benchmarks.suites.workbench import split_unit_warnings

    def document(families: int) -> dict:
        return {"queries": [{"id": f"q{i}", "kind": "ranking", "split": "heldout", "family": f"f{i}"}
                            for i in range(families)] + [{"id": "oc", "kind": "outside_corpus"}]}

    assert split_unit_warnings(document(6)) == [
        "Held-out split: few units (n=6 query families): percentile-bootstrap intervals under-cover with so few "
        "units: its intervals will be shown marked as few units."]
    assert split_unit_warnings(document(10)) == []
