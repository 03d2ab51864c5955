"""Statute corpora, frozen suites and keyword retrieval runs.

Everything here is append-only: a snapshot, a provision, a passage, a frozen
suite and a finished retrieval run are never edited in place. A changed source
makes a new snapshot; a changed suite is a new version; a new retrieval is a
new run. ``AppendOnly.save`` refuses an UPDATE of an existing row so a slip in
later code fails loudly instead of silently rewriting evidence.
"""

from __future__ import annotations

from django.conf import settings
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


class Split(models.TextChoices):
    DEV = "dev", "development"
    HELDOUT = "heldout", "held-out"


class QueryKind(models.TextChoices):
    RANKING = "ranking", "ranking"
    OUTSIDE_CORPUS = "outside_corpus", "outside-corpus control"
    EXACT_CITATION = "exact_citation", "exact-citation control"


class Suite(AppendOnly):
    """A frozen benchmark suite. Never edited: a change is a new version."""

    name = models.CharField(max_length=100)
    version = models.PositiveIntegerField()
    corpus = models.CharField(max_length=8, choices=Corpus.choices)
    description = models.TextField(blank=True)
    definition = models.TextField(help_text="canonical JSON of the suite file as frozen")
    sha256 = models.CharField(max_length=64, help_text="sha256 of the canonical definition")
    # The corpus snapshots the targets were checked against, pinned at freeze time.
    snapshots = models.ManyToManyField(SourceSnapshot, related_name="suites")
    sources_sha256 = models.CharField(max_length=64, help_text="sha256 of the sorted pinned snapshot hashes")
    source_filename = models.CharField(max_length=300, blank=True)
    frozen_at = models.DateTimeField()
    frozen_by = models.CharField(max_length=150, blank=True)

    class Meta:
        ordering = ["name", "-version"]
        constraints = [models.UniqueConstraint(fields=["name", "version"], name="suite_unique_version")]

    def __str__(self) -> str:
        return f"{self.name} v{self.version}"


class QueryFamily(AppendOnly):
    suite = models.ForeignKey(Suite, on_delete=models.PROTECT, related_name="families")
    name = models.CharField(max_length=100)
    split = models.CharField(max_length=10, choices=Split.choices, blank=True)
    description = models.TextField(blank=True)

    class Meta:
        ordering = ["suite_id", "split", "name"]
        constraints = [models.UniqueConstraint(fields=["suite", "name"], name="family_unique_in_suite")]

    def __str__(self) -> str:
        return self.name


class SuiteQuery(AppendOnly):
    suite = models.ForeignKey(Suite, on_delete=models.PROTECT, related_name="queries")
    qid = models.CharField(max_length=60)
    text = models.TextField()
    kind = models.CharField(max_length=20, choices=QueryKind.choices)
    split = models.CharField(max_length=10, choices=Split.choices, blank=True, help_text="blank for controls")
    family = models.ForeignKey(QueryFamily, null=True, blank=True, on_delete=models.PROTECT, related_name="queries")
    expected_citation = models.CharField(max_length=120, blank=True)
    expected_provision = models.ForeignKey(
        Provision, null=True, blank=True, on_delete=models.PROTECT, related_name="+"
    )
    position = models.PositiveIntegerField()
    text_sha256 = models.CharField(max_length=64, help_text="sha256 of canonical {id, text}")

    class Meta:
        ordering = ["suite_id", "position"]
        constraints = [models.UniqueConstraint(fields=["suite", "qid"], name="query_unique_in_suite")]

    def __str__(self) -> str:
        return self.qid


class NominatedTarget(AppendOnly):
    """A provision nominated as a known relevant target: provisional, incomplete, with its nominator."""

    query = models.ForeignKey(SuiteQuery, on_delete=models.PROTECT, related_name="targets")
    citation = models.CharField(max_length=120)
    provision = models.ForeignKey(Provision, on_delete=models.PROTECT, related_name="+")
    provisional = models.BooleanField(default=True)
    nominated_by = models.CharField(max_length=150)
    note = models.TextField(blank=True)

    class Meta:
        ordering = ["query_id", "id"]
        constraints = [models.UniqueConstraint(fields=["query", "citation"], name="target_unique_per_query")]

    def __str__(self) -> str:
        return f"{self.query.qid} -> {self.citation}"


class RunStatus(models.TextChoices):
    RUNNING = "running", "running"
    DONE = "done", "done"
    FAILED = "failed", "failed"


