"""Reads of a benchmark report (Django): the runs a report URL names, their queries and candidates.

``rerank_scores_from_run`` is the one adapter from a stored rerank run to the
plain ``RerankScores`` the figures need, whatever the run's storage.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any

from django.db.models import Count
from django.http import Http404
from django.shortcuts import get_object_or_404

from benchmarks.comparisons.selectors import comparison_get
from benchmarks.labels.selectors import is_synthetic, pool_info_load, run_pools
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
from benchmarks.reports.leaderboard import (
    FUSION,
    FirstStageInput,
    LabelInputs,
    Leaderboard,
    LeaderboardInputs,
    RerankEntry,
    leaderboard_compute,
)
from benchmarks.reports.params import ReportParameterError, report_parameters
from benchmarks.rerank.models import RerankGrade, RerankRun, RerankStatus
from benchmarks.retrieval.models import RetrievalCandidate, RetrievalResult, RetrievalRun, RunStatus
from benchmarks.snapshots.selectors import suite_drift_caveats
from benchmarks.suites.models import NominatedTarget, QueryKind
from benchmarks.suites.selectors import TargetVersions, suite_target_versions

if TYPE_CHECKING:
    from reviewapp.review.pools.refs import PoolRef
from reviewapp.providers.local.embeddings import MODEL_ID as LOCAL_MODEL
from reviewapp.providers.selectors import ledger_simulated, ledger_spend, provider_label
from reviewapp.providers.types import SIMULATED_LABEL
from scoring.ir.family_bootstrap import DEFAULT_REPLICATES, DEFAULT_SEED


def _suite_meta(run: RetrievalRun) -> SuiteMeta:
    suite = run.suite
    definition = json.loads(suite.definition)
    targets = list(NominatedTarget.objects.filter(query__suite=suite).order_by("id").values_list(
        "nominated_by", "provisional", "confirmed_by"))
    nominators = [definition.get("nominated_by", ""), *(by for by, _, _ in targets)]
    confirmed = Counter(c["lawyers"] for _, _, c in targets if c)
    return SuiteMeta(
        pk=suite.pk, name=suite.name, version=suite.version, corpus=suite.corpus, sha256=suite.sha256,
        sources_sha256=suite.sources_sha256, frozen_at=suite.frozen_at.isoformat(),
        snapshots=tuple(suite.snapshots.order_by("source_key", "id").values_list("source_key", "sha256")),
        nominators=tuple(dict.fromkeys(n for n in nominators if n)), synthetic=definition.get("synthetic"),
        targets_total=len(targets), targets_provisional=sum(provisional for _, provisional, _ in targets),
        targets_confirmed=tuple(sorted(confirmed.items())),
        source_changes=suite_drift_caveats(suite=suite),
    )


def _retrieval_meta(run: RetrievalRun) -> RetrievalMeta:
    detail = run.configuration_detail or {}
    return RetrievalMeta(
        pk=run.pk, engine=run.engine, configuration=run.configuration, description=detail.get("description", ""),
        k=run.k, passage_rule=run.passage_rule, index_documents=run.index_documents, status=run.status,
        error=run.error, candidates_sha256=run.candidates_sha256,
    )


def run_metas(*, retrieval_run: RetrievalRun, rerank_run: RerankRun | None = None
              ) -> tuple[RetrievalMeta, RerankMeta | None]:
    """A retrieval run, and one of its rerank runs, as the report reads them; enough for the held-out ledger's
    configuration (no queries, no spend)."""
    rerank = None if rerank_run is None else RerankMeta(
        pk=rerank_run.pk, provider=rerank_run.provider, provider_label=rerank_run.provider,
        model_id=rerank_run.model_id, question_version=rerank_run.question_version,
        question_sha256=rerank_run.question_sha256, status=rerank_run.status)
    return _retrieval_meta(retrieval_run), rerank


def _docid(citation: str, variant: int) -> str:
    # The same rule as Provision.docid, applied to values() rows.
    base = citation.replace(" ", "_")
    return base if variant == 1 else f"{base}~v{variant}"


def retrieval_queries_load(*, run: RetrievalRun) -> tuple[QueryInput, ...]:
    """Every query of a retrieval run with its candidates in keyword order and its nominated targets (3 queries)."""
    targets: dict[int, list[TargetVersions]] = {}
    for target in suite_target_versions(suite=run.suite):
        targets.setdefault(target.query_id, []).append(target)
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
            targets=tuple(d for t in query_targets for d in t.docids),
            target_citations=tuple(t.citation for t in query_targets),
            target_versions=tuple(t.docids for t in query_targets),
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
    # The last row of a candidate wins: its latest attempt.
    latest = {grade["candidate_id"]: grade for grade in (
        RerankGrade.objects.filter(run=run).order_by("attempt", "id")
        .values("candidate_id", "candidate__provision_id", "query__qid", "status", "p_useful", "error")
    )}
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
    never_sent = 0
    for qid, total in planned.items():
        counts = problems.get(qid, {})
        never = total - len(p_useful.get(qid, {})) - sum(counts.values())
        parts = [f"{n} {status}" for status, n in sorted(counts.items())]
        never_sent += max(never, 0)
        if never > 0:
            why = run.stop_reason or ("the run is " + run.status)
            parts.append(f"{never} never sent ({why})")
        if parts:
            errors[qid] = f"{', '.join(parts)} of {total} candidates" + (
                f"; first error: {first_error[qid]}" if qid in first_error else "")
    spend = ledger_spend(ledger=run.ledger)
    label = provider_label(run.provider)
    simulated = ledger_simulated(ledger=run.ledger)
    if simulated:
        # Answers of the loopback test server, not a model's: said wherever the run is named.
        label = f"{SIMULATED_LABEL} (loopback test server, not a model): {label}"
    meta = RerankMeta(
        pk=run.pk, provider=run.provider, provider_label=label, model_id=run.model_id, simulated=simulated,
        question_version=run.question_version, question_sha256=run.question_sha256, status=run.status,
        error=run.error or run.stop_reason, method=run.method_label,
        candidates_per_request=run.candidates_per_request,
        budget={"requests": spend.requests, "max_requests": spend.max_requests,
                "input_tokens": spend.input_tokens, "reported_input_tokens": spend.reported_input_tokens,
                "max_input_tokens": spend.max_input_tokens, "receipts_by_status": spend.by_status,
                "stop_reason": spend.stop_reason},
        counts={
            "candidates_failed": sum(c.get(RerankGrade.Status.FAILED, 0) for c in problems.values()),
            "candidates_unknown": sum(c.get(RerankGrade.Status.UNKNOWN, 0) for c in problems.values()),
            "candidates_never_sent": never_sent,
            "requests_sent": spend.requests, "requests_answered": spend.answered, "requests_failed": spend.failed,
            "requests_unknown": spend.unknown, "requests_not_sent": spend.not_sent,
        },
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


# --------------------------------------------------------------------------- the statute leaderboard

MAX_LEADERBOARD_RUNS = 12


def _leaderboard_labels(runs: list[RerankRun]) -> LabelInputs | None:
    """Completed human passage labels of the newest non-synthetic pool of each run, merged; None without a pool.

    Two pools that label one item differently leave it unlabelled (counted), never pick a side.
    """
    pools: list[PoolRef] = []
    for run in runs:
        real = [p for p in run_pools(rerank_run=run) if not is_synthetic(p)]
        if real and all(p.pk != real[0].pk for p in pools):
            pools.append(real[0])
    if not pools:
        return None
    labels: dict[tuple[str, str], int] = {}
    conflicting: set[tuple[str, str]] = set()
    members: dict[str, set[str]] = {}
    described = []
    for pool in pools:
        info, pool_labels, pool_members = pool_info_load(pool=pool)
        described.append(f"{info.name} ({info.public_id}): {info.labelled} of {info.items} items labelled")
        for qid, docids in pool_members.items():
            members.setdefault(qid, set()).update(docids)
        for item, grade in pool_labels.items():
            if labels.setdefault(item, grade) != grade:
                conflicting.add(item)
    for item in conflicting:
        del labels[item]
    return LabelInputs(labels=labels, members={q: frozenset(d) for q, d in members.items()},
                       pools=tuple(described), conflicts=len(conflicting))


MAX_FIRST_STAGES = 8


def first_stage_runs(*, run: RetrievalRun) -> list[RetrievalRun]:
    """``run`` and the newest finished run of every other (engine, configuration, k) of its suite, oldest first
    after ``run``; at most MAX_FIRST_STAGES."""
    others: dict[tuple[str, str, int], RetrievalRun] = {}
    for other in (RetrievalRun.objects.filter(suite_id=run.suite_id, status=RunStatus.DONE).exclude(pk=run.pk)
                  .order_by("-id")):
        key = (other.engine, other.configuration, other.k)
        if key != (run.engine, run.configuration, run.k):
            others.setdefault(key, other)
    return [run, *sorted(others.values(), key=lambda r: r.pk)][:MAX_FIRST_STAGES]


def leaderboard_inputs_load(*, run: RetrievalRun, reranks: list[RerankRun],
                            hybrids: list[RerankRun] | None = None,
                            others: list[RetrievalRun] | None = None) -> LeaderboardInputs:
    """Plain inputs of the leaderboard of ``run``: its queries once, each rerank run's P(useful) on them, the
    hybrid (RRF with keyword order) of each run of ``hybrids``, and the suite's retrieval runs on known targets.

    Every rerank run must rank this retrieval run's candidates (ReportParameterError otherwise), unless
    ``others`` is given (a declared comparison): then the keyword orders of ``others`` are systems too, and a
    rerank run of any retrieval run of the suite is shown on its own run's candidates.
    """
    hybrids = hybrids or []
    across = others is not None
    others = [o for o in (others or []) if o.pk != run.pk]
    for rerank in [*reranks, *hybrids]:
        if rerank.retrieval_run_id != run.pk and not (across and rerank.retrieval_run.suite_id == run.suite_id):
            raise ReportParameterError(_other_candidates(rerank, run))
    queries = retrieval_queries_load(run=run)
    loaded: dict[int, tuple[QueryInput, ...]] = {run.pk: queries}

    def queries_of(retrieval: RetrievalRun) -> tuple[QueryInput, ...]:
        if retrieval.pk not in loaded:
            loaded[retrieval.pk] = retrieval_queries_load(run=retrieval)
        return loaded[retrieval.pk]

    entries = []
    hybrid_ids = {h.pk for h in hybrids}
    for rerank in sorted({r.pk: r for r in [*reranks, *hybrids]}.values(), key=lambda r: r.pk):
        scores = rerank_scores_from_run(run=rerank)
        own = rerank.retrieval_run_id == run.pk
        applied = rerank_apply(queries if own else queries_of(rerank.retrieval_run), scores)
        retrieval = None if own else _retrieval_meta(rerank.retrieval_run)
        if rerank in reranks:
            entries.append(RerankEntry(meta=scores.meta, queries=applied, retrieval=retrieval))
        if rerank.pk in hybrid_ids:
            entries.append(RerankEntry(meta=replace(scores.meta, fusion=FUSION), queries=applied,
                                       retrieval=retrieval))
    first_stages = [FirstStageInput(retrieval=_retrieval_meta(run), queries=queries)]
    first_stages += [FirstStageInput(retrieval=_retrieval_meta(other), queries=queries_of(other))
                     for other in first_stage_runs(run=run)[1:]]
    return LeaderboardInputs(suite=_suite_meta(run), retrieval=_retrieval_meta(run), queries=queries,
                             reranks=tuple(entries), labels=_leaderboard_labels(reranks),
                             first_stages=tuple(first_stages),
                             others=tuple(FirstStageInput(retrieval=_retrieval_meta(o), queries=queries_of(o))
                                          for o in others))


def _other_candidates(rerank: RerankRun, run: RetrievalRun) -> str:
    return (f"rerank run #{rerank.pk} reranks the candidates of retrieval run #{rerank.retrieval_run_id}, not of "
            f"retrieval run #{run.pk}: a different candidate set, so its figures cannot be compared on this "
            "leaderboard. Open the leaderboard of its own retrieval run instead.")


@dataclass(frozen=True)
class LeaderboardRequest:
    run: RetrievalRun
    reranks: list[RerankRun]
    available: list[RerankRun]  # every rerank run of the retrieval run, for the chooser
    replicates: int
    seed: int
    query_string: str
    hybrids: tuple[RerankRun, ...] = ()  # rerank runs whose RRF with keyword order is also a system
    # A declared comparison shown whole (``comparison=``): its systems fix reranks, hybrids and ``others``.
    comparison: Any = None
    others: tuple[RetrievalRun, ...] = ()  # other retrieval runs whose keyword order is a system
    left_out: tuple[RerankRun, ...] = ()  # runs of the chooser not ranked by default (unfinished), named on the page


def _run_ids(params: Any, name: str) -> list[str]:
    raw = params.getlist(name) if hasattr(params, "getlist") else ([params[name]] if name in params else [])
    return [t.strip() for value in raw for t in str(value).split(",") if t.strip()]


def _hybrids(params: Any, *, chosen: list[RerankRun]) -> tuple[list[RerankRun], bool]:
    """(the rerank runs fused with keyword order, whether the URL chose them): ``hybrid`` names chosen runs by
    id, or "none"; without it, every chosen run of the bundled embedding model (the BM25 + MiniLM hybrid)."""
    tokens = _run_ids(params, "hybrid")
    if not tokens:
        return [r for r in chosen if r.provider == "local" and r.model_id == LOCAL_MODEL], False
    if tokens == ["none"]:
        return [], True
    by_pk = {r.pk: r for r in chosen}
    out = []
    for token in tokens:
        if not (token.isdecimal() and len(token) <= 18) or int(token) not in by_pk:
            raise ReportParameterError(f"hybrid={token!r}: expected 'none' or the id of a rerank run shown on this "
                                       "leaderboard")
        out.append(by_pk[int(token)])
    return sorted(set(out), key=lambda r: r.pk), True


def leaderboard_request_parse(*, pk: int, params: Any) -> LeaderboardRequest:
    """The retrieval run, the chosen rerank runs (``rerank``, repeated or comma-separated; default: all of the
    run's, newest first, up to MAX_LEADERBOARD_RUNS) and the bootstrap settings; 404 for an unknown run."""
    run = get_object_or_404(RetrievalRun.objects.select_related("suite"), pk=pk)
    if run.status != RunStatus.DONE:
        raise ReportParameterError(f"retrieval run #{run.pk} is {run.status}; a leaderboard needs a finished run")
    replicates, seed = report_parameters(replicates=params.get("replicates") or DEFAULT_REPLICATES,
                                         seed=params.get("seed") or DEFAULT_SEED)
    if params.get("comparison"):
        return _comparison_request(run, params, replicates, seed)
    available = list(RerankRun.objects.filter(retrieval_run=run).select_related("ledger").order_by("id"))
    tokens = _run_ids(params, "rerank")
    left_out: tuple[RerankRun, ...] = ()
    if not tokens:
        # By default a board ranks the runs that graded everything they planned, as the CUAD board ranks complete
        # runs: a partial run would make the verdict "incomplete" for every system. It stays in the chooser, named
        # with its status, one tick away; with no finished run, every run is shown as before.
        finished = [r for r in available if r.status == RerankStatus.DONE]
        chosen = (finished or available)[-MAX_LEADERBOARD_RUNS:]
        left_out = tuple(r for r in available if r not in chosen)
    else:
        bad = [t for t in tokens if not (t.isdecimal() and len(t) <= 18)]
        if bad:
            raise ReportParameterError(f"rerank={bad[0]!r}: expected the id of a rerank run")
        ids = list(dict.fromkeys(int(t) for t in tokens))
        if len(ids) > MAX_LEADERBOARD_RUNS:
            raise ReportParameterError(f"rerank: at most {MAX_LEADERBOARD_RUNS} rerank runs on one leaderboard, "
                                       f"got {len(ids)}")
        found = {r.pk: r for r in RerankRun.objects.filter(pk__in=ids).select_related("ledger")}
        missing = [i for i in ids if i not in found]
        if missing:
            raise ReportParameterError(f"rerank={missing[0]}: no such rerank run")
        for rerank in found.values():
            if rerank.retrieval_run_id != run.pk:
                raise ReportParameterError(_other_candidates(rerank, run))
        chosen = sorted(found.values(), key=lambda r: r.pk)
    hybrids, hybrids_chosen = _hybrids(params, chosen=chosen)
    query = [("replicates", params.get("replicates")), ("seed", params.get("seed"))]
    query += [("rerank", str(r.pk)) for r in chosen] if tokens else []
    if hybrids_chosen:
        query += [("hybrid", str(r.pk)) for r in hybrids] or [("hybrid", "none")]
    query_string = "&".join(f"{k}={v}" for k, v in query if v)
    return LeaderboardRequest(run, chosen, available, replicates, seed, query_string, tuple(hybrids),
                              left_out=left_out)


def _comparison_request(run: RetrievalRun, params: Any, replicates: int, seed: int) -> LeaderboardRequest:
    """Every system of the declared comparison ``comparison=`` and nothing else, on the board of ``run``."""
    raw = str(params.get("comparison"))
    declaration = comparison_get(pk=int(raw)) if raw.isdecimal() and len(raw) <= 18 else None
    if declaration is None:
        raise ReportParameterError(f"comparison={raw!r}: no such declared comparison")
    if _run_ids(params, "rerank") or _run_ids(params, "hybrid"):
        raise ReportParameterError("comparison= shows the declared systems: leave out rerank= and hybrid=")
    retrieval_ids = {r for r, _, _ in declaration.runs}
    runs = RetrievalRun.objects.select_related("suite").in_bulk(retrieval_ids)
    if any(r.suite_id != run.suite_id for r in runs.values()) or len(runs) != len(retrieval_ids):
        raise ReportParameterError(f"comparison #{declaration.pk} is of {declaration.suite}, not of the suite of "
                                   f"retrieval run #{run.pk} ({run.suite})")
    rerank_ids = {m for _, m, _ in declaration.runs if m is not None}
    reranks = RerankRun.objects.select_related("ledger", "retrieval_run").in_bulk(rerank_ids)
    chosen = sorted({reranks[m].pk: reranks[m] for _, m, h in declaration.runs if m is not None and not h}.values(),
                    key=lambda r: r.pk)
    hybrids = sorted({reranks[m].pk: reranks[m] for _, m, h in declaration.runs if m is not None and h}.values(),
                     key=lambda r: r.pk)
    others = tuple(runs[r] for r, m, _ in declaration.runs if m is None and r != run.pk)
    available = list(RerankRun.objects.filter(retrieval_run=run).select_related("ledger").order_by("id"))
    query = [("replicates", params.get("replicates")), ("seed", params.get("seed")),
             ("comparison", str(declaration.pk))]
    query_string = "&".join(f"{k}={v}" for k, v in query if v)
    return LeaderboardRequest(run, chosen, available, replicates, seed, query_string, tuple(hybrids),
                              comparison=declaration, others=others)


def leaderboard_build(*, run: RetrievalRun, reranks: list[RerankRun], replicates: Any = DEFAULT_REPLICATES,
                      seed: Any = DEFAULT_SEED, hybrids: Any = (), others: Any = None) -> Leaderboard:
    """``others``: a declared comparison's other retrieval runs (keyword orders shown as systems); given (even
    empty), rerank runs of any retrieval run of the suite are accepted."""
    replicates, seed = report_parameters(replicates=replicates, seed=seed)
    return leaderboard_compute(leaderboard_inputs_load(run=run, reranks=reranks, hybrids=list(hybrids),
                                                       others=None if others is None else list(others)),
                               replicates=replicates, seed=seed)
