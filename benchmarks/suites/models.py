"""Frozen suites: queries, topic families with their split, nominated targets. A changed suite is a new version.

Drafts (``SuiteDraft``) are suites still being written in the browser; freezing one makes a ``Suite``.
"""

from __future__ import annotations

from django.conf import settings
from django.db import models

from benchmarks.corpus.models import CODE_MAX_LENGTH, AppendOnly, Provision, SourceSnapshot, corpus_label


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
    corpus = models.CharField(max_length=CODE_MAX_LENGTH)
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

    @property
    def corpus_label(self) -> str:
        return corpus_label(self.corpus)


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
    # {"lawyers": n, "agreement": "unanimous" | "adjudicated"} once lawyers confirmed it blind; null while not.
    confirmed_by = models.JSONField(null=True, blank=True)
    # The same shape, as the imported file claimed it: never counted as confirmed (no lawyer confirmed it here).
    claimed_confirmed_by = models.JSONField(null=True, blank=True)

    class Meta:
        ordering = ["query_id", "id"]
        constraints = [models.UniqueConstraint(fields=["query", "citation"], name="target_unique_per_query")]

    def __str__(self) -> str:
        return f"{self.query.qid} -> {self.citation}"


class SuiteDraft(models.Model):
    """A suite being written in the browser: the suite file as a JSON document, editable until frozen.

    Freezing goes through the same service as ``import_suite``, so the frozen suite is exactly what importing
    the document as a file gives; from then on the draft is read-only and points at that suite.
    """

    document = models.JSONField(default=dict, help_text="the suite file being written (schema: README.md)")
    owner = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="suite_drafts")
    based_on = models.ForeignKey(Suite, null=True, blank=True, on_delete=models.PROTECT, related_name="next_drafts",
                                 help_text="the frozen suite this draft is a new version of")
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)
    frozen_suite = models.ForeignKey(Suite, null=True, blank=True, on_delete=models.PROTECT,
                                     related_name="drafts", help_text="set once, when the draft is frozen")
    frozen_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-updated_at", "-id"]

    def __str__(self) -> str:
        name = self.document.get("name") if isinstance(self.document, dict) else ""
        return f"draft #{self.pk} {name or '(unnamed)'}"

    @property
    def is_frozen(self) -> bool:
        return self.frozen_suite_id is not None


class TargetProposal(AppendOnly):
    """A target a lawyer proposed while confirming a query's targets: it enters the same confirmation as an item
    for other lawyers (never the proposer), and only their agreement adds it to a confirmed version."""

    suite = models.ForeignKey(Suite, on_delete=models.PROTECT, related_name="target_proposals")
    query = models.ForeignKey(SuiteQuery, on_delete=models.PROTECT, related_name="target_proposals")
    citation = models.CharField(max_length=120)
    provision = models.ForeignKey(Provision, on_delete=models.PROTECT, related_name="+")
    proposed_by = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="+")
    # The public id of the confirmation item the lawyer was grading when proposing (where it came from).
    while_grading = models.CharField(max_length=32)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["suite_id", "id"]
        constraints = [models.UniqueConstraint(fields=["query", "citation"], name="proposal_unique_per_query")]

    def __str__(self) -> str:
        return f"proposal {self.query.qid} -> {self.citation}"


class TargetProposalSupport(AppendOnly):
    """Each lawyer who proposed a target, the first one included: a second lawyer suggesting the same citation
    gets the same proposal back (learning nothing of the first), yet must not confirm it either."""

    proposal = models.ForeignKey(TargetProposal, on_delete=models.PROTECT, related_name="supporters")
    lawyer = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="+")
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["proposal_id", "id"]
        constraints = [models.UniqueConstraint(fields=["proposal", "lawyer"], name="proposal_support_once")]

    def __str__(self) -> str:
        return f"{self.proposal} supported by {self.lawyer_id}"
