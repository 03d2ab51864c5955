"""Reads of the statute corpora: current snapshots, chapters, provisions."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from django.db.models import Count, Max, Q, QuerySet

from benchmarks.corpus.models import Corpus, CorpusCode, Provision, SourceSnapshot
from benchmarks.suites.citations import CodePattern

# The jurisdictions of the built-in codes; a code imported from a corpus file names its own.
BUILTIN_JURISDICTIONS = {"nrs": "Nevada", "hrs": "Hawaii", "usc": "United States (federal)"}


def corpus_codes() -> list[tuple[str, str]]:
    """(id, name) of every code: the built-in ones, then those imported from corpus files."""
    return [*Corpus.choices, *CorpusCode.objects.order_by("code").values_list("code", "name")]


def corpus_known(*, corpus: str) -> bool:
    return corpus in Corpus.values or CorpusCode.objects.filter(code=corpus).exists()


def corpus_jurisdiction(*, corpus: str) -> str:
    if corpus in BUILTIN_JURISDICTIONS:
        return BUILTIN_JURISDICTIONS[corpus]
    return CorpusCode.objects.filter(code=corpus).values_list("jurisdiction", flat=True).first() or corpus


def corpus_citation_pattern(*, corpus: str) -> CodePattern | None:
    """How citations of a code imported from a corpus file are read (None for the built-in codes, whose
    forms the citation parser knows, and for a code whose file gave no pattern)."""
    if corpus in Corpus.values:
        return None
    found = CorpusCode.objects.filter(code=corpus).exclude(citation_pattern="").first()
    return CodePattern(found.code, found.citation_pattern, found.citation_form) if found else None


def corpus_current_snapshots(*, corpus: str) -> list[SourceSnapshot]:
    """The latest snapshot of every source of a corpus that carries sections."""
    latest = (
        SourceSnapshot.objects.filter(corpus=corpus, provision_count__gt=0)
        .values("source_key").annotate(last=Max("id")).values_list("last", flat=True)
    )
    # Without ``raw`` (the source file, megabytes): no page shows it, and loading it made every corpus read slow.
    return list(SourceSnapshot.objects.filter(id__in=list(latest)).defer("raw").order_by("source_key", "id"))


def snapshots_with_previous(*, snapshots: list[SourceSnapshot]) -> set[int]:
    """The ids of those snapshots an earlier snapshot of the same source precedes (so have changes to show)."""
    earlier = SourceSnapshot.objects.filter(provision_count__gt=0)
    return {s.pk for s in snapshots
            if earlier.filter(corpus=s.corpus, source_key=s.source_key, id__lt=s.pk).exists()}


@dataclass
class CorpusSummary:
    corpus: str
    label: str
    snapshots: list[SourceSnapshot]
    provisions: int
    repealed: int


def corpus_list() -> list[CorpusSummary]:
    out = []
    for value, label in corpus_codes():
        snapshots = corpus_current_snapshots(corpus=value)
        counts = Provision.objects.filter(snapshot__in=snapshots).aggregate(
            n=Count("id"), repealed=Count("id", filter=Q(repealed=True)))
        out.append(CorpusSummary(value, label, snapshots, counts["n"] or 0, counts["repealed"] or 0))
    return out


def corpus_chapters(*, corpus: str) -> list[Mapping[str, Any]]:
    snapshots = corpus_current_snapshots(corpus=corpus)
    return list(
        Provision.objects.filter(snapshot__in=snapshots)
        .values("chapter", "chapter_title", "snapshot_id")
        .annotate(sections=Count("id"), repealed=Count("id", filter=Q(repealed=True)), first=Max("position"))
        .order_by("snapshot_id", "first")
    )


# What a chapter page lists of each section. Joining the snapshot (its raw file, megabytes, on every row) made a
# chapter page take seconds; the texts are shown on the section's own page.
CHAPTER_ROW_FIELDS = ("id", "snapshot_id", "position", "citation", "variant", "chapter_title", "heading", "repealed",
                      "content_sha256", "official_url")


def chapter_provisions(*, corpus: str, chapter: str) -> QuerySet[Provision]:
    snapshots = corpus_current_snapshots(corpus=corpus)
    return Provision.objects.filter(snapshot__in=snapshots, chapter=chapter).only(*CHAPTER_ROW_FIELDS).order_by(
        "snapshot_id", "position")


def provision_citations(*, pks: list[int]) -> dict[int, str]:
    """``{provision pk: its citation as a lawyer writes it}`` ("NRS 1.010", with "(version 2)" for a variant)."""
    return {p.pk: str(p) for p in Provision.objects.filter(pk__in=pks).only("pk", "citation", "variant")}


def provision_get(*, pk: int) -> Provision:
    return Provision.objects.select_related("snapshot").defer("snapshot__raw").prefetch_related("passages").get(pk=pk)
