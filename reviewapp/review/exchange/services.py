"""The import: a Label Studio or Argilla file into one pool, as a ``LabelImport`` with its annotations.

All or nothing: the whole file is read and checked (items of this pool, texts equal to the items' current texts by
hash, grades on the kind's scale, one grade per annotator, item and grade type) before one row is written.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from django.contrib.auth.models import User
from django.db import IntegrityError, transaction

from reviewapp.core.http.json_input import JsonInputError, json_loads, max_bytes
from reviewapp.core.records.hashing import sha256_json
from reviewapp.review.errors import ReviewError
from reviewapp.review.exchange.argilla import argilla_parse, argilla_records_from_zip
from reviewapp.review.exchange.labelstudio import labelstudio_parse
from reviewapp.review.exchange.models import ImportedAnnotation, ImportedLabel, LabelImport, LabelSource
from reviewapp.review.exchange.texts import ExchangeError, texts_check
from reviewapp.review.judgments.models import ReviewItem
from reviewapp.review.kinds import UnknownKind, kind_for_grade_type, kind_get
from reviewapp.review.pools.models import ReviewPool

TOOLS = (LabelImport.LABEL_STUDIO, LabelImport.ARGILLA)
__all__ = ["TOOLS", "ImportResult", "annotations_import", "document_read", "import_report",
           "label_source_import"]


@dataclass(frozen=True)
class ImportResult:
    label_import: LabelImport
    annotations: int
    # (location, why) of each annotation or response not imported: cancelled, draft, discarded, not choices.
    not_imported: tuple[tuple[str, str], ...] = ()

    @property
    def skipped(self) -> int:
        return len(self.not_imported)

    @property
    def skipped_by_status(self) -> dict[str, int]:
        return dict(Counter(why for _, why in self.not_imported))


# How many locations the import report names before it says "and N more".
REPORT_NAMES = 10


def import_report(result: ImportResult, *, tool: str) -> str:
    """The one sentence every page, command and answer gives of an import: what became labels, and what did not
    (by status, each named by its place in the file)."""
    sentence = (f"import {result.label_import.pk}: {result.annotations} submitted annotations from {tool} "
                "imported as labels (not blind; counted by no human-label metric)")
    if not result.not_imported:
        return sentence + "; nothing left out."
    counts = ", ".join(f"{n} {why}" for why, n in sorted(result.skipped_by_status.items()))
    names = ", ".join(f"{where} ({why})" for where, why in result.not_imported[:REPORT_NAMES])
    more = f" and {result.skipped - REPORT_NAMES} more" if result.skipped > REPORT_NAMES else ""
    return f"{sentence}; not imported: {counts}: {names}{more}."


def document_read(content: bytes, *, tool: str) -> object:
    """A file's bytes as the JSON document to import (for Argilla, also a zipped ``to_disk`` directory)."""
    if tool == LabelImport.ARGILLA and content[:4] == b"PK\x03\x04":
        return argilla_records_from_zip(content, max_bytes=max_bytes())
    try:
        return json_loads(content)
    except JsonInputError as error:
        raise ExchangeError(f"not acceptable JSON: {error}") from None


