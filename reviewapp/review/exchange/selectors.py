"""Reads of labels from outside the blind review: imported label sources, and what each annotation import brought,
kept apart from every blind label.
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from django.db.models import Count

from reviewapp.review.exchange.models import ImportedAnnotation, ImportedLabel, LabelImport, LabelSource
from reviewapp.review.pools.models import ReviewPool


@dataclass(frozen=True)
class LabelImportSummary:
    pk: int
    tool: str
    filename: str
    content_sha256: str
    blind: bool
    imported_by: str
    created_at: datetime
    annotations: int
    stale: int  # annotations whose item's texts changed since the import


@dataclass(frozen=True)
class ImportedLabelRecord:
    """One imported grade, with its provenance: never a blind judgment."""

    import_id: int
    query_id: str
    doc_id: str
    tool: str
    content_sha256: str
    blind: bool
    item_id: str
    location: str
    annotator: str
    grade_type: str
    value: Any
    query_hash: str
    source_hash: str
    passage_hash: str
    stale: bool


def _stale(row: ImportedAnnotation) -> bool:
    item = row.item
    return (row.query_hash, row.source_hash, row.passage_hash) != (item.query_hash, item.source_hash,
                                                                    item.passage_hash)


def pool_imported_labels(*, pool: ReviewPool) -> list[ImportedLabelRecord]:
    rows = (ImportedAnnotation.objects.filter(label_import__pool=pool).select_related("label_import", "item")
            .order_by("label_import_id", "id"))
    return [ImportedLabelRecord(
        import_id=row.label_import_id, query_id=row.item.query_id, doc_id=row.item.doc_id,
        tool=row.label_import.tool, content_sha256=row.label_import.content_sha256,
        blind=row.label_import.blind, item_id=row.item.public_id, location=row.location, annotator=row.annotator,
        grade_type=row.grade_type, value=row.value, query_hash=row.query_hash, source_hash=row.source_hash,
        passage_hash=row.passage_hash, stale=_stale(row)) for row in rows]


def pool_imported_jsonl(*, pool: ReviewPool) -> Iterator[str]:
    """One JSON line per imported grade, each marked ``"blind": false`` with its tool, import and annotator: the
    only way imported labels leave, never mixed into the qrels or judgments exports."""
    for record in pool_imported_labels(pool=pool):
        yield json.dumps({"pool": pool.public_id, "item": record.item_id, **dataclasses.asdict(record)},
                         sort_keys=True, ensure_ascii=False) + "\n"


def pool_label_imports(*, pool: ReviewPool) -> list[LabelImportSummary]:
    stale: dict[int, int] = {}
    counts: dict[int, int] = {}
    for row in ImportedAnnotation.objects.filter(label_import__pool=pool).select_related("item"):
        counts[row.label_import_id] = counts.get(row.label_import_id, 0) + 1
        stale[row.label_import_id] = stale.get(row.label_import_id, 0) + _stale(row)
    return [LabelImportSummary(pk=imp.pk, tool=imp.tool, filename=imp.filename, content_sha256=imp.content_sha256,
                               blind=imp.blind, imported_by=imp.imported_by, created_at=imp.created_at,
                               annotations=counts.get(imp.pk, 0), stale=stale.get(imp.pk, 0))
            for imp in LabelImport.objects.filter(pool=pool).order_by("id")]


@dataclass(frozen=True)
class LabelSourceSummary:
    pk: int
    name: str
    description: str
    provisional: bool
    labels: int
    grade_types: list[str] = field(default_factory=list)


def _source_summary(source: LabelSource, labels: int) -> LabelSourceSummary:
    grade_types = sorted(set(ImportedLabel.objects.filter(source=source).values_list("grade_type", flat=True)))
    return LabelSourceSummary(pk=source.pk, name=source.name, description=source.description,
                              provisional=source.provisional, labels=labels, grade_types=grade_types)


def label_source_list() -> list[LabelSourceSummary]:
    counts = dict(LabelSource.objects.annotate(n=Count("labels")).values_list("pk", "n"))
    return [_source_summary(source, counts.get(source.pk, 0)) for source in LabelSource.objects.order_by("name")]


@dataclass(frozen=True)
class SourceLabel:
    source: str
    provisional: bool  # provisional labels are never passage labels
    query_id: str
    doc_id: str
    grade_type: str
    value: int | str
    query_hash: str
    source_hash: str
    external_ref: dict[str, Any]


def label_source_find(*, name: str) -> LabelSourceSummary | None:
    """The label source of that name, or None."""
    source = LabelSource.objects.annotate(n=Count("labels")).filter(name=name).first()
    return None if source is None else _source_summary(source, source.n)


def label_source_get(*, name: str) -> LabelSourceSummary:
    """The label source of that name (``LabelSource.DoesNotExist`` when there is none)."""
    found = label_source_find(name=name)
    if found is None:
        raise LabelSource.DoesNotExist(f"no label source named {name!r}")
    return found


def label_source_labels(*, name: str) -> list[SourceLabel]:
    source = LabelSource.objects.get(name=name)
    return [
        SourceLabel(
            source=source.name, provisional=source.provisional, query_id=label.query_id, doc_id=label.doc_id,
            grade_type=label.grade_type, value=label.value, query_hash=label.query_hash,
            source_hash=label.source_hash, external_ref=dict(label.external_ref),
        )
        for label in ImportedLabel.objects.filter(source=source).order_by("query_id", "doc_id", "grade_type")
    ]
