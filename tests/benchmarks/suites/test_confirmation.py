"""Lawyers confirm a suite's targets blind: a confirmation pool turns provisional targets into confirmed ones in a
new suite version (same canonical import, new hash), the report's population says "confirmed by N lawyers"
instead of "provisional", disagreements are adjudicated, rejected targets leave, and a lawyer's proposal is
confirmed only by other lawyers."""

from __future__ import annotations

import json
import re

import pytest
from django.test import Client

from benchmarks.reports.selectors import report_build
from benchmarks.retrieval.services import retrieval_run_create
from benchmarks.suites.confirmation import (
    ConfirmationError,
    confirmation_pool_declare,
    confirmation_state,
    suite_confirmed_version,
)
from benchmarks.suites.files import SuiteInvalid, suite_dump, suite_load, suite_normalise
from benchmarks.suites.models import NominatedTarget, TargetProposal
from benchmarks.suites.services import suite_import
from reviewapp.core.records.hashing import canonical_json, sha256_hex
from reviewapp.review.assignment.models import Assignment
from reviewapp.review.pools.refs import pool_model
from tests.benchmarks.suites.confirmation_fixtures import NOMINATOR, SECTIONS, confirm_suite
from tests.factories import make_user


def _population(suite) -> str:
    """The report's population box and its first caveat, as built for the report page."""
    report = report_build(run=retrieval_run_create(suite=suite, configuration="bm25-v1"), replicates=1000)
    return f"{report.population}\n{report.caveats[0]}"


def _grade(user, item_id: str, answer: str) -> str:
    """Grade one item through the reviewer's own page (the same workspace as passage grading)."""
    client = Client()
    client.force_login(user)
    page = client.get(f"/review/workspace/items/{item_id}/")
    assert page.status_code == 200
    html = page.content.decode()
    hidden = dict(re.findall(r'<input type="hidden" name="(\w+_hash)" value="([0-9a-f]+)">', html))
    assert set(hidden) == {"query_hash", "source_hash", "passage_hash"}
    response = client.post(f"/review/workspace/items/{item_id}/", {"target": answer, "action": "complete", **hidden})
    assert response.status_code in (200, 302)
    return html


def _items(user) -> dict[str, str]:
    """The confirmation items assigned to ``user``: citation -> public id."""
    return dict(Assignment.objects.filter(reviewer=user, pool__kind="target")
                .values_list("item__doc_id", "item__public_id"))


@pytest.fixture
def lawyers(django_user_model):
    return [make_user(django_user_model, name, "reviewer") for name in ("lena_lawyer", "lars_lawyer", "lia_lawyer")]


@pytest.mark.django_db
def test_a_confirmation_pool_turns_two_provisional_targets_into_confirmed_ones_and_the_report_says_so(
        lawyers, admin_user_):
    suite = confirm_suite()
    assert "targets nominated by assistant (not a lawyer), all provisional;" in _population(suite)
    pools = confirmation_pool_declare(suite=suite, reviewers=lawyers[:2], reviewers_per_item=2, created_by=admin_user_)
    assert [pool_model(p).items.count() for p in pools] == [2]
    assert confirmation_pool_declare(suite=suite, reviewers=lawyers[:2]) == []  # nothing new to declare

    for lawyer in lawyers[:2]:
        items = _items(lawyer)
        assert set(items) == {"NRS 999.010", "NRS 999.020"}
        body = {f"NRS {number}": text for number, _, text in SECTIONS}
        for citation, item_id in items.items():
            html = _grade(lawyer, item_id, "y")
            # Blind: the query and the provision, never who nominated it.
            assert NOMINATOR not in html and "assistant" not in html and "nominated" not in html
            assert body[citation] in html
    states = confirmation_state(suite=suite)
    assert [(s.qid, s.citation, s.state, s.lawyers, s.agreement) for s in states] == [
        ("d1", "NRS 999.010", "confirmed", 2, "unanimous"), ("h1", "NRS 999.020", "confirmed", 2, "unanimous")]

    confirmed, created = suite_confirmed_version(suite=suite, user=admin_user_)
    assert created and confirmed.version == 2 and confirmed.sha256 != suite.sha256
    assert list(NominatedTarget.objects.filter(query__suite=confirmed).values_list(
        "citation", "provisional", "confirmed_by")) == [
        ("NRS 999.010", False, {"lawyers": 2, "agreement": "unanimous"}),
        ("NRS 999.020", False, {"lawyers": 2, "agreement": "unanimous"})]
    # The new version is what importing its own export gives: the same canonical definition and hash.
    exported = suite_load(suite_dump(json.loads(confirmed.definition), fmt="yaml"), filename="v2.yaml")
    normalised = suite_normalise(exported, known_citations={f"NRS {n}" for n, _, _ in SECTIONS},
                                 trust_confirmations=True)
    assert sha256_hex(canonical_json(normalised)) == confirmed.sha256
    # Imported back as a file, it is that suite (a file's confirmed_by alone would be only a claim).
    assert suite_import(raw=suite_dump(json.loads(confirmed.definition), fmt="yaml"),
                        filename="v2.yaml") == (confirmed, False)
    assert suite_confirmed_version(suite=suite, user=admin_user_) == (confirmed, False)

    population = _population(confirmed)
    assert "targets nominated by assistant (not a lawyer), all confirmed by 2 lawyers;" in population
    assert "provisional" not in population


