"""Argilla, both ways: a dataset as ``Dataset.to_disk`` writes it (``.argilla/settings.json``,
``.argilla/dataset.json``, ``records.json``), zipped; and responses read back from such a directory's
``records.json`` (or from the zip).

Format (Argilla 2.x, docs.argilla.io "Import and export datasets"): settings as ``Settings.serialize()`` gives
them, the dataset as its ``DatasetModel``, records as ``Record.to_dict()``: ``{"id", "fields", "metadata",
"suggestions", "responses": {question: [{"value", "user_id", "status"}]}, "vectors", "status", "_server_id"}``.

Each grade type is a ``LabelQuestion`` (label_selection) whose labels are the kind's scale points plus "unknown":
Argilla's ``RatingQuestion`` takes integers only and cannot carry "unknown", which must never become a number.
Argilla names annotators by user UUID: reviewers get a UUID derived from their per-pool pseudonym.
"""

from __future__ import annotations

import io
import json
import uuid
import zipfile
import zlib
from collections.abc import Mapping
from typing import Any

from reviewapp.core.http.json_input import JsonInputError, json_loads
from reviewapp.review.agreement.exports import reviewer_pseudonym
from reviewapp.review.agreement.judgments import pool_completed_judgments
from reviewapp.review.exchange.texts import (
    ITEM_KEY,
    ExchangeError,
    ParsedAnnotation,
    item_hash_values,
    item_texts,
    text_keys,
    texts_read,
)
from reviewapp.review.judgments.hashes import ITEM_HASH_FIELDS
from reviewapp.review.kinds import UNKNOWN, PoolKind, kind_get
from reviewapp.review.pools.models import ReviewPool

SETTINGS_PATH = ".argilla/settings.json"
DATASET_PATH = ".argilla/dataset.json"
RECORDS_PATH = "records.json"
SUBMITTED = "submitted"
DRAFT = "draft"
DISCARDED = "discarded"
# Argilla's own writer (Record.to_dict, so Dataset.to_disk) drops a response's status: such a file cannot tell a
# submitted response from a draft or a discarded one, and the import asks how to read it rather than assume.
UNSTATED_READINGS = (SUBMITTED, DRAFT)


def reviewer_uuid(pseudonym: str) -> str:
    """A stable UUID for a reviewer's per-pool pseudonym (Argilla's ``user_id`` must be a UUID)."""
    return str(uuid.uuid5(uuid.NAMESPACE_URL, f"reviewapp:reviewer:{pseudonym}"))


def _field(name: str, title: str, *, required: bool) -> dict[str, Any]:
    return {"id": None, "inserted_at": None, "updated_at": None, "name": name, "title": title,
            "required": required, "description": None, "dataset_id": None, "type": "text",
            "settings": {"type": "text", "use_markdown": False}}


def argilla_settings(*, pool: ReviewPool) -> dict[str, Any]:
    """The dataset's settings, as ``rg.Settings.serialize()`` writes them."""
    kind = kind_get(pool.kind)
    titles = {"query_text": kind.query_label, "source_heading": f"{kind.source_label} (heading)",
              "source_text": kind.source_label, "passage_caption": f"{kind.passage_label or 'Passage'} (caption)",
              "passage_text": kind.passage_label or "Passage"}
    fields = [_field(key, titles[key], required=key == "query_text") for key in text_keys(pool)]
    options = [*({"value": str(value), "text": f"{value}: {meaning}"} for value, _, meaning in kind.scale),
               {"value": UNKNOWN, "text": "unknown (cannot tell from the texts)"}]
    questions = [
        {"id": None, "inserted_at": None, "updated_at": None, "name": grade_type.key, "title": grade_type.label,
         "description": grade_type.help_text, "required": False, "dataset_id": None, "type": "label_selection",
         # All options shown (the SDK's default for a short list).
         "settings": {"type": "label_selection", "visible_options": len(options), "options": options}}
        for grade_type in kind.grade_types
    ]
    metadata = [
        {"id": None, "inserted_at": None, "updated_at": None, "name": name, "title": name,
         "visible_for_annotators": False, "dataset_id": None,
         "settings": {"type": "terms", "values": None, "visible_for_annotators": False}}
        for name in (ITEM_KEY, "pool", *ITEM_HASH_FIELDS)
    ]
    return {"guidelines": pool.instructions or None, "fields": fields, "questions": questions, "vectors": [],
            "metadata": metadata, "allow_extra_metadata": False,
            "distribution": {"strategy": "overlap", "min_submitted": pool.reviewers_per_item}, "mapping": None}


