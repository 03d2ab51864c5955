"""bm25-v1, the default retrieval configuration: the same candidates and scores on every database engine
and whatever else is imported, recorded with its index; exact-citation controls; TREC export.

The cross-engine proof: CI runs this file on SQLite and again on PostgreSQL, and both must give
the TREC text whose sha256 is recorded below (checked by hand on both engines).
"""

from __future__ import annotations

import hashlib
import json

import pytest
from django.core.management import call_command
from django.db import connection

from benchmarks.corpus.models import Provision
from benchmarks.corpus.services import statutes_import
from benchmarks.retrieval import suite_index
from benchmarks.retrieval.bm25_cache import IndexCache
from benchmarks.retrieval.engines import CONFIGURATIONS, DEFAULT_CONFIGURATION
from benchmarks.retrieval.models import RetrievalResult
from benchmarks.retrieval.selectors import retrieval_run_qrels, retrieval_run_trec
from benchmarks.retrieval.services import retrieval_run_create
from tests.benchmarks.conftest import freeze_suite, import_synthetic

# sha256 of retrieval_run_trec(scores="engine", tag="bm25-v1") for nrs_v1 (every query, controls included)
# over the four NRS chapters in DATA_DIR, k=30. Verified on SQLite 3 and on PostgreSQL 15.
NRS_V1_BM25_TREC_SHA256 = "17cdf8858c029f8fa5bb82062391eb8177aaeaa86d9703863252429de06a4a88"


@pytest.fixture
def fresh_cache(monkeypatch):
    """A memory-only index cache of this test's own: every index is built from the database it runs on."""
    cache = IndexCache(max_entries=4)
    monkeypatch.setattr(suite_index, "_cache", cache)
    return cache


def _ranked(run, qid):
    result = RetrievalResult.objects.get(run=run, query__qid=qid)
    return result, [c.provision.docid for c in result.candidates.select_related("provision").order_by("rank")]


def test_bm25_v1_is_the_default_everywhere():
    from benchmarks.management.commands.retrieve import Command
    from benchmarks.retrieval.views import RetrievalRunForm

    assert DEFAULT_CONFIGURATION == "bm25-v1" and CONFIGURATIONS["bm25-v1"].engine_independent
    assert RetrievalRunForm().fields["configuration"].initial == "bm25-v1"
    parser = Command().create_parser("manage.py", "retrieve")
    assert parser.parse_args(["--suite", "x"]).config == "bm25-v1"
    for name in ("keyword-v1", "heading-v1"):
        assert CONFIGURATIONS[name].description.startswith("Engine-dependent")


def test_the_same_suite_gives_the_same_bytes_on_any_engine_and_after_other_corpora_are_imported(
        example_suite, data_dir, fresh_cache):
    run = retrieval_run_create(suite=example_suite, k=30)
    assert run.status == "done", run.error
    assert (run.engine, run.configuration) == ("bm25s", "bm25-v1")
    nrs_sections = Provision.objects.filter(snapshot__in=example_suite.snapshots.all()).count()
    assert run.index_documents == nrs_sections == run.configuration_detail["documents"]
    detail = run.configuration_detail
    assert (detail["variant"], detail["k1"], detail["b"], detail["stopwords"], detail["stemmer"],
            detail["heading_repeat"]) == ("lucene", 1.2, 0.75, "english", "snowball-english", 2)
    assert {"bm25s", "PyStemmer", "numpy"} <= set(detail["libraries"])
    assert len(detail["config_hash"]) == len(detail["document_set_sha256"]) == 64 and detail["tie_break"]
    before = retrieval_run_trec(run=run, scores="engine", tag="bm25-v1")
    assert before.count("\n") > 30 * 30  # every ranking and outside-corpus query has 30 candidates
    assert {line.split()[0] for line in before.splitlines()} >= {"ec-01", "oc-01", "dev-01", "ho-18"}
    keyword_before = retrieval_run_create(suite=example_suite, configuration="keyword-v1", k=30)

    # Other corpora beside NRS: HRS (one volume and its index) and the USC titles.
    hrs = data_dir / "statutes" / "hrs"
    statutes_import(fmt="hrs-json", paths=[hrs / "Vol11_Ch0476-0490.json"], hrs_index=hrs / "index-meta.json")
    statutes_import(fmt="uslm-xml", paths=[data_dir / "statutes" / "usc"])
    assert Provision.objects.count() > 2 * nrs_sections
    fresh_cache.clear()
    again = retrieval_run_create(suite=example_suite, k=30)
    assert fresh_cache.builds == 2  # rebuilt from the database, not reused
    after = retrieval_run_trec(run=again, scores="engine", tag="bm25-v1")
    assert after == before and again.candidates_sha256 == run.candidates_sha256
    assert again.configuration_detail == run.configuration_detail

    digest = hashlib.sha256(before.encode("utf-8")).hexdigest()
    assert digest == NRS_V1_BM25_TREC_SHA256, f"on {connection.vendor}"
    # The engine-dependent baseline is recorded as such (its candidates may move with the import).
    keyword_after = retrieval_run_create(suite=example_suite, configuration="keyword-v1", k=30)
    assert keyword_before.engine == keyword_after.engine != "bm25s"
    assert keyword_after.index_documents > keyword_before.index_documents