@pytest.mark.django_db
def test_disagreement_is_adjudicated_rejections_leave_and_a_proposal_is_confirmed_by_other_lawyers_only(
        lawyers, admin_user_):
    lena, lars, lia = lawyers
    suite = confirm_suite(targets_fee=["NRS 999.020", "NRS 999.040"])
    confirmation_pool_declare(suite=suite, reviewers=[lena, lars], reviewers_per_item=2)
    answers = {"NRS 999.010": ("y", "y"), "NRS 999.020": ("y", "n"), "NRS 999.040": ("n", "n")}
    for index, lawyer in enumerate((lena, lars)):
        for citation, item_id in _items(lawyer).items():
            _grade(lawyer, item_id, answers[citation][index])
    by_citation = {s.citation: s for s in confirmation_state(suite=suite)}
    assert by_citation["NRS 999.020"].state == "disagreed" and by_citation["NRS 999.040"].state == "rejected"

    # The disagreement goes to the review's own adjudication pages; the ruling counts.
    item = Assignment.objects.get(reviewer=lena, item__doc_id="NRS 999.020").item
    admin = Client()
    admin.force_login(admin_user_)
    pool_page = admin.get(f"/review/pools/{item.pool.public_id}/")
    assert pool_page.status_code == 200 and f"/items/{item.public_id}/adjudicate/" in pool_page.content.decode()
    adjudicate = f"/review/agreement/{item.pool.public_id}/items/{item.public_id}/adjudicate/"
    # Words, not codes: the yes/no grades read "yes"/"no", never 1/0 or True/False.
    pool_html = pool_page.content.decode()
    grades = pool_html.split('data-testid="reviewer-grades">')[1].split("</td>")[0]
    assert sorted(grades.split("; ")) == sorted([f"{lena.username}: yes", f"{lars.username}: no"])
    adjudicate_html = admin.get(adjudicate).content.decode()
    table = adjudicate_html.split("Reviewers' judgments")[1].split("</table>")[0]
    assert "<td>yes</td>" in table and "<td>no</td>" in table and "<td>1</td>" not in table
    assert admin.post(adjudicate, {"target": "y", "note": "the fee section answers it"}).status_code == 302
    after = admin.get(f"/review/pools/{item.pool.public_id}/").content.decode()
    assert "adjudicated: yes" in after and "adjudicated: 1" not in after
    assert "(current ruling: yes)" in admin.get(adjudicate).content.decode()
    assert confirmation_state(suite=suite)[1].agreement == "adjudicated"

    # Lena proposes a missing target for the deposit query while confirming it.
    client = Client()
    client.force_login(lena)
    item_id = _items(lena)["NRS 999.010"]
    page = client.get(f"/review/workspace/items/{item_id}/").content.decode()
    assert 'id="propose-target"' in page
    refused = client.post(f"/benchmarks/suites/confirmation/items/{item_id}/propose/", {"citation": "NRS 999.999"},
                          follow=True)
    assert "NRS 999.999 is not in the corpus snapshot" in refused.content.decode()
    refused = client.post(f"/benchmarks/suites/confirmation/items/{item_id}/propose/", {"citation": "NRS 999.010"},
                          follow=True)
    assert "already a target of this query" in refused.content.decode()
    client.post(f"/benchmarks/suites/confirmation/items/{item_id}/propose/", {"citation": "N.R.S. 999.030(2)"})
    assert list(TargetProposal.objects.values_list("query__qid", "citation", "proposed_by")) == [
        ("d1", "NRS 999.030", lena.pk)]
    # Another lawyer's item is not hers to propose on.
    stranger = Client()
    stranger.force_login(lia)
    assert stranger.post(f"/benchmarks/suites/confirmation/items/{item_id}/propose/",
                         {"citation": "NRS 999.040"}).status_code == 404

    # The proposal enters the same confirmation for the other lawyers; the proposer never gets it.
    pools = confirmation_pool_declare(suite=suite, reviewers=[lena, lars, lia], reviewers_per_item=2)
    assert [pool_model(p).items.count() for p in pools] == [1]
    assert "NRS 999.030" not in _items(lena)
    proposal_item = _items(lars)["NRS 999.030"]
    assert Client().get(f"/review/workspace/items/{proposal_item}/").status_code == 302
    lena_client = Client()
    lena_client.force_login(lena)
    assert lena_client.get(f"/review/workspace/items/{proposal_item}/").status_code == 404
    for lawyer in (lars, lia):
        _grade(lawyer, _items(lawyer)["NRS 999.030"], "y")

    confirmed, created = suite_confirmed_version(suite=suite, user=admin_user_)
    assert created
    assert list(NominatedTarget.objects.filter(query__suite=confirmed).order_by("query__position", "id")
                .values_list("query__qid", "citation", "nominated_by", "confirmed_by")) == [
        ("d1", "NRS 999.010", NOMINATOR, {"lawyers": 2, "agreement": "unanimous"}),
        ("d1", "NRS 999.030", "lena_lawyer", {"lawyers": 2, "agreement": "unanimous"}),
        ("h1", "NRS 999.020", NOMINATOR, {"lawyers": 2, "agreement": "adjudicated"}),
    ]  # NRS 999.040, rejected by both, is left out
    assert "all confirmed by 2 lawyers" in _population(confirmed)


