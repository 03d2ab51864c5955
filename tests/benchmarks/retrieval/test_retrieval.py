"""Keyword retrieval on the engine of the database in use (SQLite FTS5 or PostgreSQL full text)."""

from __future__ import annotations

import pytest
from django.db import DatabaseError, connection

from benchmarks.corpus.services import search_index_rebuild
from benchmarks.retrieval.engines import CONFIGURATIONS, engine_for_connection, keyword_search, query_terms
from benchmarks.retrieval.models import RetrievalCandidate, RetrievalResult
from benchmarks.retrieval.services import retrieval_run_create
from tests.benchmarks.conftest import freeze_suite, import_synthetic

EXPECTED_ENGINE = {"sqlite": "sqlite-fts5", "postgresql": "postgresql-fts"}


def _ranked(run, qid):
    result = RetrievalResult.objects.get(run=run, query__qid=qid)
    return result, [c.provision.citation for c in result.candidates.select_related("provision").order_by("rank")]


def test_the_engine_is_the_one_of_the_database_in_use(db):
    assert engine_for_connection().name == EXPECTED_ENGINE[connection.vendor]


def test_query_terms_drop_function_words_and_keep_order():
    assert query_terms("When may a court accept a credit card? Credit!") == ["court", "accept", "credit", "card"]


def test_rerunning_the_example_suite_gives_the_same_candidates(example_suite):
    first = retrieval_run_create(suite=example_suite, configuration="keyword-v1", k=30)
    second = retrieval_run_create(suite=example_suite, configuration="keyword-v1", k=30)
    assert first.status == second.status == "done"
    assert first.engine == EXPECTED_ENGINE[connection.vendor] and first.configuration == "keyword-v1"
    assert first.candidates_sha256 == second.candidates_sha256
    for qid in ("dev-01", "ho-10", "oc-02"):
        assert _ranked(first, qid)[1] == _ranked(second, qid)[1]
    result, ranked = _ranked(first, "ho-10")
    assert len(ranked) == 30 and "NRS 432B.390" in ranked
    assert result.targets_found == ["NRS 432B.390"] and result.coverage == 1.0
    scores = [c.score for c in result.candidates.order_by("rank")]
    assert scores[: result.primary_count] == sorted(scores[: result.primary_count], reverse=True)


def test_the_secondary_baseline_is_a_separately_named_run(example_suite):
    run = retrieval_run_create(suite=example_suite, configuration="heading-v1", k=30)
    assert run.status == "done" and run.configuration == "heading-v1"
    assert run.configuration_detail["primary"] == "heading_any_term"
    again = retrieval_run_create(suite=example_suite, configuration="heading-v1", k=30)
    assert again.candidates_sha256 == run.candidates_sha256


def test_exact_citation_controls_are_resolved_by_the_parser_without_a_search(example_suite, monkeypatch):
    searched: list[str] = []

    def recording(**kwargs):
        searched.append(kwargs["text"])
        return keyword_search(**kwargs)

    monkeypatch.setattr("benchmarks.retrieval.services.keyword_search", recording)
    run = retrieval_run_create(suite=example_suite, configuration="keyword-v1", k=30)
    controls = list(example_suite.queries.filter(kind="exact_citation"))
    assert len(controls) == 6 and not {q.text for q in controls} & set(searched)
    for qid, citation in [("ec-01", "NRS 432B.220"), ("ec-02", "NRS 0.025"), ("ec-06", "NRS 1.4677")]:
        result, ranked = _ranked(run, qid)
        assert result.method == "citation-parser" and result.status == "resolved"
        assert result.parsed_citation == citation and ranked == [citation]


