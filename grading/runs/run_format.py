"""Validate an extraction run (JSON or JSON Lines) before anything is stored.

JSON: ``{"model": "...", "extractions": [{"contract", "category", "text"}, ...]}``.
JSON Lines: one extraction object per line; a line may also carry ``model``
(every line that does must agree), or be ``{"model": "..."}`` alone.

Every error names where (``extractions[3]`` or ``line 4``) and which field.
All errors are collected, so a pasted run can be fixed in one go. Plain
Python, so the grader command and the web console share it.
"""

from __future__ import annotations

import json
from collections.abc import Collection
from dataclasses import dataclass

MAX_ERRORS = 50
MAX_MODEL_CHARS = 200  # the width of ExtractionRun.model
FIELDS = ("contract", "category", "text")


class RunFormatError(ValueError):
    def __init__(self, errors: list[str]) -> None:
        self.errors = errors
        shown = errors[:MAX_ERRORS]
        more = f"\n... and {len(errors) - MAX_ERRORS} more" if len(errors) > MAX_ERRORS else ""
        super().__init__("invalid run:\n" + "\n".join(shown) + more)


@dataclass(frozen=True)
class RunExtraction:
    contract: str
    category: str
    text: str


@dataclass(frozen=True)
class ParsedRun:
    model: str
    extractions: tuple[RunExtraction, ...]
    source_format: str  # "json" or "jsonl"

    def canonical(self) -> dict:
        """What the run's content hash is taken over (the same for its JSON and JSON Lines forms)."""
        return {
            "model": self.model,
            "extractions": [{"contract": e.contract, "category": e.category, "text": e.text} for e in self.extractions],
        }


def _type_name(value: object) -> str:
    return {dict: "object", list: "array", str: "string", bool: "boolean", type(None): "null"}.get(
        type(value), "number"
    )


def _check_item(
    item: object, where: str, contracts: Collection[str], categories: Collection[str], errors: list[str]
) -> RunExtraction | None:
    if not isinstance(item, dict):
        errors.append(f"{where}: expected an object with contract, category, text; got {_type_name(item)}")
        return None
    ok = True
    for name in FIELDS:
        if name not in item:
            errors.append(f"{where}, field '{name}': missing")
            ok = False
        elif not isinstance(item[name], str):
            errors.append(f"{where}, field '{name}': wrong type, expected string, got {_type_name(item[name])}")
            ok = False
    if not ok:
        return None
    if item["contract"] not in contracts:
        errors.append(f"{where}, field 'contract': unknown contract {item['contract'][:120]!r}")
        ok = False
    if item["category"] not in categories:
        errors.append(f"{where}, field 'category': unknown category {item['category'][:120]!r}")
        ok = False
    if not item["text"].strip():
        errors.append(f"{where}, field 'text': empty text")
        ok = False
    elif "\x00" in item["text"]:
        errors.append(f"{where}, field 'text': contains a NUL character (\\u0000)")
        ok = False
    return RunExtraction(item["contract"], item["category"], item["text"]) if ok else None


def _check_model(value: object, where: str, errors: list[str]) -> str | None:
    if not isinstance(value, str) or not value.strip():
        errors.append(f"{where}, field 'model': expected a non-empty string, got {_type_name(value)}")
        return None
    if "\x00" in value:
        errors.append(f"{where}, field 'model': contains a NUL character (\\u0000)")
        return None
    if len(value.strip()) > MAX_MODEL_CHARS:
        errors.append(f"{where}, field 'model': longer than {MAX_MODEL_CHARS} characters")
        return None
    return value.strip()


def parse_run(
    raw: str | bytes,
    *,
    contracts: Collection[str],
    categories: Collection[str],
    default_model: str | None = None,
) -> ParsedRun:
    """Parse and validate a run against the known contract titles and category names; raise RunFormatError."""
    if isinstance(raw, bytes):
        try:
            raw = raw.decode("utf-8-sig")
        except UnicodeDecodeError as exc:
            raise RunFormatError([f"byte {exc.start}: the run is not UTF-8"]) from exc
    if not raw.strip():
        raise RunFormatError(["the run is empty"])
    errors: list[str] = []
    items: list[RunExtraction] = []
    try:
        doc = json.loads(raw)
        is_json = True
    except json.JSONDecodeError:
        is_json = False
        doc = None

    # A one-line JSON Lines run also parses as a JSON object: it is told apart by carrying extraction fields.
    one_line = isinstance(doc, dict) and "extractions" not in doc and any(name in doc for name in FIELDS)
    if is_json and not one_line:
        if not isinstance(doc, dict):
            got = _type_name(doc)
            raise RunFormatError([f"top level: expected an object with 'model' and 'extractions', got {got}"])
        if "model" in doc:
            model = _check_model(doc["model"], "top level", errors)
        elif default_model:
            model = default_model
        else:
            model = None
            errors.append("top level, field 'model': missing")
        extractions = doc.get("extractions")
        if not isinstance(extractions, list):
            errors.append(f"top level, field 'extractions': expected an array, got {_type_name(extractions)}")
            raise RunFormatError(errors)
        for index, item in enumerate(extractions):
            parsed = _check_item(item, f"extractions[{index}]", contracts, categories, errors)
            if parsed:
                items.append(parsed)
        source_format = "json"
    else:
        model = None
        for line_no, line in enumerate(raw.splitlines(), start=1):
            if not line.strip():
                continue
            where = f"line {line_no}"
            try:
                obj = json.loads(line)
            except json.JSONDecodeError as exc:
                errors.append(f"{where}: not valid JSON ({exc.msg} at column {exc.colno})")
                continue
            if isinstance(obj, dict) and "model" in obj:
                line_model = _check_model(obj["model"], where, errors)
                if line_model and model and line_model != model:
                    errors.append(f"{where}, field 'model': {line_model!r} differs from {model!r} given earlier")
                model = model or line_model
                if set(obj) == {"model"}:
                    continue
            parsed = _check_item(obj, where, contracts, categories, errors)
            if parsed:
                items.append(parsed)
        if model is None:
            model = default_model
            if model is None:
                errors.append("field 'model': missing (no line carries it)")
        source_format = "jsonl"

    if not errors and not items:
        errors.append("the run has no extractions")
    if errors:
        raise RunFormatError(errors)
    return ParsedRun(model=str(model), extractions=tuple(items), source_format=source_format)