@pytest.mark.django_db
def test_a_query_whose_every_target_is_rejected_refuses_a_new_version_naming_it(lawyers, admin_user_):
    suite = confirm_suite()
    confirmation_pool_declare(suite=suite, reviewers=lawyers[:2], reviewers_per_item=2)
    with pytest.raises(ConfirmationError, match="no target is confirmed or rejected yet"):
        suite_confirmed_version(suite=suite, user=admin_user_)
    for lawyer in lawyers[:2]:
        for citation, item_id in _items(lawyer).items():
            _grade(lawyer, item_id, "n" if citation == "NRS 999.020" else "y")
    with pytest.raises(ConfirmationError, match="h1: lawyers rejected every target"):
        suite_confirmed_version(suite=suite, user=admin_user_)
    assert not type(suite).objects.filter(name=suite.name, version=2).exists()


def test_a_partly_confirmed_suite_counts_each_kind_of_target_from_the_data():
    from benchmarks.reports.figures import _provisional
    from benchmarks.reports.inputs import SuiteMeta

    meta = SuiteMeta(None, "s", 2, "nrs", "0" * 64, "0" * 64, "2026-01-01", (), targets_total=5,
                     targets_provisional=2, targets_confirmed=((2, 2), (3, 1)))
    assert _provisional(meta) == "2 of 5 confirmed by 2 lawyers, 1 of 5 confirmed by 3 lawyers, 2 provisional"


@pytest.mark.parametrize(("target", "message"), [
    ({"citation": "NRS 1.010", "confirmed_by": {"lawyers": 2, "agreement": "unanimous"}},
     "a confirmed target is not provisional"),
    ({"citation": "NRS 1.010", "provisional": False, "confirmed_by": {"lawyers": 0, "agreement": "unanimous"}},
     "lawyers must be a positive whole number"),
    ({"citation": "NRS 1.010", "provisional": False, "confirmed_by": {"lawyers": 2, "agreement": "most"}},
     "agreement must be one of unanimous, adjudicated"),
    ({"citation": "NRS 1.010", "provisional": False, "confirmed_by": "yes"}, "exactly 'lawyers' and 'agreement'"),
])
def test_a_bad_confirmed_by_is_refused_naming_the_query_and_target(target, message):
    data = {"name": "s", "version": 1, "corpus": "nrs", "families": [{"id": "f", "split": "dev"}],
            "queries": [{"id": "q1", "kind": "ranking", "split": "dev", "family": "f", "text": "t",
                         "targets": [target]}]}
    with pytest.raises(SuiteInvalid) as refused:
        suite_normalise(data, known_citations=None, trust_confirmations=True)
    assert str(refused.value.problems[0]).startswith("q1: targets[0].") and message in str(refused.value)


