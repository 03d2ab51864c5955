"""Writes of keyword retrieval runs: k candidates per query of a frozen suite, each search's outcome recorded."""

from __future__ import annotations

import time
from typing import Any

from django.db import DatabaseError, transaction
from django.utils import timezone

from benchmarks.corpus.models import Provision
from benchmarks.corpus.passages import PASSAGE_RULE
from benchmarks.corpus.services import passages_ensure
from benchmarks.retrieval.engines import CONFIGURATIONS, engine_for_connection, keyword_search
from benchmarks.retrieval.models import ResultStatus, RetrievalCandidate, RetrievalResult, RetrievalRun, RunStatus
from benchmarks.suites.citations import citation_parse
from benchmarks.suites.models import QueryKind, Suite, SuiteQuery
from reviewapp.core.hashing import sha256_json

# --------------------------------------------------------------------------- retrieval


def _keyword_status(*, k: int, primary: int, total: int) -> str:
    if primary >= k:
        return ResultStatus.OK
    if total >= k:
        return ResultStatus.FALLBACK
    return ResultStatus.SHORT


def retrieval_run_create(*, suite: Suite, configuration: str = "keyword-v1", k: int = 30,
                         user: Any = None) -> RetrievalRun:
    """Retrieve k keyword candidates for every query of a frozen suite and record the run.

    Exact-citation controls go through the citation parser (no search, no model).
    A query whose search fails is recorded as failed with the error, never dropped.
    """
    if configuration not in CONFIGURATIONS:
        raise ValueError(f"unknown configuration {configuration!r}; expected one of {', '.join(CONFIGURATIONS)}")
    if not 1 <= k <= 200:
        raise ValueError("k must be between 1 and 200")
    engine = engine_for_connection()
    config = CONFIGURATIONS[configuration]
    run = RetrievalRun.objects.create(
        suite=suite, engine=engine.name, configuration=config.name, configuration_detail=config.detail(engine),
        k=k, passage_rule=PASSAGE_RULE, index_documents=engine.index_size(), status=RunStatus.RUNNING,
        created_by=user if getattr(user, "is_authenticated", False) else None, started_at=timezone.now(),
    )
    try:
        _retrieval_run_fill(run=run, suite=suite, config=config, engine=engine, k=k)
    except Exception as exc:
        # The run row stays, marked failed with the reason: failures are disclosed, not hidden.
        RetrievalRun.objects.filter(pk=run.pk).update(status=RunStatus.FAILED, error=f"{type(exc).__name__}: {exc}",
                                                      finished_at=timezone.now())
        run.refresh_from_db()
    return run


def _retrieval_run_fill(*, run: RetrievalRun, suite: Suite, config, engine, k: int) -> None:
    snapshot_ids = sorted(suite.snapshots.values_list("id", flat=True))
    queries = list(suite.queries.prefetch_related("targets").order_by("position"))
    planned: list[tuple[SuiteQuery, dict[str, Any], list[tuple[int, float, bool]]]] = []
    for query in queries:
        started = time.perf_counter()
        fields: dict[str, Any] = {}
        hits: list[tuple[int, float, bool]] = []
        if query.kind == QueryKind.EXACT_CITATION:
            parsed = citation_parse(query.text)
            fields["method"] = "citation-parser"
            fields["parsed_citation"] = parsed.citation if parsed else ""
            provision = (
                Provision.objects.filter(snapshot_id__in=snapshot_ids, citation=parsed.citation)
                .order_by("variant", "id").first() if parsed else None
            )
            if provision is not None:
                hits = [(provision.pk, 1.0, False)]
                fields["status"] = ResultStatus.RESOLVED
            else:
                fields["status"] = ResultStatus.UNRESOLVED
                fields["error"] = "no citation found in the text" if parsed is None else (
                    f"{parsed.citation} is not in the suite's snapshots")
        else:
            fields["method"] = "keyword"
            try:
                with transaction.atomic():  # a savepoint: a failed statement must not poison the run
                    outcome = keyword_search(text=query.text, snapshot_ids=snapshot_ids, k=k,
                                             configuration=config, engine=engine)
            except DatabaseError as exc:
                fields.update(status=ResultStatus.FAILED, error=f"{type(exc).__name__}: {exc}")
            else:
                hits = [(h.provision_id, h.score, h.via_fallback) for h in outcome.hits]
                fields.update(
                    status=_keyword_status(k=k, primary=outcome.primary_count, total=len(hits)),
                    primary_expression=outcome.primary_expression, primary_count=outcome.primary_count,
                    fallback_used=outcome.fallback_used, fallback_expression=outcome.fallback_expression,
                    fallback_count=outcome.fallback_count,
                )
                if not hits:
                    fields["error"] = "the question has no searchable words" if not outcome.primary_expression \
                        else "no provision matched"
        fields["elapsed_ms"] = (time.perf_counter() - started) * 1000
        planned.append((query, fields, hits))

    provision_ids = {pid for _, _, hits in planned for pid, _, _ in hits}
    provisions = {p.pk: p for p in Provision.objects.filter(pk__in=provision_ids)}
    passages = passages_ensure(provisions=list(provisions.values()), rule=run.passage_rule)
    fingerprint = []
    with transaction.atomic():
        for query, fields, hits in planned:
            targets = [t.citation for t in query.targets.all()]
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
    run.refresh_from_db()
