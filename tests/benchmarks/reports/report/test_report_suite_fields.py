"""The report's population and caveats come from the suite's own fields, and a section printed in two
versions is one target found in either version (figures, coverage, qrels.txt and qrels.trec agree)."""

from __future__ import annotations

import json

import pytest

from benchmarks.corpus import ParsedProvision, ParsedSource
from benchmarks.reports.exports.report import report_as_json, report_trec_qrels
from benchmarks.reports.selectors import report_build
from benchmarks.retrieval.selectors import retrieval_run_qrels
from benchmarks.retrieval.services import retrieval_run_create
from benchmarks.suites.files import SuiteInvalid, suite_normalise
from benchmarks.suites.services import suite_import
from reviewapp.core.records.hashing import canonical_json, sha256_hex

SECTIONS = [
    # (number, variant, heading, body)
    ("999.010", 1, "Filing fees", "The clerk collects a filing fee for each complaint filed before the court."),
    ("999.010", 2, "Filing fees", "A lighthouse keeper pays no filing fee for a lighthouse beacon petition."),
    ("999.020", 1, "Lighthouse beacons", "Beacons are inspected yearly by the harbour master."),
    ("999.030", 1, "Court hours", "The court is open on weekdays."),
]


def _import_two_version_snapshot():
    from benchmarks.corpus.services import snapshot_import

    source = ParsedSource(
        corpus="nrs", parser_name="test", parser_version="1", title="test chapter 999",
        official_url="https://example.invalid/chapter",
        provisions=tuple(
            ParsedProvision(citation=f"NRS {number}", number=number, chapter="999", chapter_title="TEST",
                            heading=heading, body=body, variant=variant)
            for number, variant, heading, body in SECTIONS
        ),
    )
    return snapshot_import(corpus="nrs", source_key="two-versions.html", raw=json.dumps(SECTIONS).encode(),
                           retrieved_from="tests", parse=lambda _raw: source, parser=("test", "1")).snapshot


def _suite(**fields):
    data = {
        "name": "two-versions", "version": 1, "corpus": "nrs",
        "families": [{"id": "fees", "split": "heldout"}, {"id": "beacons", "split": "dev"}],
        "queries": [
            {"id": "q-fee", "text": "lighthouse keeper beacon petition fee", "kind": "ranking", "family": "fees",
             "split": "heldout", "targets": ["NRS 999.010"]},
            {"id": "q-court", "text": "when is the court open", "kind": "ranking", "family": "beacons",
             "split": "dev",
             "targets": [{"citation": "NRS 999.030", "nominated_by": "R. Roe, Esq.", "provisional": False}]},
        ],
        **fields,
    }
    suite, _ = suite_import(raw=json.dumps(data).encode(), filename="two-versions.json")
    return suite


@pytest.mark.django_db
def test_a_target_in_two_versions_is_found_in_its_second_version():
    _import_two_version_snapshot()
    run = retrieval_run_create(suite=_suite())
    report = report_build(run=run, replicates=1000, seed=1)
    row = next(r for r in report.queries if r.query.qid == "q-fee")
    # Only the second version speaks of lighthouse petitions, so it ranks first.
    assert row.keyword_ranked[0].docid == "NRS_999.010~v2"
    assert row.keyword["Hit@1"] == 1.0 and row.keyword["RR"] == 1.0
    assert row.coverage == 1.0 and row.missing_targets == ()
    assert row.query.target_citations == ("NRS 999.010",)
    qrels = report_trec_qrels(report)
    assert "q-fee 0 NRS_999.010 1" in qrels and "q-fee 0 NRS_999.010~v2 1" in qrels
    # The report's qrels and the command-line qrels.trec list the same judgments.
    assert sorted(qrels.split("\n")) == sorted(retrieval_run_qrels(run=run).split("\n"))


@pytest.mark.django_db
def test_coverage_counts_a_two_version_target_once():
    _import_two_version_snapshot()
    run = retrieval_run_create(suite=_suite(), k=1)
    report = report_build(run=run, replicates=1000, seed=1)
    row = next(r for r in report.queries if r.query.qid == "q-fee")
    # One candidate: one version of the single target, so the target is covered (not half covered).
    assert [c.docid for c in row.keyword_ranked] == ["NRS_999.010~v2"]
    assert row.coverage == 1.0


@pytest.mark.django_db
@pytest.mark.parametrize(("flag", "phrase"), [
    (True, "Synthetic suite two-versions v1"),
    (False, "Suite (declared not synthetic) two-versions v1"),
    (None, "Suite two-versions v1 of 2 ranking queries (1 development, 1 held-out) in 2 topic families; the suite "
           "file does not declare whether it is synthetic;"),
])
def test_the_population_says_what_the_suite_declares(flag, phrase):
    _import_two_version_snapshot()
    fields = {"nominated_by": "J. Doe, attorney"}
    if flag is not None:
        fields["synthetic"] = flag
    report = report_build(run=retrieval_run_create(suite=_suite(**fields)), replicates=1000, seed=1)
    assert report.population.startswith(phrase)
    # The suite default and the per-target nominator, both named; one of the two targets is provisional.
    assert "nominated by J. Doe, attorney and R. Roe, Esq., 1 of 2 provisional" in report.population
    assert "assistant" not in report.population
    assert report.caveats[0].startswith("Targets were nominated from the official text by J. Doe, attorney and "
                                        "R. Roe, Esq. (1 of 2 provisional); they are known positives")
    exported = report_as_json(report)
    assert exported["population"] == report.population and exported["caveats"] == list(report.caveats)


def test_a_synthetic_flag_that_is_not_a_boolean_is_refused_by_name(example_suite_data):
    example_suite_data["synthetic"] = "yes"
    with pytest.raises(SuiteInvalid) as refused:
        suite_normalise(example_suite_data, known_citations=None)
    assert any(p.field == "synthetic" and "true or false" in p.message for p in refused.value.problems)


def test_a_suite_file_without_the_flag_keeps_its_definition_and_hash(example_suite_data):
    normalised = suite_normalise(example_suite_data, known_citations=None)
    assert "synthetic" not in normalised
    # The sha256 nrs_v1 was frozen with before the flag existed.
    assert sha256_hex(canonical_json(normalised)) == NRS_V1_SHA256
    example_suite_data["synthetic"] = True
    assert suite_normalise(example_suite_data, known_citations=None)["synthetic"] is True


NRS_V1_SHA256 = "233b3b03d486bccbbb90ac02f4f0e1ae48dd2c7846a9d66a141667c13bd83bbc"