@pytest.mark.django_db
def test_an_admin_sends_targets_to_lawyers_and_freezes_the_confirmed_version_from_the_suite_page(
        lawyers, admin_client_, stakeholder_client):
    suite = confirm_suite()
    page = admin_client_.get(f"/benchmarks/suites/{suite.pk}/").content.decode()
    assert 'data-testid="confirmation-counts"' in page and "2 provisional targets in this version" in page
    stakeholder_page = stakeholder_client.get(f"/benchmarks/suites/{suite.pk}/").content.decode()
    assert 'data-testid="confirmation"' not in stakeholder_page
    refused = admin_client_.post(f"/benchmarks/suites/{suite.pk}/confirmation/new-version/", follow=True)
    assert "No new version: suite confirm v1: no target is confirmed or rejected yet" in refused.content.decode()

    response = admin_client_.post(f"/benchmarks/suites/{suite.pk}/confirmation/declare/",
                                  {"reviewers": [str(u.pk) for u in lawyers[:2]], "reviewers_per_item": "2"},
                                  follow=True)
    assert "2 items in 1 new confirmation pools" in response.content.decode()
    for lawyer in lawyers[:2]:
        for item_id in _items(lawyer).values():
            _grade(lawyer, item_id, "y")
    page = " ".join(admin_client_.get(f"/benchmarks/suites/{suite.pk}/").content.decode().split())
    assert "2 confirmed · 0 rejected · 0 awaiting adjudication · 0 pending" in page

    response = admin_client_.post(f"/benchmarks/suites/{suite.pk}/confirmation/new-version/", follow=True)
    html = response.content.decode()
    assert "Suite confirm v2" in html and html.count('data-testid="confirmed">confirmed by 2 lawyers<') == 2
    assert 'data-testid="suite-diff"' in html
    # The diff reads as words, not Python reprs; the confirmed version does not open with "provisional".
    assert ("target NRS 999.010: status provisional → not provisional; confirmation none → confirmed by 2 lawyers "
            "(unanimous)") in html
    assert "True" not in html.split('data-testid="suite-diff"')[1] and "{&#x27;lawyers" not in html
    assert "Nominated targets are provisional" not in html
    assert 'data-testid="targets-caveat">All 2 targets of this version were confirmed by lawyers.' in html
    confirmed = type(suite).objects.get(name="confirm", version=2)
    api = stakeholder_client.get(f"/api/v1/benchmarks/suites/{confirmed.pk}/").json()
    assert [t["confirmed_by"] for q in api["queries"] for t in q["targets"]] == [
        {"lawyers": 2, "agreement": "unanimous"}] * 2
    first = stakeholder_client.get(f"/api/v1/benchmarks/suites/{suite.pk}/").json()
    assert [t["confirmed_by"] for q in first["queries"] for t in q["targets"]] == [None, None]
    # A stakeholder reads the new version's report: the caveat names the confirmations, not "provisional".
    run = retrieval_run_create(suite=confirmed, configuration="bm25-v1")
    report = stakeholder_client.get(f"/benchmarks/reports/retrieval/{run.pk}/?replicates=1000").content.decode()
    assert "all confirmed by 2 lawyers" in report and "provisional" not in report


