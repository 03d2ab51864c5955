"""Writes of keyword retrieval runs: k candidates per query of a frozen suite, each search's outcome recorded."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from django.db import DatabaseError, transaction
from django.utils import timezone

from benchmarks.corpus.models import Provision
from benchmarks.corpus.passages import PASSAGE_RULE
from benchmarks.corpus.selectors import corpus_citation_pattern
from benchmarks.corpus.services import passages_ensure
from benchmarks.retrieval.engines import (
    CONFIGURATIONS,
    DEFAULT_CONFIGURATION,
    Configuration,
    Engine,
    engine_for_connection,
    keyword_search,
)
from benchmarks.retrieval.models import ResultStatus, RetrievalCandidate, RetrievalResult, RetrievalRun, RunStatus
from benchmarks.suites.citations import citation_parse
from benchmarks.suites.models import QueryKind, Suite, SuiteQuery
from reviewapp.core.records.hashing import sha256_json

if TYPE_CHECKING:
    from benchmarks.retrieval import bm25, language_models

# --------------------------------------------------------------------------- retrieval


def _keyword_status(*, k: int, primary: int, total: int) -> str:
    if primary >= k:
        return ResultStatus.OK
    if total >= k:
        return ResultStatus.FALLBACK
    return ResultStatus.SHORT


def retrieval_run_create(*, suite: Suite, configuration: str = DEFAULT_CONFIGURATION, k: int = 30,
                         user: Any = None) -> RetrievalRun:
    """Retrieve k keyword candidates for every query of a frozen suite and record the run.

    Exact-citation controls go through the citation parser (no search, no model).
    A query whose search fails is recorded as failed with the error, never dropped.
    ``bm25-v1`` (the default) searches the suite's own BM25 index and records engine "bm25s";
    the other configurations search the database's full-text engine.
    """
    # local import: bm25s (with numpy and scipy) costs ~0.7 s to import; pages import these services and search nothing
    from benchmarks.retrieval import suite_index

    if configuration not in CONFIGURATIONS:
        raise ValueError(f"unknown configuration {configuration!r}; expected one of {', '.join(CONFIGURATIONS)}")
    if not 1 <= k <= 200:
        raise ValueError("k must be between 1 and 200")
    config = CONFIGURATIONS[configuration]
    engine = None if config.engine_independent else engine_for_connection()
    run = RetrievalRun.objects.create(
        suite=suite, engine=suite_index.ENGINE if engine is None else engine.name, configuration=config.name,
        configuration_detail={"name": config.name, "description": config.description} if engine is None
        else config.detail(engine),
        k=k, passage_rule=PASSAGE_RULE, index_documents=0 if engine is None else engine.index_size(),
        status=RunStatus.RUNNING, created_by=user if getattr(user, "is_authenticated", False) else None,
        started_at=timezone.now(),
    )
    try:
        if engine is None:
            index = suite_index.suite_index(suite=suite)
            detail = {**suite_index.index_detail(index, suite=suite), "description": config.description}
            if config.primary == "bm25":
                search = _bm25_searcher(index, k=k)
            else:
                search, system = _language_model_searcher(config.primary, index,
                                                          suite_index.suite_term_stats(suite=suite), k=k)
                detail.update(system=system, ranking=f"{system['method']} ({system['citation']}); see system")
            RetrievalRun.objects.filter(pk=run.pk).update(configuration_detail=detail, index_documents=len(index))
        else:
            search = _engine_searcher(config, engine, k=k)
        _retrieval_run_fill(run=run, suite=suite, search=search)
    except Exception as exc:
        # The run row stays, marked failed with the reason: failures are disclosed, not hidden.
        RetrievalRun.objects.filter(pk=run.pk).update(status=RunStatus.FAILED, error=f"{type(exc).__name__}: {exc}",
                                                      finished_at=timezone.now())
    run.refresh_from_db()
    return run


# A searcher: (question, snapshot ids) -> (hits as (docid or provision id, score, via fallback), result fields).
Searcher = Callable[[str, list[int]], tuple[list[tuple[Any, float, bool]], dict[str, Any]]]


def bm25_search(index: bm25.Bm25Index, text: str, k: int) -> bm25.SearchOutcome:
    return index.search(text, k=k)


def _bm25_searcher(index: bm25.Bm25Index, *, k: int) -> Searcher:
    # local import: bm25s (with numpy and scipy) costs ~0.7 s to import; pages import these services and search nothing
    from benchmarks.retrieval import bm25

    def search(text: str, _snapshot_ids: list[int]):
        try:
            outcome = bm25_search(index, text, k)
        except Exception as exc:  # a failed query is recorded, the others still run
            return [], {"status": ResultStatus.FAILED, "error": f"{type(exc).__name__}: {exc}"}
        hits = [(hit.doc_id, hit.score, False) for hit in outcome.hits]
        # No fallback in bm25-v1: fewer than k matches is "short", with the reason.
        return hits, {
            "status": ResultStatus.OK if outcome.status == bm25.OK else ResultStatus.SHORT,
            "primary_expression": outcome.expression, "primary_count": len(hits),
            "error": outcome.reason + (f" (not in the index: {', '.join(outcome.unknown_tokens)})"
                                       if outcome.unknown_tokens and outcome.status != bm25.OK else ""),
        }
    return search


def _outcome_fields(outcome: bm25.SearchOutcome, hits: list) -> dict[str, Any]:
    # local import: bm25s (with numpy and scipy) costs ~0.7 s to import; pages import these services and search nothing
    from benchmarks.retrieval import bm25

    return {
        "status": ResultStatus.OK if outcome.status == bm25.OK else ResultStatus.SHORT,
        "primary_expression": outcome.expression, "primary_count": len(hits),
        "error": outcome.reason + (f" (not in the index: {', '.join(outcome.unknown_tokens)})"
                                   if outcome.unknown_tokens and outcome.status != bm25.OK else ""),
    }


def _language_model_searcher(primary: str, index: bm25.Bm25Index, stats: language_models.TermStats, *,
                             k: int) -> tuple[Searcher, dict[str, Any]]:
    """rm3-v1 or qld-v1 over the suite's documents; what the run records of the system it ran."""
    # local import: bm25s (with numpy and scipy) costs ~0.7 s to import; pages import these services and search nothing
    from benchmarks.retrieval import language_models

    def search(text: str, _snapshot_ids: list[int]):
        try:
            if primary == "rm3":
                outcome, expansion = language_models.rm3_search(index, stats, text, k=k)
            else:
                outcome, expansion = language_models.qld_search(stats, text, k=k), None
        except Exception as exc:  # a failed query is recorded, the others still run
            return [], {"status": ResultStatus.FAILED, "error": f"{type(exc).__name__}: {exc}"}
        hits = [(hit.doc_id, hit.score, False) for hit in outcome.hits]
        fields = _outcome_fields(outcome, hits)
        if expansion is not None:  # the expanded query is what was searched
            fields["primary_expression"] = expansion.as_text()
        return hits, fields

    detail = language_models.rm3_detail() if primary == "rm3" else language_models.qld_detail()
    return search, detail


