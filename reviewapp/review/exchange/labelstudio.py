"""Label Studio, both ways: a labeling config (XML), tasks with annotations (its JSON import format), and
annotations read back from its JSON export.

Format (labelstud.io/guide/task_format and /guide/tasks "Basic Label Studio JSON format"): a list of tasks, each
``{"data": {...}, "meta": {...}, "annotations": [{"result": [...], ...}]}``; a choices result is
``{"from_name": <Choices name>, "to_name": <object name>, "type": "choices", "value": {"choices": [<Choice
value>]}}``. One ``Choices`` tag per grade type, named by its key; a ``Choice`` per scale point, its value the
grade as this install writes it ("0".."3", "0"/"1"), plus "unknown".

Label Studio names annotators by its own integer user ids (``completed_by``), which an export cannot know: the
export leaves ``completed_by`` out and names the reviewer by pseudonym in ``reviewer`` (a key Label Studio keeps
out of its model); an import takes ``reviewer`` when present, else ``completed_by`` as given.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any
from xml.etree import ElementTree

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
from reviewapp.review.kinds import UNKNOWN, PoolKind, kind_get
from reviewapp.review.pools.models import ReviewPool

# The object every Choices tag points at: grades are about the item, and the query is the one text every kind has.
TO_NAME = "query_text"
# A header with the kind's own label above the first text of each part (query; heading + source; caption + passage).
TEXT_HEADERS = {"query_text": "query_label", "source_heading": "source_label", "passage_caption": "passage_label"}


def choice_value(value: object) -> str:
    """A grade as a Choice value: "2", "unknown"."""
    return str(value)


def labelstudio_config(*, pool: ReviewPool) -> str:
    """The labeling config of a pool: its texts under the kind's own labels, one Choices per grade type."""
    kind = kind_get(pool.kind)
    view = ElementTree.Element("View")
    if pool.instructions:
        ElementTree.SubElement(view, "Header", {"value": pool.instructions, "size": "6"})
    for key in text_keys(pool):
        if key in TEXT_HEADERS:
            header = getattr(kind, TEXT_HEADERS[key]) or key.split("_")[0].capitalize()
            ElementTree.SubElement(view, "Header", {"value": header, "size": "5"})
        ElementTree.SubElement(view, "Text", {"name": key, "value": f"${key}"})
    for grade_type in kind.grade_types:
        ElementTree.SubElement(view, "Header", {"value": f"{grade_type.label}: {grade_type.help_text}", "size": "5"})
        choices = ElementTree.SubElement(view, "Choices", {"name": grade_type.key, "toName": TO_NAME,
                                                           "choice": "single", "showInline": "true"})
        for value, _, meaning in kind.scale:
            ElementTree.SubElement(choices, "Choice", {"value": choice_value(value), "hint": meaning})
        ElementTree.SubElement(choices, "Choice", {"value": UNKNOWN, "hint": "cannot tell from the texts"})
    ElementTree.indent(view)
    return ElementTree.tostring(view, encoding="unicode") + "\n"


def labelstudio_tasks(*, pool: ReviewPool) -> list[dict[str, Any]]:
    """One task per item of the pool, with one annotation per current, complete, non-stale judgment.

    Reviewers are named by their per-pool pseudonym. Known-answer items' judgments are left out (they measure the
    reviewer, never count as labels), as everywhere labels are read.
    """
    kind = kind_get(pool.kind)
    keys = text_keys(pool)
    by_item: dict[str, list[Any]] = {}
    for record in pool_completed_judgments(pool=pool):
        by_item.setdefault(record.item_id, []).append(record)
    tasks = []
    for item in pool.items.order_by("query_id", "doc_id", "id"):
        annotations = [
            {
                "result": [
                    {"id": f"{grade_type}-{n}", "from_name": grade_type, "to_name": TO_NAME, "type": "choices",
                     "origin": "manual", "value": {"choices": [choice_value(value)]}}
                    for grade_type, value in sorted(record.grades.items()) if grade_type in kind.grade_type_keys
                ],
                "was_cancelled": False,
                "ground_truth": False,
                "created_at": record.saved_at.isoformat(),
                "updated_at": record.saved_at.isoformat(),
                "reviewer": reviewer_pseudonym(pool=pool, reviewer_id=record.reviewer_id),
            }
            for n, record in enumerate(by_item.get(item.public_id, []))
        ]
        data: dict[str, str] = {ITEM_KEY: item.public_id, **item_texts(item, keys)}
        meta: dict[str, str] = {"pool": pool.public_id, "kind": kind.key, **item_hash_values(item)}
        tasks.append({"data": data, "meta": meta, "annotations": annotations})
    return tasks


