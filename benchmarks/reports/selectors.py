"""Reads of a benchmark report (Django): the runs a report URL names, their queries and candidates.

``rerank_scores_from_run`` is the one adapter from a stored rerank run to the
plain ``RerankScores`` the figures need, whatever the run's storage.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from django.db.models import Count
from django.http import Http404
from django.shortcuts import get_object_or_404

from benchmarks.reports.figures import Report, report_compute
from benchmarks.reports.inputs import (
    Candidate,
    QueryInput,
    ReportInputs,
    RerankMeta,
    RerankScores,
    RetrievalMeta,
    SuiteMeta,
    rerank_apply,
)
from benchmarks.reports.params import ReportParameterError, report_parameters
from benchmarks.rerank.models import RerankGrade, RerankRun
from benchmarks.retrieval.models import RetrievalCandidate, RetrievalResult, RetrievalRun, RunStatus
from benchmarks.suites.models import NominatedTarget, QueryKind
from reviewapp.providers.models import Ledger
from reviewapp.providers.selectors import ledger_spend
from scoring.ir.family_bootstrap import DEFAULT_REPLICATES, DEFAULT_SEED


def _suite_meta(run: RetrievalRun) -> SuiteMeta:
    suite = run.suite
    return SuiteMeta(
        pk=suite.pk, name=suite.name, version=suite.version, corpus=suite.corpus, sha256=suite.sha256,
        sources_sha256=suite.sources_sha256, frozen_at=suite.frozen_at.isoformat(),
        snapshots=tuple(suite.snapshots.order_by("source_key", "id").values_list("source_key", "sha256")),
    )


def _retrieval_meta(run: RetrievalRun) -> RetrievalMeta:
    detail = run.configuration_detail or {}
    return RetrievalMeta(
        pk=run.pk, engine=run.engine, configuration=run.configuration, description=detail.get("description", ""),
        k=run.k, passage_rule=run.passage_rule, index_documents=run.index_documents, status=run.status,
        error=run.error, candidates_sha256=run.candidates_sha256,
    )


def _docid(citation: str, variant: int) -> str:
    # The same rule as Provision.docid, applied to values() rows.
    base = citation.replace(" ", "_")
    return base if variant == 1 else f"{base}~v{variant}"


def retrieval_queries_load(*, run: RetrievalRun) -> tuple[QueryInput, ...]:
    """Every query of a retrieval run with its candidates in keyword order and its nominated targets (3 queries)."""
    targets: dict[int, list[tuple[str, str]]] = {}
    for query_id, citation, number_citation, variant in (
        NominatedTarget.objects.filter(query__suite_id=run.suite_id).order_by("query_id", "id")
        .values_list("query_id", "citation", "provision__citation", "provision__variant")
    ):
        targets.setdefault(query_id, []).append((citation, _docid(number_citation, variant)))
    candidates: dict[int, list[Candidate]] = {}
    for row in (
        RetrievalCandidate.objects.filter(result__run=run).order_by("result_id", "rank")
        .values("result_id", "rank", "score", "via_fallback", "provision_id", "provision__citation",
                "provision__variant", "provision__heading", "passage__sha256")
    ):
        candidates.setdefault(row["result_id"], []).append(Candidate(
            docid=_docid(row["provision__citation"], row["provision__variant"]), provision_id=row["provision_id"],
            citation=row["provision__citation"], heading=row["provision__heading"], keyword_rank=row["rank"],
            keyword_score=row["score"], via_fallback=row["via_fallback"], passage_sha256=row["passage__sha256"],
        ))
    out = []
    for result in RetrievalResult.objects.filter(run=run).select_related("query", "query__family").order_by(
            "query__position"):
        q = result.query
        query_targets = targets.get(q.pk, [])
        out.append(QueryInput(
            qid=q.qid, text=q.text, kind=q.kind, split=q.split, family=q.family.name if q.family else q.qid,
            targets=tuple(d for _, d in query_targets), target_citations=tuple(c for c, _ in query_targets),
            candidates=tuple(candidates.get(result.pk, ())), retrieval_status=result.status,
            retrieval_error=result.error, fallback_used=result.fallback_used, method=result.method,
            parsed_citation=result.parsed_citation, expected_citation=q.expected_citation,
        ))
    return tuple(out)


def secondary_run_default(*, run: RetrievalRun) -> RetrievalRun | None:
    """The latest finished run of the same suite with a different configuration (the secondary baseline).

    One database holds runs of at most two engines, the engine-independent BM25 and its own full-text search,
    so any other configuration of the suite is a fair secondary."""
    return (
        RetrievalRun.objects.filter(suite_id=run.suite_id, status=RunStatus.DONE)
        .exclude(configuration=run.configuration).order_by("-id").first()
    )


def report_inputs_load(*, run: RetrievalRun, rerank: RerankScores | None = None,
                       secondary: RetrievalRun | None = None) -> ReportInputs:
    """Plain inputs of a report: the suite, the primary run (with the rerank applied) and the secondary run."""
    if secondary is not None and secondary.suite_id != run.suite_id:
        raise ReportParameterError(f"secondary run #{secondary.pk} is of another suite than run #{run.pk}")
    return ReportInputs(
        suite=_suite_meta(run),
        retrieval=_retrieval_meta(run),
        queries=rerank_apply(retrieval_queries_load(run=run), rerank),
        rerank=rerank.meta if rerank is not None else None,
        secondary=_retrieval_meta(secondary) if secondary is not None else None,
        secondary_queries=retrieval_queries_load(run=secondary) if secondary is not None else (),
    )


def report_build(*, run: RetrievalRun, rerank: RerankScores | None = None, secondary: RetrievalRun | None = None,
                 replicates: Any = DEFAULT_REPLICATES, seed: Any = DEFAULT_SEED) -> Report:
    """The report of (suite, retrieval run, rerank run), with the secondary baseline when given."""
    replicates, seed = report_parameters(replicates=replicates, seed=seed)
    return report_compute(report_inputs_load(run=run, rerank=rerank, secondary=secondary),
                          replicates=replicates, seed=seed)


def rerank_scores_from_run(*, run: RerankRun) -> RerankScores:
    """The one adapter from a stored rerank run to what the report needs.

    The current grade of a candidate is its highest attempt (as the rerank run
    page reads it). Failed and unknown grades, and candidates never sent (the
    run stopped, was cancelled or is still running), leave the candidate
    ungraded; the query's error says how many of each and why.
    """
    latest: dict[int, dict[str, Any]] = {}
    for grade in (
        RerankGrade.objects.filter(run=run).order_by("attempt", "id")
        .values("candidate_id", "candidate__provision_id", "query__qid", "status", "p_useful", "error")
    ):
        latest[grade["candidate_id"]] = grade
    p_useful: dict[str, dict[int, float]] = {}
    problems: dict[str, dict[str, int]] = {}
    first_error: dict[str, str] = {}
    for grade in latest.values():
        qid = grade["query__qid"]
        if grade["status"] == RerankGrade.Status.GRADED and grade["p_useful"] is not None:
            p_useful.setdefault(qid, {})[grade["candidate__provision_id"]] = float(grade["p_useful"])
        else:
            problems.setdefault(qid, {}).setdefault(grade["status"], 0)
            problems[qid][grade["status"]] += 1
            if grade["error"]:
                first_error.setdefault(qid, grade["error"].splitlines()[0][:300])
    planned = dict(
        RetrievalCandidate.objects.filter(
            result__run_id=run.retrieval_run_id, result__query__kind__in=[QueryKind.RANKING, QueryKind.OUTSIDE_CORPUS])
        .values_list("result__query__qid").annotate(n=Count("id")).values_list("result__query__qid", "n")
    )
    errors: dict[str, str] = {}
    for qid, total in planned.items():
        counts = problems.get(qid, {})
        never = total - len(p_useful.get(qid, {})) - sum(counts.values())
        parts = [f"{n} {status}" for status, n in sorted(counts.items())]
        if never > 0:
            why = run.stop_reason or ("the run is " + run.status)
            parts.append(f"{never} never sent ({why})")
        if parts:
            errors[qid] = f"{', '.join(parts)} of {total} candidates" + (
                f"; first error: {first_error[qid]}" if qid in first_error else "")
    spend = ledger_spend(ledger=run.ledger)
    provider_label = dict(Ledger.Provider.choices).get(run.provider, run.provider)
    meta = RerankMeta(
        pk=run.pk, provider=run.provider, provider_label=provider_label, model_id=run.model_id,
        question_version=run.question_version, question_sha256=run.question_sha256, status=run.status,
        error=run.error or run.stop_reason, method=run.method_label,
        candidates_per_request=run.candidates_per_request,
        budget={"requests": spend.requests, "max_requests": spend.max_requests,
                "input_tokens": spend.input_tokens, "reported_input_tokens": spend.reported_input_tokens,
                "max_input_tokens": spend.max_input_tokens, "receipts_by_status": spend.by_status,
                "stop_reason": spend.stop_reason},
    )
    return RerankScores(meta=meta, p_useful=p_useful, status={}, errors=errors)


def rerank_scores_load(*, pk: int) -> tuple[RerankScores, RetrievalRun]:
    """(adapter output, its retrieval run) of rerank run ``pk``; 404 when there is none."""
    run = get_object_or_404(RerankRun.objects.select_related("retrieval_run__suite", "ledger"), pk=pk)
    return rerank_scores_from_run(run=run), run.retrieval_run


def rerank_run_list() -> list[RerankRun]:
    return list(RerankRun.objects.select_related("suite", "retrieval_run").order_by("-id")[:100])


@dataclass(frozen=True)
class ReportRequest:
    run: RetrievalRun
    rerank: RerankScores | None
    secondary: RetrievalRun | None
    replicates: int
    seed: int
    query_string: str


def report_request_parse(*, source: str, pk: int, params: Mapping[str, str]) -> ReportRequest:
    """Resolve (suite, retrieval run, rerank run) and the bootstrap settings from a URL; 404 for unknown runs.

    ReportParameterError (shown to the user) for absurd replicates/seed or an unusable secondary run.
    """
    if source == "rerank":
        scores, run = rerank_scores_load(pk=pk)
    elif source == "retrieval":
        run = get_object_or_404(RetrievalRun.objects.select_related("suite"), pk=pk)
        scores = None
    else:  # pragma: no cover - the URLconf only routes the two sources
        raise Http404("unknown report source")
    if run.status != RunStatus.DONE:
        raise ReportParameterError(f"retrieval run #{run.pk} is {run.status}; a report needs a finished run")
    replicates, seed = report_parameters(
        replicates=params.get("replicates") or DEFAULT_REPLICATES,
        seed=params.get("seed") or DEFAULT_SEED,
    )
    choice = params.get("secondary", "auto") or "auto"
    if choice == "auto":
        secondary = secondary_run_default(run=run)
    elif choice == "none":
        secondary = None
    else:
        secondary = RetrievalRun.objects.filter(pk=int(choice) if choice.isdecimal() and len(choice) <= 18 else -1,
                                                status=RunStatus.DONE).first()
        if secondary is None or secondary.suite_id != run.suite_id or secondary.pk == run.pk:
            raise ReportParameterError(
                f"secondary={choice!r}: expected 'auto', 'none' or the id of another finished retrieval run "
                f"of suite {run.suite}")
    query = {k: v for k, v in (("replicates", params.get("replicates")), ("seed", params.get("seed")),
                                ("secondary", params.get("secondary"))) if v}
    query_string = "&".join(f"{k}={v}" for k, v in query.items())
    return ReportRequest(run, scores, secondary, replicates, seed, query_string)
