"""rm3-v1 and qld-v1: first-stage runs over the suite's own documents, the same bytes on every database engine.

The cross-engine proof is bm25-v1's: CI runs this file on SQLite and on PostgreSQL, and both must give
the TREC text whose sha256 is recorded below (checked on both engines).
"""

from __future__ import annotations

import hashlib

import pytest
from django.db import connection
from django.utils.html import escape

from benchmarks.retrieval import bm25, suite_index
from benchmarks.retrieval.bm25_cache import IndexCache
from benchmarks.retrieval.models import RetrievalResult
from benchmarks.retrieval.selectors import retrieval_run_trec
from benchmarks.retrieval.services import retrieval_run_create

# sha256 of retrieval_run_trec(scores="engine", tag=<configuration>) for nrs_v1 over the four NRS chapters
# in DATA_DIR, k=30. Verified on SQLite 3 and on PostgreSQL.
TREC_SHA256 = {
    "rm3-v1": "a3ff31cb8f2a798df55f2da3ff64aa1a5f0ed2f51a62e2e8a1dd86190290ff21",
    "qld-v1": "4d75d8521be8fcacea1996a3b6161de072d05b873005990a60e54ca243444537",
}


@pytest.fixture
def fresh_cache(monkeypatch):
    monkeypatch.setattr(suite_index, "_cache", IndexCache(max_entries=4))
    monkeypatch.setattr(suite_index, "_stats", type(suite_index._stats)())


@pytest.mark.parametrize("configuration", ["rm3-v1", "qld-v1"])
def test_a_first_stage_run_is_recorded_with_its_method_and_gives_the_same_bytes_on_any_engine(
        example_suite, fresh_cache, configuration, stakeholder_client):
    run = retrieval_run_create(suite=example_suite, configuration=configuration, k=30)
    assert run.status == "done", run.error
    assert (run.engine, run.configuration) == ("bm25s", configuration)
    system = run.configuration_detail["system"]
    assert system["citation"] and system["method"] in run.configuration_detail["ranking"]
    if configuration == "rm3-v1":
        assert (system["fb_docs"], system["fb_terms"], system["original_query_weight"]) == (10, 10, 0.5)
        expanded = RetrievalResult.objects.get(run=run, query__qid="dev-01").primary_expression
        assert expanded.count("^") > len(set(bm25.analyze(run.suite.queries.get(qid="dev-01").text)))
    else:
        assert system["mu"] == 2000.0
    text = retrieval_run_trec(run=run, scores="engine", tag=configuration)
    assert text.count("\n") > 30 * 30
    again = retrieval_run_create(suite=example_suite, configuration=configuration, k=30)
    assert again.candidates_sha256 == run.candidates_sha256
    assert retrieval_run_trec(run=again, scores="engine", tag=configuration) == text
    bm25_run = retrieval_run_create(suite=example_suite, k=30)
    assert bm25_run.candidates_sha256 != run.candidates_sha256  # a different system, not a relabelled bm25-v1
    page = stakeholder_client.get(f"/benchmarks/retrieval/{run.pk}/").content.decode()
    assert escape(system["method"]) in page and escape(system["citation"].split(",")[0]) in page
    digest = hashlib.sha256(text.encode("utf-8")).hexdigest()
    assert digest == TREC_SHA256[configuration], f"on {connection.vendor}: {digest}"
