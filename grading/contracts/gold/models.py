"""A frozen gold set: one version of a contract set's lawyer-made clause labels, hashed from its content.

Append-only in the database (triggers, ``reviewapp.core.append_only``): a gold set that models are graded
against must never change under their scores; a change is a new version. ``sha256`` is the hash of ``content``
as canonical JSON, computed by ``freeze.gold_set_freeze`` and never taken from a caller; the same content frozen
again is the same version.
"""

from __future__ import annotations

from typing import Any

from django.db import models

from grading.contracts.models import ContractSet
from reviewapp.core.models import AppendOnlyError, AppendOnlyQuerySet


class GoldSet(models.Model):
    """One frozen version. ``content`` is what is graded against; the rest says where it came from."""

    contract_set = models.ForeignKey(ContractSet, on_delete=models.PROTECT, related_name="gold_sets")
    version = models.PositiveIntegerField()
    sha256 = models.CharField(max_length=64)  # of canonical_json(content)
    taxonomy_version = models.PositiveIntegerField()
    taxonomy_sha256 = models.CharField(max_length=64)
    # {"taxonomy": {...}, "categories": [{"name", "description"}], "contracts": [{"title", "text_sha256",
    #  "answers": {category: {"present": bool, "spans": [{"start", "end", "text"}]}}}]}
    content = models.JSONField()
    # Per contract title: who labelled it and, per category, agreed or adjudicated (and by whom), from which
    # pool and item.
    provenance = models.JSONField()
    left_out = models.JSONField()  # [{"title", "reasons": [...]}] of contracts not complete and resolved
    counts = models.JSONField()
    agreement = models.JSONField()  # per category and "ALL", as at the freeze (``agreement.ClauseAgreement``)
    pools = models.JSONField()  # public ids of the review pools read
    # Names, not foreign keys: deleting an account must not rewrite (SET_NULL) an append-only row.
    created_by = models.CharField(max_length=150)
    created_at = models.DateTimeField(auto_now_add=True)

    objects = AppendOnlyQuerySet.as_manager()

    class Meta:
        ordering = ["contract_set_id", "-version"]
        constraints = [
            models.UniqueConstraint(fields=["contract_set", "version"], name="contracts_goldset_unique_version"),
            models.UniqueConstraint(fields=["contract_set", "sha256"], name="contracts_goldset_unique_content"),
        ]

    def __str__(self) -> str:
        return f"{self.contract_set} gold v{self.version}"

    def save(self, *args: Any, **kwargs: Any) -> None:
        if self.pk is not None and not self._state.adding:
            raise AppendOnlyError("gold sets are append-only: a version is never updated; freeze a new one")
        super().save(*args, **kwargs)

    def delete(self, *args: Any, **kwargs: Any) -> Any:
        raise AppendOnlyError("gold sets are append-only: a version is never deleted")