def test_confirmations_and_proposals_survive_export_all_and_import_all(transactional_db, admin_user_, tmp_path):
    import io

    from django.core.management import call_command

    from benchmarks.suites.models import Suite

    lawyers = [make_user(type(admin_user_), name, "reviewer") for name in ("lena_lawyer", "lars_lawyer", "lia_lawyer")]
    suite = confirm_suite()
    confirmation_pool_declare(suite=suite, reviewers=lawyers[:2], reviewers_per_item=2)
    for lawyer in lawyers[:2]:
        for item_id in _items(lawyer).values():
            _grade(lawyer, item_id, "y")
    client = Client()
    client.force_login(lawyers[0])
    client.post(f"/benchmarks/suites/confirmation/items/{_items(lawyers[0])['NRS 999.010']}/propose/",
                {"citation": "NRS 999.030"})
    confirmed, _ = suite_confirmed_version(suite=suite, user=admin_user_)

    def snapshot():
        return (list(NominatedTarget.objects.order_by("query__suite__version", "citation").values_list(
                    "query__suite__version", "citation", "provisional", "confirmed_by")),
                list(TargetProposal.objects.values_list("query__qid", "citation", "proposed_by__username")),
                [(s.qid, s.citation, s.state, s.lawyers, s.agreement) for s in confirmation_state(suite=suite)],
                list(Suite.objects.order_by("version").values_list("version", "sha256")))

    before = snapshot()
    assert before[1] == [("d1", "NRS 999.030", "lena_lawyer")] and confirmed.version == 2
    backup = tmp_path / "backup.jsonl"
    call_command("export_all", str(backup), stdout=io.StringIO())
    call_command("flush", interactive=False, verbosity=0)
    call_command("import_all", str(backup), stdout=io.StringIO())
    suite = Suite.objects.get(name="confirm", version=1)
    assert snapshot() == before
    assert "all confirmed by 2 lawyers" in _population(Suite.objects.get(name="confirm", version=2))


@pytest.mark.django_db
def test_a_proposal_its_proposer_judged_after_all_never_confirms(lawyers, admin_user_):
    from reviewapp.review.assignment.services import pool_assign

    lena, lars, lia = lawyers
    suite = confirm_suite()
    confirmation_pool_declare(suite=suite, reviewers=[lena, lars], reviewers_per_item=2)
    client = Client()
    client.force_login(lena)
    client.post(f"/benchmarks/suites/confirmation/items/{_items(lena)['NRS 999.010']}/propose/",
                {"citation": "NRS 999.030"})
    pool = confirmation_pool_declare(suite=suite, reviewers=[lena, lars, lia], reviewers_per_item=2)[0]
    pool_assign(pool=pool, reviewers=[lena, lars, lia], per_item=3)  # an admin adds the proposer by hand
    for lawyer in (lena, lars, lia):
        _grade(lawyer, _items(lawyer)["NRS 999.030"], "y")
    state = next(s for s in confirmation_state(suite=suite) if s.citation == "NRS 999.030")
    assert state.state == "pending" and "its proposer judged it" in state.reason


@pytest.mark.django_db
def test_two_lawyers_proposing_the_same_target_are_both_kept_off_its_confirmation(lawyers, django_user_model):
    lena, lars, lia = lawyers
    luke = make_user(django_user_model, "luke_lawyer", "reviewer")
    suite = confirm_suite()
    confirmation_pool_declare(suite=suite, reviewers=[lena, lars], reviewers_per_item=2)
    for lawyer in (lena, lars):  # each suggests it independently; each gets the same proposal back
        client = Client()
        client.force_login(lawyer)
        response = client.post(
            f"/benchmarks/suites/confirmation/items/{_items(lawyer)['NRS 999.010']}/propose/",
            {"citation": "NRS 999.030"})
        assert response.status_code in (200, 302)
    assert TargetProposal.objects.filter(suite=suite).count() == 1
    pool = confirmation_pool_declare(suite=suite, reviewers=[lena, lars, lia, luke], reviewers_per_item=2)[0]
    assert set(Assignment.objects.filter(pool_id=pool.pk).values_list("reviewer__username", flat=True)) == {
        "lia_lawyer", "luke_lawyer"}
    # Should an admin add the second proposer by hand, the item waits rather than let it confirm itself.
    from reviewapp.review.assignment.services import pool_assign

    pool_assign(pool=pool, reviewers=[lars, lia, luke], per_item=3)
    for lawyer in (lars, lia, luke):
        _grade(lawyer, _items(lawyer)["NRS 999.030"], "y")
    state = next(s for s in confirmation_state(suite=suite) if s.citation == "NRS 999.030")
    assert state.state == "pending" and "its proposer judged it" in state.reason
