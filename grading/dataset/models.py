"""CUAD as loaded (dataset, categories, contracts, spans) and seeded contract samples.
"""

from __future__ import annotations

from typing import Any

from django.db import models


class CuadDataset(models.Model):
    """One loaded CUAD-format file, identified by the sha256 of its JSON bytes (the same whether read from the zip
    or not): CUAD's own public release, or a firm's frozen gold set exported in CUAD's layout.

    Only CUAD's own is ever a default (``dataset_current``); a gold set is graded against when it is chosen: by a
    run made on it, or ``?dataset=`` / ``--dataset``.
    """

    class Origin(models.TextChoices):
        CUAD = "cuad", "CUAD public dataset"
        GOLD = "gold", "firm gold set"

    sha256 = models.CharField(max_length=64, unique=True)
    source_name = models.CharField(max_length=255)
    version = models.CharField(max_length=64, blank=True)
    n_contracts = models.PositiveIntegerField()
    n_spans = models.PositiveIntegerField()
    categories: models.ManyToManyField[Category, Any] = models.ManyToManyField("Category", related_name="datasets")
    loaded_at = models.DateTimeField(auto_now_add=True)
    origin = models.CharField(max_length=8, choices=Origin.choices, default=Origin.CUAD)
    # What a reader calls it ("Acme gold set v3"); empty for CUAD's own.
    label = models.CharField(max_length=200, blank=True)
    # The firm's contract set and frozen gold-set version it was exported from (ids of the labelling side, kept as
    # plain numbers: a loaded dataset is self-contained and outlives what it was frozen from).
    contract_set_id = models.PositiveIntegerField(null=True, blank=True)
    gold_set_version = models.PositiveIntegerField(null=True, blank=True)

    class Meta:
        ordering = ["-loaded_at", "-id"]
        constraints = [
            models.CheckConstraint(condition=models.Q(origin="gold") | models.Q(contract_set_id__isnull=True,
                                                                                gold_set_version__isnull=True),
                                   name="grading_dataset_gold_fields_gold_only"),
        ]

    def __str__(self) -> str:
        return self.name

    @property
    def is_gold(self) -> bool:
        return self.origin == self.Origin.GOLD

    @property
    def name(self) -> str:
        """How pages name the population: CUAD's version, or the gold set's label."""
        if self.is_gold:
            return f"{self.label or self.source_name} (firm gold set)"
        return f"CUAD {self.version} ({self.sha256[:12]})"


class Category(models.Model):
    """A CUAD clause type (41 of them), in the dataset's question order."""

    name = models.CharField(max_length=100, unique=True)
    position = models.PositiveSmallIntegerField()
    description = models.TextField(blank=True)
    answer_format = models.TextField(blank=True)
    group = models.CharField(max_length=16, blank=True)

    class Meta:
        ordering = ["position", "name"]
        verbose_name_plural = "categories"

    def __str__(self) -> str:
        return self.name


class Contract(models.Model):
    dataset = models.ForeignKey(CuadDataset, on_delete=models.CASCADE, related_name="contracts")
    title = models.CharField(max_length=255)
    position = models.PositiveIntegerField()
    text = models.TextField()
    length = models.PositiveIntegerField()

    class Meta:
        ordering = ["position"]
        constraints = [models.UniqueConstraint(fields=["dataset", "title"], name="grading_contract_unique_title")]

    def __str__(self) -> str:
        return self.title


class Span(models.Model):
    """A CUAD answer span: ``contract.text[start:end] == text`` (checked at load)."""

    # Both written only by the load, from the contract rows it has just inserted and the categories it has just
    # read, in the same transaction; spans are never edited, and deletes go through Django's collector (CASCADE /
    # PROTECT hold). So the database does not check them: PostgreSQL ran two deferred foreign-key triggers a span
    # at commit (27,646 lookups for CUAD). The unique (contract, category, answer_index) serves as the index on
    # ``contract``.
    contract = models.ForeignKey(Contract, on_delete=models.CASCADE, related_name="spans", db_constraint=False,
                                 db_index=False)
    category = models.ForeignKey(Category, on_delete=models.PROTECT, related_name="spans", db_constraint=False)
    qa_id = models.CharField(max_length=400)
    answer_index = models.PositiveSmallIntegerField()
    start = models.PositiveIntegerField()
    end = models.PositiveIntegerField()
    text = models.TextField()

    class Meta:
        ordering = ["contract_id", "category_id", "answer_index"]
        constraints = [
            models.UniqueConstraint(fields=["contract", "category", "answer_index"], name="grading_span_unique_answer")
        ]

    def __str__(self) -> str:
        return f"{self.qa_id}#{self.answer_index}"


class Sample(models.Model):
    """A seeded contract sample; ``manifest`` holds the exact manifest bytes (UTF-8) written by sample_cuad."""

    dataset = models.ForeignKey(CuadDataset, on_delete=models.CASCADE, related_name="samples")
    n = models.PositiveIntegerField()
    min_per_type = models.PositiveIntegerField()
    seed = models.BigIntegerField()
    manifest = models.TextField()
    manifest_sha256 = models.CharField(max_length=64)
    contracts = models.ManyToManyField(Contract, through="SampleContract", related_name="samples")
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["-created_at", "-id"]
        constraints = [
            models.UniqueConstraint(fields=["dataset", "manifest_sha256"], name="grading_sample_unique_manifest")
        ]

    def __str__(self) -> str:
        return f"sample n={self.n} seed={self.seed}"


class SampleContract(models.Model):
    sample = models.ForeignKey(Sample, on_delete=models.CASCADE, related_name="members")
    contract = models.ForeignKey(Contract, on_delete=models.CASCADE, related_name="+")
    position = models.PositiveIntegerField()
    phase = models.CharField(max_length=16)  # "coverage" or "length"

    class Meta:
        ordering = ["sample_id", "position"]
        constraints = [
            models.UniqueConstraint(fields=["sample", "contract"], name="grading_samplecontract_unique"),
        ]

    def __str__(self) -> str:
        return f"{self.sample_id}:{self.position}"
