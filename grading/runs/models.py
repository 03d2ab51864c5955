"""Extraction runs and their stored pair scores; launched extraction and grading jobs.

Outcomes (Correct / Partial / Incorrect / Hallucinated / Missed) are not
stored: they depend on thresholds a person moves. What is stored is what they
are computed from, once per run: each extraction's grounding and, for each
matcher, the span it was assigned to and that pair's token F1.
"""

from __future__ import annotations

from functools import cached_property

from django.db import models

from grading.dataset.models import Category, Contract, CuadDataset, Span
from reviewapp.core.jobs import TrackedJob
from reviewapp.providers.selectors import ledger_setup


class ExtractionRun(models.Model):
    """A model's extractions, imported once; ``content_sha256`` is over the canonical JSON of model + extractions."""

    dataset = models.ForeignKey(CuadDataset, on_delete=models.CASCADE, related_name="runs")
    model = models.CharField(max_length=200)
    content_sha256 = models.CharField(max_length=64)
    source_name = models.CharField(max_length=255, blank=True)
    source_format = models.CharField(max_length=8)  # "json", "jsonl" or "csv"
    n_extractions = models.PositiveIntegerField()
    # Made by the demo from CUAD's own gold with injected errors, not by a model: shown when asked for, never in a
    # leaderboard's default selection (its verdict would name it best).
    synthetic = models.BooleanField(default=False)
    created_at = models.DateTimeField(auto_now_add=True)
    # The contracts the run attempted (a launched job's contracts, or the run file's "contracts"); empty = the
    # run declared none and is scoped to the whole sample it is graded on. Written with the run, never after.
    scope = models.ManyToManyField(Contract, blank=True, related_name="+")

    class Meta:
        ordering = ["-created_at", "-id"]
        constraints = [
            models.UniqueConstraint(fields=["dataset", "content_sha256"], name="grading_run_unique_content"),
        ]

    def __str__(self) -> str:
        return f"{self.model} ({self.n_extractions} extractions)"


class Extraction(models.Model):
    """One extracted clause with its stored pair scores (computed at import, never recomputed)."""

    # The run's own foreign keys are checked by the database; the single-column index on ``run`` is left out, as
    # the unique (run, position) and the (run, contract, category) index both lead with it.
    run = models.ForeignKey(ExtractionRun, on_delete=models.CASCADE, related_name="extractions", db_index=False)
    position = models.PositiveIntegerField()  # index in the run as submitted
    # Contract, category and the assigned gold spans are derived, not entered: the import maps the run's titles and
    # category names to the rows of the run's own dataset it has just read, and computes the spans from that
    # dataset's spans; a dataset's contracts, spans and categories are never edited, and deleting them goes through
    # Django's collector (CASCADE / PROTECT below still hold). So the database checks none of them: PostgreSQL ran
    # five deferred foreign-key triggers a row at commit, ~50,000 lookups for a 10,000-extraction run. Nothing
    # looks extractions up by span, so those have no index either.
    contract = models.ForeignKey(Contract, on_delete=models.CASCADE, related_name="+", db_constraint=False)
    category = models.ForeignKey(Category, on_delete=models.PROTECT, related_name="+", db_constraint=False)
    text = models.TextField()
    grounding = models.FloatField()
    best_f1 = models.FloatField()
    best_span = models.ForeignKey(Span, null=True, on_delete=models.DO_NOTHING, related_name="+",
                                  db_constraint=False, db_index=False)
    hungarian_span = models.ForeignKey(Span, null=True, on_delete=models.DO_NOTHING, related_name="+",
                                       db_constraint=False, db_index=False)
    hungarian_f1 = models.FloatField()
    greedy_span = models.ForeignKey(Span, null=True, on_delete=models.DO_NOTHING, related_name="+",
                                    db_constraint=False, db_index=False)
    greedy_f1 = models.FloatField()
    # The model's probability that the extraction is right, as the run gave it (all of a run's, or none):
    # what CUAD's own AUPR sweeps a threshold over.
    confidence = models.FloatField(null=True, blank=True)

    class Meta:
        ordering = ["run_id", "position"]
        constraints = [models.UniqueConstraint(fields=["run", "position"], name="grading_extraction_unique_position")]
        indexes = [models.Index(fields=["run", "contract", "category"], name="grading_ext_run_cell")]

    def __str__(self) -> str:
        return f"{self.run_id}:{self.position}"