def argilla_dataset(*, pool: ReviewPool) -> dict[str, Any]:
    """The dataset model (``DatasetModel.model_dump()``): no server ids, the workspace chosen at import."""
    return {"id": None, "inserted_at": None, "updated_at": None, "name": f"pool-{pool.public_id}", "status": "draft",
            "guidelines": pool.instructions or None, "allow_extra_metadata": False,
            "distribution": {"strategy": "overlap", "min_submitted": pool.reviewers_per_item},
            "workspace_id": None, "last_activity_at": None}


def argilla_records(*, pool: ReviewPool) -> list[dict[str, Any]]:
    """One record per item, with one submitted response per grade of each current, complete, non-stale judgment
    (known-answer items' judgments left out, as everywhere labels are read)."""
    kind = kind_get(pool.kind)
    keys = text_keys(pool)
    responses: dict[str, dict[str, list[dict[str, Any]]]] = {}
    for record in pool_completed_judgments(pool=pool):
        user = reviewer_uuid(reviewer_pseudonym(pool=pool, reviewer_id=record.reviewer_id))
        for grade_type, value in sorted(record.grades.items()):
            if grade_type in kind.grade_type_keys:
                responses.setdefault(record.item_id, {}).setdefault(grade_type, []).append(
                    {"value": str(value), "user_id": user, "status": SUBMITTED})
    records = []
    for item in pool.items.order_by("query_id", "doc_id", "id"):
        item_responses = responses.get(item.public_id, {})
        users = {r["user_id"] for answers in item_responses.values() for r in answers}
        records.append({
            "id": item.public_id,
            # Argilla refuses an empty text: a text the item lacks is left out (read back as '').
            "fields": {key: text for key, text in item_texts(item, keys).items() if text},
            "metadata": {ITEM_KEY: item.public_id, "pool": pool.public_id, **item_hash_values(item)},
            "suggestions": {},
            "responses": item_responses,
            "vectors": {},
            "status": "completed" if len(users) >= pool.reviewers_per_item else "pending",
            "_server_id": None,
        })
    return records


def _dumps(document: object) -> bytes:
    return json.dumps(document, ensure_ascii=False, indent=1).encode("utf-8")


def argilla_zip(*, pool: ReviewPool) -> bytes:
    """The ``to_disk`` directory as a zip: unzip it and ``rg.Dataset.from_disk(path)`` loads it into a server."""
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", compression=zipfile.ZIP_DEFLATED) as archive:
        archive.writestr(SETTINGS_PATH, _dumps(argilla_settings(pool=pool)))
        archive.writestr(DATASET_PATH, _dumps(argilla_dataset(pool=pool)))
        archive.writestr(RECORDS_PATH, _dumps(argilla_records(pool=pool)))
    return buffer.getvalue()


def argilla_records_from_zip(content: bytes, *, max_bytes: int) -> object:
    """``records.json`` of a zipped ``to_disk`` directory (at its root or one folder down), parsed."""
    try:
        archive = zipfile.ZipFile(io.BytesIO(content))
    except zipfile.BadZipFile:
        raise ExchangeError("not a zip file (expected Argilla's to_disk directory, zipped, or its records.json)"
                            ) from None
    with archive:
        names = [n for n in archive.namelist() if n == RECORDS_PATH or n.endswith("/" + RECORDS_PATH)]
        names = [n for n in names if n.count("/") <= 1 and ".argilla/" not in n]
        if len(names) != 1:
            raise ExchangeError(f"the zip holds {len(names)} {RECORDS_PATH} files; expected one")
        info = archive.getinfo(names[0])
        if info.file_size > max_bytes:  # a zip bomb is refused before it is inflated
            raise ExchangeError(f"{names[0]}: {info.file_size} bytes, more than the limit of {max_bytes}")
        try:
            content = archive.read(info)
        except (zipfile.BadZipFile, zlib.error, EOFError, NotImplementedError, RuntimeError, ValueError,
                OSError) as error:  # a damaged or lying member: a bad CRC, a broken stream, an encrypted entry
            raise ExchangeError(f"{names[0]}: cannot be read from the zip ({error})") from None
        try:  # the one bounded JSON path: a records.json nested too deeply is refused, never a recursion error
            return json_loads(content, limit_bytes=max_bytes)
        except JsonInputError as error:
            raise ExchangeError(f"{names[0]}: not acceptable JSON: {error}") from None


