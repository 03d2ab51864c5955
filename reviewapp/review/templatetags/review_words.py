"""Admin pages' words, not codes: a grade on its kind's scale, a document by its citation."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from django import template

from reviewapp.review.kinds import PoolKind

register = template.Library()


@register.filter(name="grade_text")
def grade_text(value: Any, kind: PoolKind) -> str:
    """``{{ value|grade_text:kind }}``: "yes"/"no" on a yes/no scale, the number on an ordinal one."""
    return kind.grade_text(value)


@register.filter(name="document")
def document(doc_id: str, citations: Mapping[str, str]) -> str:
    """``{{ doc_id|document:documents }}``: the document's citation, or its id when the job gives none."""
    return citations.get(doc_id, doc_id) if citations else doc_id


@register.filter(name="count_of")
def count_of(counts: Mapping[str, int], key: str) -> int:
    """``counts[key]``, 0 when absent: a page's per-row count read from a panel's mapping."""
    return counts.get(key, 0)
