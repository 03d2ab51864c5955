"""Statute corpora: official source snapshots, provisions and passages, append-only.

A changed source makes a new snapshot; nothing here is edited in place (``AppendOnly``).
"""

from __future__ import annotations

from django.db import models

from reviewapp.core.models import AppendOnlyError


class Corpus(models.TextChoices):
    NRS = "nrs", "Nevada Revised Statutes"
    HRS = "hrs", "Hawaii Revised Statutes"
    USC = "usc", "United States Code"


# A code imported from a corpus file (docs/corpus-format.md) is named by a short id of its own.
CODE_MAX_LENGTH = 16


def corpus_label(code: str) -> str:
    """The name of a code: a built-in one's, or the name its corpus file gave it; the id if neither."""
    if code in Corpus.values:
        return str(Corpus(code).label)
    found = CorpusCode.objects.filter(code=code).values_list("name", flat=True).first()
    return found or code


class ImmutableRowError(AppendOnlyError):
    """A stored corpus or suite row saved again (these may be deleted with what owns them, never edited)."""


class AppendOnly(models.Model):
    """Rows are inserted once and never updated."""

    class Meta:
        abstract = True

    def save(self, *args, **kwargs):
        if not self._state.adding:
            raise ImmutableRowError(f"{type(self).__name__} rows are append-only; make a new one instead")
        return super().save(*args, **kwargs)


class CorpusCode(models.Model):
    """A code first imported from a corpus file: its name, jurisdiction and how its citations are written.

    Created by the first import of the code and never changed by a later one (a file that disagrees is refused):
    suites frozen on the code read their citations through this pattern."""

    code = models.CharField(max_length=CODE_MAX_LENGTH, unique=True)
    name = models.CharField(max_length=300)
    jurisdiction = models.CharField(max_length=200)
    # A regular expression with a named group ``number`` that finds a citation of the code in a text, and the
    # form (``{number}`` filled in) the code's own citations are stored in. Blank: citations are read as stored.
    citation_pattern = models.CharField(max_length=500, blank=True)
    citation_form = models.CharField(max_length=200, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["code"]

    def __str__(self) -> str:
        return f"{self.code}: {self.name}"


class SourceSnapshot(AppendOnly):
    """The exact bytes of one official source file, as read or fetched at one time."""

    corpus = models.CharField(max_length=CODE_MAX_LENGTH)
    # Stable name of the source across versions: "NRS-432B.html", "Vol12_Ch0501-0588.json", "usc09.xml".
    source_key = models.CharField(max_length=200)
    title = models.CharField(max_length=300, blank=True)
    official_url = models.URLField(max_length=500)
    retrieved_from = models.CharField(max_length=1000, help_text="local path or URL the bytes were read from")
    retrieved_at = models.DateTimeField()
    byte_size = models.PositiveIntegerField()
    sha256 = models.CharField(max_length=64, db_index=True)
    parser_name = models.CharField(max_length=40)
    parser_version = models.CharField(max_length=20)
    # HRS volumes take section numbers and headings from index-meta.json: that
    # file is its own snapshot, and the volume's parse depends on it.
    companion = models.ForeignKey("self", null=True, blank=True, on_delete=models.PROTECT, related_name="+")
    provision_count = models.PositiveIntegerField(default=0)
    created_at = models.DateTimeField(auto_now_add=True)
    # Last of the columns: SQLite writes a zeroblob without holding it only at the end of a row, and the bytes
    # are then streamed into it (benchmarks.corpus.bulk).
    raw = models.BinaryField()

    class Meta:
        ordering = ["corpus", "source_key", "id"]
        indexes = [models.Index(fields=["corpus", "source_key"])]

    def __str__(self) -> str:
        return f"{self.corpus}:{self.source_key}@{self.sha256[:12]}"

    @property
    def corpus_label(self) -> str:
        return corpus_label(self.corpus)


class Provision(AppendOnly):
    """One section of a statute as printed in one snapshot."""

    snapshot = models.ForeignKey(SourceSnapshot, on_delete=models.PROTECT, related_name="provisions")
    corpus = models.CharField(max_length=CODE_MAX_LENGTH)
    citation = models.CharField(max_length=120, db_index=True)
    number = models.CharField(max_length=80)
    variant = models.PositiveSmallIntegerField(default=1)
    chapter = models.CharField(max_length=40, db_index=True)
    chapter_title = models.CharField(max_length=400, blank=True)
    heading = models.TextField()
    body = models.TextField()
    history = models.TextField(blank=True)
    notes = models.TextField(blank=True)
    repealed = models.BooleanField(default=False)
    official_url = models.URLField(max_length=500, blank=True)
    # Given by corpus files only (docs/corpus-format.md); the official parsers leave them empty.
    as_of = models.DateField(null=True, blank=True, help_text="the date the text is the law as of")
    version_label = models.CharField(max_length=100, blank=True)
    hierarchy = models.JSONField(default=dict, blank=True, help_text='{"title": ..., "chapter": ..., "part": ...}')
    position = models.PositiveIntegerField(help_text="order within the snapshot")
    content_sha256 = models.CharField(max_length=64)

    class Meta:
        ordering = ["snapshot_id", "position"]
        constraints = [
            models.UniqueConstraint(fields=["snapshot", "citation", "variant"], name="provision_unique_in_snapshot"),
        ]

    def __str__(self) -> str:
        return self.citation if self.variant == 1 else f"{self.citation} (version {self.variant})"

    @property
    def corpus_label(self) -> str:
        return corpus_label(self.corpus)

    @property
    def docid(self) -> str:
        """A whitespace-free id for TREC files: citation with spaces replaced, plus the variant if not 1."""
        base = self.citation.replace(" ", "_")
        return base if self.variant == 1 else f"{base}~v{self.variant}"


class Passage(AppendOnly):
    """What a model (and a reviewer) sees of a provision: caption/heading plus passage text."""

    provision = models.ForeignKey(Provision, on_delete=models.PROTECT, related_name="passages")
    rule = models.CharField(max_length=40, help_text="versioned passage-extraction rule")
    caption = models.TextField(help_text="citation and heading shown above the text")
    text = models.TextField()
    word_count = models.PositiveIntegerField()
    truncated = models.BooleanField(default=False)
    sha256 = models.CharField(max_length=64, db_index=True)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["provision", "rule"], name="passage_unique_per_rule")]

    def __str__(self) -> str:
        return f"{self.provision} [{self.rule}]"