def _engine_searcher(config: Configuration, engine: Engine, *, k: int) -> Searcher:
    def search(text: str, snapshot_ids: list[int]):
        try:
            with transaction.atomic():  # a savepoint: a failed statement must not poison the run
                outcome = keyword_search(text=text, snapshot_ids=snapshot_ids, k=k, configuration=config,
                                         engine=engine)
        except DatabaseError as exc:
            return [], {"status": ResultStatus.FAILED, "error": f"{type(exc).__name__}: {exc}"}
        hits = [(h.provision_id, h.score, h.via_fallback) for h in outcome.hits]
        fields: dict[str, Any] = {
            "status": _keyword_status(k=k, primary=outcome.primary_count, total=len(hits)),
            "primary_expression": outcome.primary_expression, "primary_count": outcome.primary_count,
            "fallback_used": outcome.fallback_used, "fallback_expression": outcome.fallback_expression,
            "fallback_count": outcome.fallback_count,
        }
        if not hits:
            fields["error"] = "the question has no searchable words" if not outcome.primary_expression \
                else "no provision matched"
        return hits, fields
    return search


def _citation_control(query: SuiteQuery, *, corpus: str, snapshot_ids: list[int]):
    """An exact-citation control: the parser reads the text; every version of the section is a candidate."""
    parsed = citation_parse(query.text, default_corpus=corpus, code=corpus_citation_pattern(corpus=corpus))
    fields: dict[str, Any] = {"method": "citation-parser", "parsed_citation": parsed.citation if parsed else ""}
    if parsed is None:
        return [], {**fields, "status": ResultStatus.UNRESOLVED,
                    "error": "the citation parser found no citation in the text"}
    # A section printed in two versions (NRS 1.510 ...) resolves to both, in variant order.
    versions = list(Provision.objects.filter(snapshot_id__in=snapshot_ids, citation=parsed.citation)
                    .order_by("variant", "id").values_list("id", flat=True))
    if not versions:
        return [], {**fields, "status": ResultStatus.UNRESOLVED,
                    "error": f"{parsed.citation} is not in the suite's snapshots"}
    hits = [(pk, 1.0, False) for pk in versions]
    if query.expected_citation and parsed.citation != query.expected_citation:
        return hits, {**fields, "status": ResultStatus.UNRESOLVED,
                      "error": f"the parser read {parsed.citation}, the control expects {query.expected_citation}"}
    return hits, {**fields, "status": ResultStatus.RESOLVED}


