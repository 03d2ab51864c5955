"""Reads of the statute benchmark (pages, API, and the teammates' rerank runs and reports)."""

from __future__ import annotations

from dataclasses import dataclass, field

from django.db.models import Count, Max, Q, QuerySet

from benchmarks.models import (
    Corpus,
    Provision,
    QueryKind,
    RetrievalCandidate,
    RetrievalResult,
    RetrievalRun,
    SourceSnapshot,
    Suite,
    SuiteQuery,
)


def corpus_current_snapshots(*, corpus: str) -> list[SourceSnapshot]:
    """The latest snapshot of every source of a corpus that carries sections."""
    latest = (
        SourceSnapshot.objects.filter(corpus=corpus, provision_count__gt=0)
        .values("source_key").annotate(last=Max("id")).values_list("last", flat=True)
    )
    return list(SourceSnapshot.objects.filter(id__in=list(latest)).order_by("source_key", "id"))


@dataclass
class CorpusSummary:
    corpus: str
    label: str
    snapshots: list[SourceSnapshot]
    provisions: int
    repealed: int


def corpus_list() -> list[CorpusSummary]:
    out = []
    for value, label in Corpus.choices:
        snapshots = corpus_current_snapshots(corpus=value)
        counts = Provision.objects.filter(snapshot__in=snapshots).aggregate(
            n=Count("id"), repealed=Count("id", filter=Q(repealed=True)))
        out.append(CorpusSummary(value, label, snapshots, counts["n"] or 0, counts["repealed"] or 0))
    return out


def corpus_chapters(*, corpus: str) -> list[dict]:
    snapshots = corpus_current_snapshots(corpus=corpus)
    return list(
        Provision.objects.filter(snapshot__in=snapshots)
        .values("chapter", "chapter_title", "snapshot_id")
        .annotate(sections=Count("id"), repealed=Count("id", filter=Q(repealed=True)), first=Max("position"))
        .order_by("snapshot_id", "first")
    )


def chapter_provisions(*, corpus: str, chapter: str) -> QuerySet[Provision]:
    snapshots = corpus_current_snapshots(corpus=corpus)
    return Provision.objects.filter(snapshot__in=snapshots, chapter=chapter).select_related("snapshot").order_by(
        "snapshot_id", "position")


def provision_get(*, pk: int) -> Provision:
    return Provision.objects.select_related("snapshot").prefetch_related("passages").get(pk=pk)


def suite_list() -> QuerySet[Suite]:
    return Suite.objects.annotate(n_queries=Count("queries")).order_by("name", "-version")


def suite_latest(*, name: str) -> Suite | None:
    """``name`` or ``name@version``."""
    if "@" in name:
        base, _, version = name.partition("@")
        return Suite.objects.filter(name=base, version=int(version)).first() if version.isdigit() else None
    return Suite.objects.filter(name=name).order_by("-version").first()


@dataclass
class SuiteGroup:
    label: str
    split: str
    kind: str
    families: dict[str, list[SuiteQuery]] = field(default_factory=dict)


def suite_detail(*, suite: Suite) -> list[SuiteGroup]:
    """Queries grouped: dev and held-out ranking queries by family, then each control kind."""
    groups = [
        SuiteGroup("Development ranking queries", "dev", QueryKind.RANKING),
        SuiteGroup("Held-out ranking queries", "heldout", QueryKind.RANKING),
        SuiteGroup("Outside-corpus controls", "", QueryKind.OUTSIDE_CORPUS),
        SuiteGroup("Exact-citation controls", "", QueryKind.EXACT_CITATION),
    ]
    queries = suite.queries.select_related("family", "expected_provision").prefetch_related("targets").order_by(
        "position")
    for query in queries:
        for group in groups:
            if query.kind == group.kind and (group.kind != QueryKind.RANKING or query.split == group.split):
                key = query.family.name if query.family else ""
                group.families.setdefault(key, []).append(query)
    return groups


def retrieval_run_list(*, suite: Suite | None = None) -> QuerySet[RetrievalRun]:
    runs = RetrievalRun.objects.select_related("suite").order_by("-id")
    return runs.filter(suite=suite) if suite is not None else runs


@dataclass
class CandidateRow:
    rank: int
    citation: str
    heading: str
    provision_id: int
    passage_sha256: str
    score: float
    via_fallback: bool
    is_target: bool


@dataclass
class ResultRow:
    result: RetrievalResult
    query: SuiteQuery
    candidates: list[CandidateRow]
    missing_targets: list[str]


def retrieval_run_detail(*, run: RetrievalRun) -> list[ResultRow]:
    """Every query's candidates in keyword order, targets marked, in suite order."""
    results = list(
        RetrievalResult.objects.filter(run=run).select_related("query", "query__family")
        .prefetch_related("query__targets").order_by("query__position")
    )
    candidates: dict[int, list[RetrievalCandidate]] = {}
    for cand in RetrievalCandidate.objects.filter(result__run=run).select_related("provision", "passage").order_by(
            "result_id", "rank"):
        candidates.setdefault(cand.result_id, []).append(cand)
    rows = []
    for result in results:
        targets = {t.citation for t in result.query.targets.all()}
        if result.query.expected_citation:
            targets.add(result.query.expected_citation)
        cands = [
            CandidateRow(c.rank, c.provision.citation, c.provision.heading, c.provision_id, c.passage.sha256,
                         c.score, c.via_fallback, c.provision.citation in targets)
            for c in candidates.get(result.pk, [])
        ]
        found = {c.citation for c in cands}
        rows.append(ResultRow(result, result.query, cands, sorted(targets - found)))
    return rows


@dataclass
class RunSummary:
    queries: int
    fallbacks: int
    failures: int
    short: int
    ranking_coverage: float | None
    targets_total: int
    targets_found: int


def retrieval_run_summary(*, run: RetrievalRun) -> RunSummary:
    results = list(RetrievalResult.objects.filter(run=run).select_related("query"))
    ranking = [r for r in results if r.query.kind == QueryKind.RANKING]
    total = sum(r.targets_total for r in ranking)
    found = sum(len(r.targets_found) for r in ranking)
    return RunSummary(
        queries=len(results),
        fallbacks=sum(r.fallback_used for r in results),
        failures=sum(r.status in {"failed", "unresolved"} for r in results),
        short=sum(r.status == "short" for r in results),
        ranking_coverage=(found / total) if total else None,
        targets_total=total,
        targets_found=found,
    )