def argilla_parse(document: object, *, kind: PoolKind, unstated: str | None = None,
                  ) -> tuple[list[ParsedAnnotation], list[tuple[str, str]]]:
    """Every submitted response in Argilla records (``Record.to_dict()`` each): (grades, (location, status) of
    each response not imported).

    Only a submitted response becomes a label; draft and discarded ones are listed by location and status.
    A response without a status is read as ``unstated`` says (one of UNSTATED_READINGS); without that answer
    the file is refused, naming the first such response. Suggestions are model output, never read.
    """
    if unstated is not None and unstated not in UNSTATED_READINGS:
        raise ExchangeError(f"unstated status: {unstated!r} is not one of {', '.join(UNSTATED_READINGS)}")
    if isinstance(document, Mapping) and isinstance(document.get("records"), list):
        document = document["records"]
    if not isinstance(document, list):
        raise ExchangeError("expected a JSON list of records (Argilla's records.json)")
    parsed: list[ParsedAnnotation] = []
    skipped: list[tuple[str, str]] = []
    for i, record in enumerate(document):
        where = f"records[{i}]"
        if not isinstance(record, Mapping):
            raise ExchangeError(f"{where}: expected an object")
        metadata = record.get("metadata") or {}
        item_id = metadata.get(ITEM_KEY) if isinstance(metadata, Mapping) else None
        item_id = item_id or record.get("id")
        if not isinstance(item_id, str) or not item_id:
            raise ExchangeError(f"{where}.id: required (the item id this install exported)")
        fields = record.get("fields")
        if not isinstance(fields, Mapping):
            raise ExchangeError(f"{where}.fields: required (an object with the item's texts)")
        texts = texts_read(fields, where=f"{where}.fields")
        responses = record.get("responses") or {}
        if not isinstance(responses, Mapping):
            raise ExchangeError(f"{where}.responses: expected an object (question -> list of responses)")
        for grade_type, answers in responses.items():
            at = f"{where}.responses.{grade_type}"
            if grade_type not in kind.grade_type_keys:
                raise ExchangeError(f"{at}: {grade_type!r} is not a grade of this pool "
                                    f"({', '.join(kind.grade_type_keys)})")
            if not isinstance(answers, list):
                raise ExchangeError(f"{at}: expected a list of responses")
            users: set[str] = set()
            for j, answer in enumerate(answers):
                aat = f"{at}[{j}]"
                if not isinstance(answer, Mapping):
                    raise ExchangeError(f"{aat}: expected an object")
                status = answer.get("status")
                if status is None:
                    if unstated is None:
                        raise ExchangeError(
                            f"{aat}.status: missing. Argilla's to_disk and Record.to_dict leave a response's status "
                            "out, so this file cannot tell a submitted response from a draft or a discarded one; "
                            f"say how to read responses without a status ({' or '.join(UNSTATED_READINGS)}) and "
                            "import it again")
                    status = unstated
                if status != SUBMITTED:
                    if status not in (DRAFT, DISCARDED):
                        raise ExchangeError(f"{aat}.status: {status!r} is not submitted, draft or discarded")
                    skipped.append((aat, status))
                    continue
                user = answer.get("user_id")
                if not isinstance(user, str) or not user.strip():
                    raise ExchangeError(f"{aat}.user_id: required (the annotator)")
                if user in users:
                    raise ExchangeError(f"{aat}.user_id: {user} answers {grade_type!r} twice")
                users.add(user)
                if answer.get("value") is None:
                    raise ExchangeError(f"{aat}.value: required")
                parsed.append(ParsedAnnotation(location=aat, item_id=item_id, texts=texts, annotator=user.strip(),
                                               grade_type=grade_type, raw_value=answer["value"]))
    return parsed, skipped
