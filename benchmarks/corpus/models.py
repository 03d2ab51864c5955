"""Statute corpora: official source snapshots, provisions and passages, append-only.

A changed source makes a new snapshot; nothing here is edited in place (``AppendOnly``).
"""

from __future__ import annotations

from django.db import models


class Corpus(models.TextChoices):
    NRS = "nrs", "Nevada Revised Statutes"
    HRS = "hrs", "Hawaii Revised Statutes"
    USC = "usc", "United States Code"


class ImmutableRowError(RuntimeError):
    pass


class AppendOnly(models.Model):
    """Rows are inserted once and never updated."""

    class Meta:
        abstract = True

    def save(self, *args, **kwargs):
        if not self._state.adding:
            raise ImmutableRowError(f"{type(self).__name__} rows are append-only; make a new one instead")
        return super().save(*args, **kwargs)


class SourceSnapshot(AppendOnly):
    """The exact bytes of one official source file, as read or fetched at one time."""

    corpus = models.CharField(max_length=8, choices=Corpus.choices)
    # Stable name of the source across versions: "NRS-432B.html", "Vol12_Ch0501-0588.json", "usc09.xml".
    source_key = models.CharField(max_length=200)
    title = models.CharField(max_length=300, blank=True)
    official_url = models.URLField(max_length=500)
    retrieved_from = models.CharField(max_length=1000, help_text="local path or URL the bytes were read from")
    retrieved_at = models.DateTimeField()
    raw = models.BinaryField()
    byte_size = models.PositiveIntegerField()
    sha256 = models.CharField(max_length=64, db_index=True)
    parser_name = models.CharField(max_length=40)
    parser_version = models.CharField(max_length=20)
    # HRS volumes take section numbers and headings from index-meta.json: that
    # file is its own snapshot, and the volume's parse depends on it.
    companion = models.ForeignKey("self", null=True, blank=True, on_delete=models.PROTECT, related_name="+")
    provision_count = models.PositiveIntegerField(default=0)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["corpus", "source_key", "id"]
        indexes = [models.Index(fields=["corpus", "source_key"])]

    def __str__(self) -> str:
        return f"{self.corpus}:{self.source_key}@{self.sha256[:12]}"


class Provision(AppendOnly):
    """One section of a statute as printed in one snapshot."""

    snapshot = models.ForeignKey(SourceSnapshot, on_delete=models.PROTECT, related_name="provisions")
    corpus = models.CharField(max_length=8, choices=Corpus.choices)
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
