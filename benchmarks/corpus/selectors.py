"""Reads of the statute corpora: current snapshots, chapters, provisions."""

from __future__ import annotations

from dataclasses import dataclass

from django.db.models import Count, Max, Q, QuerySet

from benchmarks.corpus.models import Corpus, Provision, SourceSnapshot


def corpus_current_snapshots(*, corpus: str) -> list[SourceSnapshot]:
    """The latest snapshot of every source of a corpus that carries sections."""
    latest = (
        SourceSnapshot.objects.filter(corpus=corpus, provision_count__gt=0)
        .values("source_key").annotate(last=Max("id")).values_list("last", flat=True)
    )
    # Without ``raw`` (the source file, megabytes): no page shows it, and loading it made every corpus read slow.
    return list(SourceSnapshot.objects.filter(id__in=list(latest)).defer("raw").order_by("source_key", "id"))


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


# What a chapter page lists of each section. Joining the snapshot (its raw file, megabytes, on every row) made a
# chapter page take seconds; the texts are shown on the section's own page.
CHAPTER_ROW_FIELDS = ("id", "snapshot_id", "position", "citation", "variant", "chapter_title", "heading", "repealed",
                      "content_sha256", "official_url")


def chapter_provisions(*, corpus: str, chapter: str) -> QuerySet[Provision]:
    snapshots = corpus_current_snapshots(corpus=corpus)
    return Provision.objects.filter(snapshot__in=snapshots, chapter=chapter).only(*CHAPTER_ROW_FIELDS).order_by(
        "snapshot_id", "position")


def provision_get(*, pk: int) -> Provision:
    return Provision.objects.select_related("snapshot").defer("snapshot__raw").prefetch_related("passages").get(pk=pk)
