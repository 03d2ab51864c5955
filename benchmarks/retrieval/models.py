"""Keyword retrieval runs: k candidates per query, in keyword order, with the outcome of each search.
"""

from __future__ import annotations

from django.conf import settings
from django.db import models

from benchmarks.corpus.models import AppendOnly, Passage, Provision
from benchmarks.suites.models import Suite, SuiteQuery


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