def test_the_heading_outweighs_the_body(db):
    import_synthetic([
        ("999.010", "General matters.", "A tenant deposit is described here and elsewhere."),
        ("999.020", "Tenant deposit.", "Money held by the landlord."),
        ("999.030", "Unrelated.", "Nothing to see."),
    ])
    suite = freeze_suite([{"id": "q1", "kind": "ranking", "split": "dev", "family": "fam-a",
                           "text": "tenant deposit", "targets": ["NRS 999.020"]}])
    run = retrieval_run_create(suite=suite, k=2)
    result, ranked = _ranked(run, "q1")
    assert ranked == ["NRS 999.020", "NRS 999.010"]
    assert result.status == "ok" and not result.fallback_used


def test_ties_are_broken_by_citation(db):
    same = ("Same heading.", "identical body about escrow accounts")
    import_synthetic([("999.300", *same), ("999.100", *same), ("999.200", *same)])
    suite = freeze_suite([{"id": "q1", "kind": "ranking", "split": "dev", "family": "fam-a",
                           "text": "escrow accounts", "targets": ["NRS 999.100"]}])
    run = retrieval_run_create(suite=suite, k=3)
    assert _ranked(run, "q1")[1] == ["NRS 999.100", "NRS 999.200", "NRS 999.300"]


def test_a_short_primary_search_is_filled_by_a_recorded_fallback(db):
    import_synthetic([
        ("999.010", "Guardian appointment.", "The court appoints a guardian for the child."),
        ("999.020", "Guardian fees.", "Fees of a guardian."),
        ("999.030", "Child support.", "Support of a child."),
        ("999.040", "Nothing.", "Unrelated text."),
    ])
    suite = freeze_suite([{"id": "q1", "kind": "ranking", "split": "dev", "family": "fam-a",
                           "text": "guardian appointment child", "targets": ["NRS 999.030"]}])
    run = retrieval_run_create(suite=suite, configuration="keyword-v1", k=3)
    result, ranked = _ranked(run, "q1")
    assert result.fallback_used and result.status == "fallback"
    assert result.primary_count == 1 and result.fallback_count == 2
    assert ranked[0] == "NRS 999.010"
    flags = list(RetrievalCandidate.objects.filter(result=result).order_by("rank").values_list("via_fallback",
                                                                                             flat=True))
    assert flags == [False, True, True]
    assert result.targets_found == ["NRS 999.030"]
    # only three documents match at all: asking for more leaves the query short, and says so
    short = retrieval_run_create(suite=suite, configuration="keyword-v1", k=10)
    assert _ranked(short, "q1")[0].status == "short"


def test_a_failed_search_is_recorded_and_shown_not_dropped(example_suite, monkeypatch):
    def broken(**kwargs):
        if "protective custody" in kwargs["text"]:
            raise DatabaseError("simulated engine failure")
        return keyword_search(**kwargs)

    monkeypatch.setattr("benchmarks.retrieval.services.keyword_search", broken)
    run = retrieval_run_create(suite=example_suite, configuration="keyword-v1", k=30)
    assert run.status == "done"
    result, ranked = _ranked(run, "ho-10")
    assert result.status == "failed" and "simulated engine failure" in result.error and ranked == []
    assert _ranked(run, "ho-11")[0].status in {"ok", "fallback"}


def test_rebuilding_the_index_is_idempotent(example_suite):
    before = retrieval_run_create(suite=example_suite, configuration="keyword-v1", k=30)
    search_index_rebuild()
    search_index_rebuild()
    after = retrieval_run_create(suite=example_suite, configuration="keyword-v1", k=30)
    assert after.candidates_sha256 == before.candidates_sha256
    assert after.index_documents == before.index_documents == 302


def test_new_imports_are_indexed_at_once(db):
    import_synthetic([("999.010", "Zebra crossings.", "Pedestrians.")])
    outcome = keyword_search(text="zebra", snapshot_ids=list(range(1, 10_000)), k=5,
                             configuration=CONFIGURATIONS["keyword-v1"])
    assert outcome.primary_count == 1


@pytest.mark.parametrize("k", [0, 500])
def test_it_refuses_an_unreasonable_k(example_suite, k):
    with pytest.raises(ValueError, match="k must be"):
        retrieval_run_create(suite=example_suite, k=k)