def _annotator(annotation: Mapping[str, Any], where: str) -> str:
    if isinstance(annotation.get("reviewer"), str) and annotation["reviewer"].strip():
        return annotation["reviewer"].strip()
    by = annotation.get("completed_by")
    if isinstance(by, Mapping):  # some exports expand the user: {"id": 3, "email": ...}
        by = by.get("email") or by.get("id")
    if isinstance(by, bool) or not isinstance(by, (int, str)) or str(by).strip() == "":
        raise ExchangeError(f"{where}.completed_by: required (the annotator), as Label Studio's export gives it")
    return f"label-studio-user:{by}" if isinstance(by, int) else str(by).strip()


def labelstudio_parse(document: object, *, kind: PoolKind) -> tuple[list[ParsedAnnotation], list[tuple[str, str]]]:
    """Every choices result of every submitted annotation in a Label Studio JSON export: (grades, (location,
    reason) of each annotation or result not imported).

    Cancelled (skipped) annotations and results of other types are listed; predictions and drafts
    are model output and unfinished work, never read. Anything malformed is refused, naming the task and field.
    """
    if isinstance(document, Mapping) and isinstance(document.get("tasks"), list):
        document = document["tasks"]
    if not isinstance(document, list):
        raise ExchangeError("expected a JSON list of tasks (Label Studio's JSON export)")
    parsed: list[ParsedAnnotation] = []
    skipped: list[tuple[str, str]] = []
    for i, task in enumerate(document):
        where = f"tasks[{i}]"
        if not isinstance(task, Mapping) or not isinstance(task.get("data"), Mapping):
            raise ExchangeError(f"{where}.data: required (an object with the item's texts)")
        data = task["data"]
        item_id = data.get(ITEM_KEY)
        if not isinstance(item_id, str) or not item_id:
            raise ExchangeError(f"{where}.data.{ITEM_KEY}: required (the item id this install exported)")
        texts = texts_read(data, where=f"{where}.data")
        annotations = task.get("annotations", [])
        if not isinstance(annotations, list):
            raise ExchangeError(f"{where}.annotations: expected a list")
        for j, annotation in enumerate(annotations):
            at = f"{where}.annotations[{j}]"
            if not isinstance(annotation, Mapping):
                raise ExchangeError(f"{at}: expected an object")
            if annotation.get("was_cancelled") is True:
                skipped.append((at, "cancelled"))
                continue
            annotator = _annotator(annotation, at)
            result = annotation.get("result")
            if not isinstance(result, list):
                raise ExchangeError(f"{at}.result: expected a list")
            seen: set[str] = set()
            for k, region in enumerate(result):
                rat = f"{at}.result[{k}]"
                if not isinstance(region, Mapping):
                    raise ExchangeError(f"{rat}: expected an object")
                if region.get("type") != "choices":
                    skipped.append((rat, f"not choices ({str(region.get('type'))[:40]})"))
                    continue
                grade_type = region.get("from_name")
                if grade_type not in kind.grade_type_keys:
                    raise ExchangeError(f"{rat}.from_name: {grade_type!r} is not a grade of this pool "
                                        f"({', '.join(kind.grade_type_keys)})")
                if grade_type in seen:
                    raise ExchangeError(f"{rat}.from_name: {grade_type!r} is answered twice in one annotation")
                seen.add(grade_type)
                value = region.get("value")
                choices = value.get("choices") if isinstance(value, Mapping) else None
                if not isinstance(choices, list) or len(choices) != 1:
                    raise ExchangeError(f"{rat}.value.choices: expected exactly one choice")
                parsed.append(ParsedAnnotation(location=at, item_id=item_id, texts=texts, annotator=annotator,
                                               grade_type=grade_type, raw_value=choices[0]))
    return parsed, skipped