def annotations_import(*, pool: ReviewPool, tool: str, document: object, filename: str = "",
                       imported_by: str = "", unstated: str | None = None) -> ImportResult:
    """Import the annotations of a Label Studio export (tasks) or Argilla records into ``pool``, not blind.

    Only submitted work becomes labels. ``unstated`` says how to read an Argilla response that carries no status
    (one of ``argilla.UNSTATED_READINGS``); a file with such responses is refused without it. Refused, with nothing
    written, when anything is wrong: the message names the task or record and the field.
    """
    if tool not in TOOLS:
        raise ExchangeError(f"tool: {tool!r} is not one of {', '.join(TOOLS)}")
    kind = kind_get(pool.kind)
    if tool == LabelImport.LABEL_STUDIO:
        parsed, skipped = labelstudio_parse(document, kind=kind)
    else:
        parsed, skipped = argilla_parse(document, kind=kind, unstated=unstated)
    items = {item.public_id: item for item in
             ReviewItem.objects.filter(pool=pool, public_id__in={p.item_id for p in parsed})}
    rows: list[ImportedAnnotation] = []
    seen: dict[tuple[str, str, str], str] = {}
    hashes: dict[str, dict[str, str]] = {}
    for annotation in parsed:
        item = items.get(annotation.item_id)
        if item is None:
            raise ExchangeError(f"{annotation.location}: item {annotation.item_id!r} is not an item of pool "
                                f"{pool.public_id}")
        task = annotation.location.split(".")[0]
        if task not in hashes:
            hashes[task] = texts_check(item, annotation.texts, where=task)
        try:
            value = kind.parse_grade(annotation.raw_value)
        except ValueError as error:
            raise ExchangeError(f"{annotation.location} ({annotation.grade_type}): {error}") from None
        if value is None:
            raise ExchangeError(f"{annotation.location} ({annotation.grade_type}): no grade")
        key = (item.public_id, annotation.annotator, annotation.grade_type)
        if key in seen:
            raise ExchangeError(f"{annotation.location}: {annotation.annotator!r} grades {annotation.grade_type!r} "
                                f"of item {item.public_id} twice (also at {seen[key]})")
        seen[key] = annotation.location
        rows.append(ImportedAnnotation(item=item, location=annotation.location, annotator=annotation.annotator,
                                       grade_type=annotation.grade_type, value=value, **hashes[task]))
    if not rows:
        raise ExchangeError("the file holds no submitted annotation of this pool's grades; nothing was imported")
    digest = sha256_json(document)
    earlier = LabelImport.objects.filter(pool=pool, content_sha256=digest).first()
    if earlier is not None:
        raise ExchangeError(f"this content was imported into pool {pool.public_id} already (import {earlier.pk})")
    try:
        with transaction.atomic():
            label_import = LabelImport.objects.create(pool=pool, tool=tool, filename=filename[:300],
                                                      content_sha256=digest, imported_by=imported_by[:150])
            for row in rows:
                row.label_import = label_import
            ImportedAnnotation.objects.bulk_create(rows)
    except IntegrityError:  # the same content imported at the same moment by another request
        raise ExchangeError(f"this content was imported into pool {pool.public_id} already") from None
    return ImportResult(label_import=label_import, annotations=len(rows), not_imported=tuple(skipped))


@transaction.atomic
def label_source_import(
    *,
    name: str,
    labels: Sequence[Mapping[str, Any]],
    provisional: bool = True,
    description: str = "",
    created_by: User | None = None,
) -> LabelSource:
    """Import labels from outside the review (e.g. 60 source-derived section labels) as their own source.

    Each label: ``query_id``, ``doc_id``, ``grade_type`` (e.g. "section"),
    ``value`` (0..3 or "unknown"), optional ``query_hash``, ``source_hash``,
    ``external_ref``. Importing the same name twice is refused (sources are
    append-only; import a new name).
    """
    if not name.strip():
        raise ReviewError("name: required")
    if LabelSource.objects.filter(name=name.strip()).exists():
        raise ReviewError(f"label source {name.strip()!r} exists already; import under a new name")
    source = LabelSource.objects.create(
        name=name.strip(), description=description.strip(), provisional=provisional, created_by=created_by
    )
    rows: list[ImportedLabel] = []
    seen: set[tuple[str, str, str]] = set()
    for i, raw in enumerate(labels):
        where = f"labels[{i}]"
        if not isinstance(raw, Mapping):
            raise ReviewError(f"{where}: expected an object")
        for field in ("query_id", "doc_id", "grade_type"):
            if not str(raw.get(field) or "").strip():
                raise ReviewError(f"{where}.{field}: required")
        try:
            scale = kind_for_grade_type(str(raw["grade_type"]))
        except UnknownKind as error:
            raise ReviewError(f"{where}.grade_type: {error}") from None
        try:
            value = scale.parse_grade(raw.get("value"))
        except ValueError as error:
            raise ReviewError(f"{where}.value: {error}") from None
        if value is None:
            raise ReviewError(f"{where}.value: required (0-3 or unknown)")
        external_ref = raw.get("external_ref") or {}
        if not isinstance(external_ref, Mapping):  # dict("ab") raised inside the import: a 500
            raise ReviewError(f"{where}.external_ref: must be an object")
        key = (str(raw["query_id"]), str(raw["doc_id"]), str(raw["grade_type"]))
        if key in seen:
            raise ReviewError(f"{where}: repeats query_id/doc_id/grade_type {key}")
        seen.add(key)
        rows.append(
            ImportedLabel(
                source=source,
                query_id=key[0],
                doc_id=key[1],
                grade_type=key[2],
                value=value,
                query_hash=str(raw.get("query_hash") or ""),
                source_hash=str(raw.get("source_hash") or ""),
                external_ref=dict(external_ref),
            )
        )
    ImportedLabel.objects.bulk_create(rows)
    return source