def test_documents_are_named_and_ordered_by_citation_not_by_database_row(db, fresh_cache):
    import_synthetic([("999.300", "Escrow.", "escrow accounts"), ("999.100", "Escrow.", "escrow accounts"),
                      ("999.200", "Escrow.", "escrow accounts")])
    suite = freeze_suite([{"id": "q1", "kind": "ranking", "split": "dev", "family": "fam-a",
                           "text": "escrow accounts", "targets": ["NRS 999.100"]}])
    index = suite_index.suite_index(suite=suite)
    assert index.doc_ids == ("NRS_999.100", "NRS_999.200", "NRS_999.300")
    assert index.sort_keys[0] == "NRS 999.100\t00001"
    assert suite_index.provision_sort_key("NRS 1.510", 2) < suite_index.provision_sort_key("NRS 1.5101", 1)
    run = retrieval_run_create(suite=suite, k=3)
    result, ranked = _ranked(run, "q1")
    assert ranked == ["NRS_999.100", "NRS_999.200", "NRS_999.300"] and result.status == "ok"
    scores = list(result.candidates.order_by("rank").values_list("score", flat=True))
    assert len(set(scores)) == 1  # a true tie, decided by the citation


def test_short_and_no_hit_queries_say_why_and_never_fall_back(db, fresh_cache):
    import_synthetic([
        ("999.010", "Guardian appointment.", "The court appoints a guardian for the child."),
        ("999.020", "Guardian fees.", "Fees of a guardian."),
        ("999.030", "Child support.", "Support of a child."),
        ("999.040", "Nothing.", "Unrelated text."),
    ])
    suite = freeze_suite([
        {"id": "q1", "kind": "ranking", "split": "dev", "family": "fam-a",
         "text": "guardian appointment child", "targets": ["NRS 999.030"]},
        {"id": "q2", "kind": "outside_corpus", "text": "gasoline excise refunds"},
        {"id": "q3", "kind": "outside_corpus", "text": "the of a"},
    ])
    run = retrieval_run_create(suite=suite, k=10)
    result, ranked = _ranked(run, "q1")
    assert result.status == "short" and not result.fallback_used and result.fallback_count == 0
    assert ranked[0] == "NRS_999.010" and len(ranked) == 3 and result.targets_found == ["NRS 999.030"]
    assert "only 3 documents contain a query word" in result.error
    assert result.primary_expression == "guardian OR appoint OR child"
    result, ranked = _ranked(run, "q2")
    assert result.status == "short" and ranked == [] and "no query word occurs" in result.error
    assert "gasolin" in result.error
    result, ranked = _ranked(run, "q3")
    assert result.status == "short" and ranked == [] and "no searchable words" in result.error
    full = retrieval_run_create(suite=suite, k=3)
    assert _ranked(full, "q1")[0].status == "ok"