# A job is claimed by a conditional UPDATE on ``status`` (queued -> running), so two workers never run it
# together; a job stopped half-way is resumed by queueing it again: contracts already extracted
# (``JobContract.done``) are skipped.
class ConsoleJob(TrackedJob):
    class Kind(models.TextChoices):
        EXTRACT = "extract", "extraction run"
        GRADE = "grade", "grade a pasted run"

    class Status(models.TextChoices):
        QUEUED = "queued", "queued"
        RUNNING = "running", "running"
        DONE = "done", "done"
        FAILED = "failed", "failed"

    kind = models.CharField(max_length=16, choices=Kind.choices)
    status = models.CharField(max_length=16, choices=Status.choices, default=Status.QUEUED, db_index=True)
    dataset = models.ForeignKey("grading.CuadDataset", on_delete=models.CASCADE, related_name="+")
    sample = models.ForeignKey("grading.Sample", null=True, blank=True, on_delete=models.SET_NULL, related_name="+")
    provider = models.CharField(max_length=32, blank=True, help_text="local / openai_compatible / anthropic")
    model_id = models.CharField(max_length=200, blank=True)
    params = models.JSONField(default=dict, blank=True, help_text="extractor parameters, as used")
    raw_run = models.TextField(blank=True, help_text="the pasted run, kept until it is graded")
    source_name = models.CharField(max_length=255, blank=True)
    ledger_id = models.PositiveIntegerField(null=True, blank=True, help_text="providers.Ledger of the requests")
    total = models.PositiveIntegerField(default=0)
    done = models.PositiveIntegerField(default=0)
    run = models.ForeignKey("grading.ExtractionRun", null=True, blank=True, on_delete=models.SET_NULL, related_name="+")

    class Meta:
        app_label = "grading"
        ordering = ["-created_at", "-id"]

    def __str__(self) -> str:
        return f"job {self.pk} {self.kind} {self.status}"

    def providers_used(self) -> list[str]:
        return [self.provider] if self.kind == self.Kind.EXTRACT else []

    @property
    def percent(self) -> int:
        return int(100 * self.done / self.total) if self.total else 0

    @cached_property
    def provider_setup(self) -> dict:
        """The model server the job's ledger pinned (base URL, no credentials) and whether it was simulated."""
        return ledger_setup(ledger_id=self.ledger_id)

    @property
    def simulated(self) -> bool:
        """Answered by a simulated provider (the loopback test server): labelled so on its pages and exports."""
        return bool(self.provider_setup.get("simulated"))


class JobContract(models.Model):
    """One contract of an extraction job: its extractions once done (verbatim quotes with offsets)."""

    job = models.ForeignKey(ConsoleJob, on_delete=models.CASCADE, related_name="contracts")
    contract = models.ForeignKey("grading.Contract", on_delete=models.CASCADE, related_name="+")
    position = models.PositiveIntegerField()
    done = models.BooleanField(default=False)
    extractions = models.JSONField(default=list, blank=True)  # [{"category", "text", "start", "end", "score"}]
    passages = models.PositiveIntegerField(default=0)
    embedded = models.PositiveIntegerField(default=0)
    seconds = models.FloatField(default=0.0)
    error = models.TextField(blank=True)

    class Meta:
        app_label = "grading"
        ordering = ["job_id", "position"]
        constraints = [models.UniqueConstraint(fields=["job", "contract"], name="grading_jobcontract_unique")]

    def __str__(self) -> str:
        return f"{self.job_id}:{self.position}"
