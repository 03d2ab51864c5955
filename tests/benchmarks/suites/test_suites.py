"""Suite validation (every error names the query and field), freezing, versions, the example suite."""

from __future__ import annotations

import copy
import json

import pytest

from benchmarks.suites.files import SuiteInvalid
from benchmarks.suites.models import NominatedTarget, QueryFamily, Suite, SuiteQuery
from benchmarks.suites.services import suite_import


def _import(data: dict):
    return suite_import(raw=json.dumps(data).encode(), filename="suite.json")


def _problems(data: dict) -> list[str]:
    with pytest.raises(SuiteInvalid) as caught:
        _import(data)
    assert Suite.objects.count() == 0 and SuiteQuery.objects.count() == 0  # nothing half-written
    return [str(p) for p in caught.value.problems]


def test_the_example_suite_freezes_with_its_declared_shape(example_suite):
    queries = list(example_suite.queries.all())
    ranking = [q for q in queries if q.kind == "ranking"]
    assert len([q for q in ranking if q.split == "dev"]) == 12
    assert len([q for q in ranking if q.split == "heldout"]) == 18
    assert len([q for q in queries if q.kind == "outside_corpus"]) == 4
    assert len([q for q in queries if q.kind == "exact_citation"]) == 6
    dev_families = {q.family_id for q in ranking if q.split == "dev"}
    heldout_families = {q.family_id for q in ranking if q.split == "heldout"}
    assert dev_families and heldout_families and not dev_families & heldout_families
    targets = NominatedTarget.objects.filter(query__suite=example_suite)
    assert targets.count() >= 30
    assert all(t.provisional and t.nominated_by == "assistant (not a lawyer)" for t in targets)
    assert all(t.provision.citation == t.citation for t in targets)
    assert len(example_suite.sha256) == 64 and example_suite.snapshots.count() == 4


def test_reimporting_the_same_suite_is_a_no_op(example_suite, example_suite_data):
    again, created = _import(example_suite_data)
    assert not created and again.pk == example_suite.pk


def test_a_changed_suite_needs_a_new_version(example_suite, example_suite_data):
    changed = copy.deepcopy(example_suite_data)
    changed["queries"][0]["text"] += " Please explain."
    with pytest.raises(SuiteInvalid, match="new version"):
        _import(changed)
    changed["version"] = 2
    newer, created = _import(changed)
    assert created and newer.version == 2 and newer.sha256 != example_suite.sha256
    assert Suite.objects.get(pk=example_suite.pk).definition != newer.definition


def test_it_rejects_duplicate_query_ids(nrs_imported, example_suite_data):
    data = copy.deepcopy(example_suite_data)
    data["queries"][1]["id"] = data["queries"][0]["id"]
    assert "dev-01: id: duplicate query id" in _problems(data)


def test_it_rejects_a_family_used_in_both_splits(nrs_imported, example_suite_data):
    data = copy.deepcopy(example_suite_data)
    for family in data["families"]:
        family["split"] = ""  # undeclared, so only the queries' splits can reveal the crossing
    data["queries"][12]["family"] = data["queries"][0]["family"]  # a held-out query in a dev family
    problems = _problems(data)
    assert any(p.startswith("ho-01: family: family 'statutory-construction' used in both dev (dev-01) and heldout")
               for p in problems)


def test_it_rejects_a_target_not_in_the_corpus_snapshot(nrs_imported, example_suite_data):
    data = copy.deepcopy(example_suite_data)
    data["queries"][2]["targets"][0]["citation"] = "NRS 999.999"
    assert "dev-03: targets[0].citation: NRS 999.999 is not in the nrs corpus snapshot" in _problems(data)


def test_it_rejects_an_unknown_kind(nrs_imported, example_suite_data):
    data = copy.deepcopy(example_suite_data)
    data["queries"][3]["kind"] = "essay"
    problems = _problems(data)
    assert any(p.startswith("dev-04: kind: unknown kind 'essay'") for p in problems)


def test_it_rejects_an_exact_citation_control_without_a_resolvable_expectation(nrs_imported, example_suite_data):
    data = copy.deepcopy(example_suite_data)
    ec = next(q for q in data["queries"] if q["id"] == "ec-01")
    ec["expected_citation"] = "NRS 432B.999"
    ec["text"] = "no citation here"
    problems = _problems(data)
    assert "ec-01: expected_citation: NRS 432B.999 is not in the nrs corpus snapshot" in problems
    # An unreadable control text is not refused: the retrieval run reports the control as unresolved.
    assert not any(p.startswith("ec-01: text:") for p in problems)


def test_it_reports_every_problem_at_once(nrs_imported, example_suite_data):
    data = copy.deepcopy(example_suite_data)
    data["queries"][0]["kind"] = "essay"
    data["queries"][5]["targets"] = []
    data["queries"][6]["split"] = "test"
    problems = _problems(data)
    assert any(p.startswith("dev-01: kind:") for p in problems)
    assert any(p.startswith("dev-06: targets:") for p in problems)
    assert any(p.startswith("dev-07: split:") for p in problems)
    assert QueryFamily.objects.count() == 0


def test_it_reads_yaml_suites_too(nrs_imported, example_suite_data):
    import yaml

    suite, created = suite_import(raw=yaml.safe_dump(example_suite_data).encode(), filename="nrs_v1.yaml")
    assert created and suite.queries.count() == 40


def test_it_refuses_a_suite_for_a_corpus_not_imported(db, example_suite_data):
    with pytest.raises(SuiteInvalid, match="no snapshots of corpus 'nrs'"):
        _import(example_suite_data)


def test_the_suite_diff_prints_values_as_a_lawyer_reads_them_not_python_reprs():
    from benchmarks.suites.diff import FieldChange, value_words

    confirmation = FieldChange("confirmed_by", None, {"lawyers": 1, "agreement": "adjudicated"})
    assert (confirmation.label, confirmation.old_text, confirmation.new_text) == (
        "confirmation", "none", "confirmed by 1 lawyer (adjudicated)")
    status = FieldChange("provisional", True, False)
    assert (status.label, status.old_text, status.new_text) == ("status", "provisional", "not provisional")
    assert value_words("synthetic", True) == "yes"
    assert value_words("claimed_confirmed_by", {"lawyers": 3, "agreement": "unanimous"}) == (
        "said to be confirmed by 3 lawyers (unanimous)")
    assert value_words("split", "test") == "“test”"