def test_a_section_in_two_versions_counts_in_both(nrs_imported, fresh_cache):
    versions = list(Provision.objects.filter(citation="NRS 1.510").order_by("variant").values_list("variant",
                                                                                                 flat=True))
    assert versions == [1, 2]
    suite = freeze_suite([
        {"id": "q1", "kind": "ranking", "split": "dev", "family": "fam-a",
         "text": "regulations for certification or registration of court interpreters",
         "targets": ["NRS 1.510"]},
        {"id": "ec1", "kind": "exact_citation", "text": "Nev. Rev. Stat. Ann. § 1.510(2)",
         "expected_citation": "NRS 1.510"},
    ], name="two-versions")
    run = retrieval_run_create(suite=suite, k=30)
    result, ranked = _ranked(run, "ec1")
    assert result.status == "resolved" and result.parsed_citation == "NRS 1.510"
    assert ranked == ["NRS_1.510", "NRS_1.510~v2"]
    result, ranked = _ranked(run, "q1")
    assert {"NRS_1.510", "NRS_1.510~v2"} <= set(ranked)
    assert result.targets_found == ["NRS 1.510"] and result.coverage == 1.0
    qrels = retrieval_run_qrels(run=run)
    assert qrels == "q1 0 NRS_1.510 1\nq1 0 NRS_1.510~v2 1\n"


def test_an_unreadable_exact_citation_control_is_a_failed_control_not_a_refused_suite(nrs_imported, fresh_cache):
    suite = freeze_suite([
        {"id": "q1", "kind": "ranking", "split": "dev", "family": "fam-a", "text": "protective custody of a child",
         "targets": ["NRS 432B.390"]},
        {"id": "ec-bad", "kind": "exact_citation", "text": "the statute on reporting abuse",
         "expected_citation": "NRS 432B.220"},
        {"id": "ec-bare", "kind": "exact_citation", "text": "432B.220(4)(a)", "expected_citation": "NRS 432B.220"},
        {"id": "ec-other", "kind": "exact_citation", "text": "NRS 432B.230", "expected_citation": "NRS 432B.220"},
    ], name="controls")
    run = retrieval_run_create(suite=suite, k=30)
    result, ranked = _ranked(run, "ec-bad")
    assert result.status == "unresolved" and ranked == [] and "found no citation" in result.error
    result, ranked = _ranked(run, "ec-bare")  # a bare number in an NRS suite is an NRS section
    assert result.status == "resolved" and ranked == ["NRS_432B.220"]
    result, _ = _ranked(run, "ec-other")
    assert result.status == "unresolved" and "expects NRS 432B.220" in result.error


def test_targets_written_as_lawyers_write_them_are_stored_in_the_corpus_form(nrs_imported):
    suite = freeze_suite([{"id": "q1", "kind": "ranking", "split": "dev", "family": "fam-a",
                           "text": "who must report child abuse",
                           "targets": ["N.R.S. 432B.220(4)", "Nev. Rev. Stat. § 432B.230"]}], name="forms")
    assert [t.citation for t in suite.queries.get().targets.order_by("id")] == ["NRS 432B.220", "NRS 432B.230"]


def test_a_missing_target_is_still_refused_with_file_query_and_reason(nrs_imported):
    from benchmarks.suites.files import SuiteInvalid
    from benchmarks.suites.services import suite_import

    data = {"name": "bad", "version": 1, "corpus": "nrs", "families": [{"id": "fam-a", "split": "dev"}],
            "queries": [{"id": "q1", "kind": "ranking", "split": "dev", "family": "fam-a", "text": "x y",
                         "targets": ["NRS 432B.999", "not a citation"]}]}
    with pytest.raises(SuiteInvalid) as caught:
        suite_import(raw=json.dumps(data).encode(), filename="/tmp/suites/bad.json")
    message = str(caught.value)
    assert message.startswith("suite bad.json rejected")
    assert "q1: targets[0].citation: NRS 432B.999 is not in the nrs corpus snapshot" in message
    assert "q1: targets[1].citation: not a citation is not in the nrs corpus snapshot" in message


def test_retrieve_command_runs_bm25_by_default(example_suite, fresh_cache, capsys):
    call_command("retrieve", "--suite", "nrs_v1")
    out = capsys.readouterr().out
    assert "engine=bm25s config=bm25-v1" in out and "fallbacks=0" in out