def _retrieval_run_fill(*, run: RetrievalRun, suite: Suite, search: Searcher) -> None:
    snapshot_ids = sorted(suite.snapshots.values_list("id", flat=True))
    queries = list(suite.queries.prefetch_related("targets").order_by("position"))
    planned: list[tuple[SuiteQuery, dict[str, Any], list[tuple[Any, float, bool]]]] = []
    for query in queries:
        started = time.perf_counter()
        if query.kind == QueryKind.EXACT_CITATION:
            hits, fields = _citation_control(query, corpus=suite.corpus, snapshot_ids=snapshot_ids)
        else:
            hits, fields = search(query.text, snapshot_ids)
            fields["method"] = "keyword"
        fields["elapsed_ms"] = (time.perf_counter() - started) * 1000
        planned.append((query, fields, hits))

    # bm25-v1 names its candidates by docid (engine-independent); map them to this database's rows.
    docids = {ref for _, _, hits in planned for ref, _, _ in hits if isinstance(ref, str)}
    by_docid: dict[str, int] = {}
    if docids:
        for pk, citation, variant in Provision.objects.filter(snapshot_id__in=snapshot_ids).values_list(
                "id", "citation", "variant"):
            docid = Provision(citation=citation, variant=variant).docid
            if docid in docids:
                by_docid[docid] = pk
    planned = [(q, f, [(by_docid[ref] if isinstance(ref, str) else ref, score, fb) for ref, score, fb in hits])
               for q, f, hits in planned]

    provision_ids = {pid for _, _, hits in planned for pid, _, _ in hits}
    provisions = {p.pk: p for p in Provision.objects.filter(pk__in=provision_ids)}
    passages = passages_ensure(provisions=list(provisions.values()), rule=run.passage_rule)
    fingerprint = []
    with transaction.atomic():
        for query, fields, hits in planned:
            targets = [t.citation for t in query.targets.all()]
            # Citations, not rows: a target counts in every version of its section.
            found_citations = {provisions[pid].citation for pid, _, _ in hits}
            found = [c for c in targets if c in found_citations]
            result = RetrievalResult.objects.create(
                run=run, query=query, targets_total=len(targets), targets_found=found,
                coverage=(len(found) / len(targets)) if targets else None, **fields,
            )
            RetrievalCandidate.objects.bulk_create([
                RetrievalCandidate(result=result, rank=rank, provision_id=pid, passage=passages[pid], score=score,
                                   via_fallback=via_fallback)
                for rank, (pid, score, via_fallback) in enumerate(hits, start=1)
            ])
            fingerprint.append([query.qid, [provisions[pid].docid for pid, _, _ in hits]])
        RetrievalRun.objects.filter(pk=run.pk).update(
            status=RunStatus.DONE, finished_at=timezone.now(), candidates_sha256=sha256_json(fingerprint),
        )