class RetrievalRun(models.Model):
    """Keyword candidates for every query of one suite, by one engine and one configuration.

    Status moves running -> done/failed once; the candidates and results are
    written in the same transaction as the final status.
    """

    suite = models.ForeignKey(Suite, on_delete=models.PROTECT, related_name="retrieval_runs")
    engine = models.CharField(max_length=30, help_text="sqlite-fts5 or postgresql-fts")
    configuration = models.CharField(max_length=40)
    configuration_detail = models.JSONField(default=dict, help_text="the rules of the configuration, as run")
    k = models.PositiveSmallIntegerField(default=30)
    passage_rule = models.CharField(max_length=40)
    index_documents = models.PositiveIntegerField(
        default=0, help_text="provisions in the search index at run time (bm25 statistics depend on it)"
    )
    status = models.CharField(max_length=10, choices=RunStatus.choices, default=RunStatus.RUNNING)
    error = models.TextField(blank=True)
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    started_at = models.DateTimeField()
    finished_at = models.DateTimeField(null=True, blank=True)
    candidates_sha256 = models.CharField(max_length=64, blank=True, help_text="hash of every query's ranked list")

    class Meta:
        ordering = ["-id"]

    def __str__(self) -> str:
        return f"retrieval #{self.pk} {self.suite} {self.engine}/{self.configuration}"


class ResultStatus(models.TextChoices):
    OK = "ok", "ok"
    FALLBACK = "fallback", "filled by fallback"
    SHORT = "short", "fewer than k candidates"
    FAILED = "failed", "failed"
    RESOLVED = "resolved", "citation resolved"
    UNRESOLVED = "unresolved", "citation not resolved"


class RetrievalResult(AppendOnly):
    """One query's outcome in a run: what was searched, what fell back or failed, and coverage."""

    run = models.ForeignKey(RetrievalRun, on_delete=models.PROTECT, related_name="results")
    query = models.ForeignKey(SuiteQuery, on_delete=models.PROTECT, related_name="retrieval_results")
    method = models.CharField(max_length=20, help_text="keyword or citation-parser")
    status = models.CharField(max_length=12, choices=ResultStatus.choices)
    primary_expression = models.TextField(blank=True)
    primary_count = models.PositiveIntegerField(default=0)
    fallback_used = models.BooleanField(default=False)
    fallback_expression = models.TextField(blank=True)
    fallback_count = models.PositiveIntegerField(default=0)
    error = models.TextField(blank=True)
    parsed_citation = models.CharField(max_length=120, blank=True)
    targets_total = models.PositiveIntegerField(default=0)
    targets_found = models.JSONField(default=list, help_text="nominated target citations among the candidates")
    coverage = models.FloatField(null=True, blank=True, help_text="share of nominated targets among the candidates")
    elapsed_ms = models.FloatField(default=0)

    class Meta:
        ordering = ["run_id", "query__position"]
        constraints = [models.UniqueConstraint(fields=["run", "query"], name="result_unique_per_query")]

    def __str__(self) -> str:
        return f"{self.run_id}/{self.query.qid}: {self.status}"


class RetrievalCandidate(AppendOnly):
    result = models.ForeignKey(RetrievalResult, on_delete=models.PROTECT, related_name="candidates")
    rank = models.PositiveSmallIntegerField(help_text="1-based keyword order")
    provision = models.ForeignKey(Provision, on_delete=models.PROTECT, related_name="+")
    passage = models.ForeignKey(Passage, on_delete=models.PROTECT, related_name="+")
    score = models.FloatField(help_text="engine score, higher is better (bm25 negated on SQLite)")
    via_fallback = models.BooleanField(default=False)

    class Meta:
        ordering = ["result_id", "rank"]
        constraints = [
            models.UniqueConstraint(fields=["result", "rank"], name="candidate_unique_rank"),
            models.UniqueConstraint(fields=["result", "provision"], name="candidate_unique_provision"),
        ]

    def __str__(self) -> str:
        return f"{self.result_id}#{self.rank} {self.provision_id}"


# ---------------------------------------------------------------------------
# Rerank runs (issue 4, owned by the provider-layer work): the models live in
# benchmarks/models_rerank.py; imported here so Django registers them.
# ---------------------------------------------------------------------------
from benchmarks.models_rerank import RerankGrade, RerankRun, RerankStatus  # noqa: E402, F401
