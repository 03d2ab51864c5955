"""Suite files are data, not claims: YAML aliases and anchors are refused before anything expands, the file
and its node count are bounded, and a file's ``confirmed_by`` is kept as a claim that confirms nothing here."""

from __future__ import annotations

import json

import pytest
from django.test import Client

from benchmarks.reports.selectors import report_build
from benchmarks.retrieval.services import retrieval_run_create
from benchmarks.suites import files
from benchmarks.suites.files import SuiteInvalid, suite_load, suite_normalise
from benchmarks.suites.models import NominatedTarget
from benchmarks.suites.services import suite_import
from tests.benchmarks.conftest import import_synthetic
from tests.benchmarks.suites.confirmation_fixtures import FAMILIES, SECTIONS

# The classic "billion laughs": 9 levels of 9 aliases, under 1 KB, ~387 million strings once expanded.
ALIAS_BOMB = "\n".join(
    ['a: &a ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]']
    + [f"{chr(98 + i)}: &{chr(98 + i)} [{','.join(['*' + chr(97 + i)] * 9)}]" for i in range(8)]
).encode()


def test_a_yaml_alias_bomb_is_refused_at_its_first_anchor_naming_the_line():
    assert len(ALIAS_BOMB) < 1024
    with pytest.raises(SuiteInvalid) as refused:
        suite_load(ALIAS_BOMB, filename="bomb.yaml")
    assert "anchor &a at line 1, column 4" in str(refused.value) and "refused" in str(refused.value)


def test_a_yaml_alias_alone_is_refused_naming_where_it_is():
    with pytest.raises(SuiteInvalid, match=r"alias \*x at line 2, column 8"):
        suite_load(b"name: s\nother: *x\n", filename="suite.yml")


def test_a_file_over_the_byte_limit_or_the_node_limit_is_refused(monkeypatch):
    monkeypatch.setattr(files, "MAX_FILE_BYTES", 100)
    with pytest.raises(SuiteInvalid, match="a suite file is at most 100 bytes"):
        suite_load(b"name: " + b"x" * 200, filename="big.yaml")
    monkeypatch.setattr(files, "MAX_FILE_BYTES", 5 * 1024 * 1024)
    monkeypatch.setattr(files, "MAX_YAML_NODES", 50)
    with pytest.raises(SuiteInvalid, match="more than 50 YAML nodes"):
        suite_load(("items: [" + ",".join(["1"] * 60) + "]").encode(), filename="many.yaml")


def test_an_ordinary_yaml_suite_file_still_loads():
    assert suite_load(b"name: s\nqueries:\n  - id: q1\n    text: 'no'\n", filename="s.yaml") == {
        "name": "s", "queries": [{"id": "q1", "text": "no"}]}


CLAIM = {"lawyers": 3, "agreement": "unanimous"}


def _claiming_file() -> bytes:
    return json.dumps({
        "name": "claims", "version": 1, "corpus": "nrs", "families": FAMILIES,
        "queries": [
            {"id": "d1", "kind": "ranking", "split": "dev", "family": "deposits",
             "text": "when is a tenant deposit returned",
             "targets": [{"citation": "NRS 999.010", "provisional": False, "confirmed_by": CLAIM}]},
            {"id": "h1", "kind": "ranking", "split": "heldout", "family": "fees", "text": "filing fee for a petition",
             "targets": [{"citation": "NRS 999.020", "provisional": False, "confirmed_by": CLAIM}]},
        ],
    }).encode()


def test_a_confirmed_by_in_a_file_is_normalised_as_a_claim_and_the_target_stays_provisional():
    data = json.loads(_claiming_file())
    (target, *_), *_ = (q["targets"] for q in suite_normalise(data, known_citations=None)["queries"])
    assert target["provisional"] is True and "confirmed_by" not in target
    assert target["claimed_confirmed_by"] == CLAIM


@pytest.mark.django_db
def test_an_imported_file_claiming_confirmation_leaves_its_targets_provisional_in_the_report_and_the_page(
        admin_user_):
    import_synthetic(SECTIONS, key="claims.html")
    suite, created = suite_import(raw=_claiming_file(), filename="claims.json")
    assert created
    assert list(NominatedTarget.objects.filter(query__suite=suite).values_list(
        "provisional", "confirmed_by", "claimed_confirmed_by")) == [(True, None, CLAIM), (True, None, CLAIM)]

    report = report_build(run=retrieval_run_create(suite=suite, configuration="bm25-v1"), replicates=1000)
    assert "all provisional" in report.caveats[0] and "confirmed by" not in report.caveats[0]

    client = Client()
    client.force_login(admin_user_)
    html = client.get(f"/benchmarks/suites/{suite.pk}/").content.decode()
    assert 'data-testid="confirmed"' not in html
    assert "the file claims confirmation by 3 lawyers (not confirmed here)" in html
