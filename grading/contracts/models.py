"""A firm's own contracts: sets of them, each text stored once by its hash, and the clause taxonomy of a set.

A text is stored once in the whole install (``ContractText``, unique by the sha256 of its UTF-8 bytes); a set
holds it under a title (``SetContract``). Texts and taxonomy versions are append-only in the database (triggers,
``reviewapp.core.records.append_only``): gold labels will be bound to a text's hash, and a text that could change under
them would make every label a claim about something else.
"""

from __future__ import annotations

from django.conf import settings
from django.db import models

from reviewapp.core.models import AppendOnlyModel


class ContractSet(models.Model):
    """A named collection of the firm's contracts (e.g. "Supplier agreements 2026")."""

    name = models.CharField(max_length=100, unique=True)
    description = models.TextField(blank=True)
    created_by = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL,
                                   related_name="+")
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["name"]

    def __str__(self) -> str:
        return self.name


class ContractText(AppendOnlyModel):
    """One extracted contract text, with the map from offsets back to the original's pages or paragraphs."""

    sha256 = models.CharField(max_length=64, unique=True)  # of text.encode("utf-8"), computed here, never given
    text = models.TextField()
    length = models.PositiveIntegerField()
    kind = models.CharField(max_length=8)  # pdf | docx | text | html
    units = models.PositiveIntegerField()  # pages (PDF), paragraphs (DOCX), lines (text, HTML) of the original
    locations = models.JSONField()  # [[offset, unit number], ...] in ascending offset
    created_at = models.DateTimeField(auto_now_add=True)

    append_only_updated = "contract texts are append-only: a text is never updated"
    append_only_deleted = "contract texts are append-only: a text is never deleted"

    class Meta:
        ordering = ["id"]

    def __str__(self) -> str:
        return f"text {self.sha256[:12]} ({self.length} characters)"


class SetContract(models.Model):
    """A text in a set, under the title the firm knows it by (the file name without its extension)."""

    contract_set = models.ForeignKey(ContractSet, on_delete=models.CASCADE, related_name="contracts")
    text = models.ForeignKey(ContractText, on_delete=models.PROTECT, related_name="memberships")
    title = models.CharField(max_length=255)
    filename = models.CharField(max_length=255)
    source_sha256 = models.CharField(max_length=64)  # of the file's bytes, as uploaded
    source_bytes = models.PositiveBigIntegerField()
    imported_by = models.CharField(max_length=150)
    imported_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["contract_set_id", "title"]
        constraints = [
            models.UniqueConstraint(fields=["contract_set", "text"], name="contracts_setcontract_unique_text"),
            models.UniqueConstraint(fields=["contract_set", "title"], name="contracts_setcontract_unique_title"),
        ]

    def __str__(self) -> str:
        return self.title


class ContractExclusion(AppendOnlyModel):
    """A contract taken back out of its set (a wrong file dropped onto the upload), with the reason and who did it.

    Append-only, like the texts: an exclusion is a record of a decision, never edited or undone. It is allowed only
    before the contract is in a labelling pool (``services.contract_exclude``); an excluded contract is left out of
    every pool declared after, and the set's figures count it apart (``selectors.contract_sets``).
    """

    member = models.OneToOneField(SetContract, on_delete=models.PROTECT, related_name="exclusion")
    reason = models.TextField()
    excluded_by = models.CharField(max_length=150)
    excluded_at = models.DateTimeField(auto_now_add=True)

    append_only_updated = "contract exclusions are append-only: an exclusion is never updated"
    append_only_deleted = "contract exclusions are append-only: an exclusion is never deleted (never withdrawn)"

    class Meta:
        ordering = ["id"]

    def __str__(self) -> str:
        return f"{self.member} excluded"


class ClauseTaxonomy(AppendOnlyModel):
    """One version of a set's clause categories: CUAD's by default, a subset, renamed, or extended.

    ``categories`` is a list of {"name", "description", "origin"}; ``origin`` is "cuad" (CUAD's category and
    description as published), "cuad:<CUAD name>" for a renamed or re-described CUAD category (so a scorecard
    can still put it beside CUAD's), or "firm" for a category the firm added. ``sha256`` is the hash of that list
    as canonical JSON, computed by the service.
    """

    contract_set = models.ForeignKey(ContractSet, on_delete=models.PROTECT, related_name="taxonomies")
    version = models.PositiveIntegerField()
    categories = models.JSONField()
    sha256 = models.CharField(max_length=64)
    note = models.TextField(blank=True)
    created_by = models.CharField(max_length=150)
    created_at = models.DateTimeField(auto_now_add=True)

    append_only_updated = "clause taxonomies are append-only: a version is never updated; publish a new one"
    append_only_deleted = "clause taxonomies are append-only: a version is never deleted; publish a new one"

    class Meta:
        ordering = ["contract_set_id", "-version"]
        verbose_name_plural = "clause taxonomies"
        constraints = [
            models.UniqueConstraint(fields=["contract_set", "version"], name="contracts_taxonomy_unique_version"),
        ]

    def __str__(self) -> str:
        return f"{self.contract_set} taxonomy v{self.version}"
