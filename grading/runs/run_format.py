"""Validate an extraction run (JSON or JSON Lines) before anything is stored.

JSON: ``{"model": "...", "extractions": [{"contract", "category", "text"}, ...]}``.
JSON Lines: one extraction object per line; a line may also carry ``model``
(every line that does must agree), or be ``{"model": "..."}`` alone.
CSV: a header row naming ``contract``, ``category``, ``text`` (and optionally
``confidence`` and ``model``), then one extraction per row.

Confidence: optional, a number in [0, 1] per extraction (the model's
probability that the extraction is right). Given on every extraction or on
none: with it, CUAD's own AUPR and precision at 80%/90% recall are computed
(``scoring.cuad.paper_metric``), which sweep a threshold over it.

Scope: the contracts the run attempted, declared as a top-level
``"contracts": [titles]`` (JSON) or on the first line ``{"contracts": [...]}``
(JSON Lines, optionally with ``model``). A run that declares none is scoped to
the whole sample it is graded on: contracts it has no extraction for count as
missed. Every extraction must be for a declared contract.

Every error names where (``extractions[3]`` or ``line 4``) and which field.
All errors are collected, so a pasted run can be fixed in one go. Plain
Python, so the grader command and the web console share it.
"""

from __future__ import annotations

import csv
import io
import math
from collections.abc import Collection
from dataclasses import dataclass

from reviewapp.core.http.json_input import JsonInputError, JsonSyntaxError, json_loads

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
    confidence: float | None = None


@dataclass(frozen=True)
class ParsedRun:
    model: str
    extractions: tuple[RunExtraction, ...]
    source_format: str  # "json", "jsonl" or "csv"
    contracts: tuple[str, ...] | None = None  # the declared scope, sorted; None = the whole sample

    def canonical(self) -> dict:
        """What the run's content hash is taken over (the same for its JSON and JSON Lines forms).

        The scope is part of the content (the same extractions over a narrower
        scope grade differently); it is left out when undeclared so runs stored
        before scopes existed keep their hashes.
        """
        out: dict = {
            "model": self.model,
            # A confidence is content when given; left out otherwise so runs stored before it keep their hashes.
            "extractions": [
                {"contract": e.contract, "category": e.category, "text": e.text}
                | ({} if e.confidence is None else {"confidence": e.confidence})
                for e in self.extractions
            ],
        }
        if self.contracts is not None:
            out["contracts"] = list(self.contracts)
        return out


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
    confidence_ok, confidence = _check_confidence(item, where, errors)
    if not confidence_ok:
        return None
    return RunExtraction(item["contract"], item["category"], item["text"], confidence) if ok else None


def _check_confidence(item: dict, where: str, errors: list[str]) -> tuple[bool, float | None]:
    """(acceptable, the extraction's confidence or None when not given); a refusal is recorded in ``errors``."""
    value = item.get("confidence")
    if isinstance(value, str):  # a CSV cell
        cell = value
        if not cell.strip():
            return True, None
        try:
            value = float(cell)
        except ValueError:
            errors.append(f"{where}, field 'confidence': {cell[:40]!r} is not a number")
            return False, None
    if value is None:
        return True, None
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
        errors.append(f"{where}, field 'confidence': expected a number in [0, 1], got {_type_name(value)}")
        return False, None
    if not 0.0 <= value <= 1.0:
        errors.append(f"{where}, field 'confidence': {value} is outside [0, 1]")
        return False, None
    return True, float(value)


def _agreeing_model(raw: object, where: str, model: str | None, errors: list[str]) -> str | None:
    """The run's model once a line (or row) names one: the first named wins; a different one is an error."""
    line_model = _check_model(raw, where, errors)
    if line_model and model and line_model != model:
        errors.append(f"{where}, field 'model': {line_model!r} differs from {model!r} given earlier")
    return model or line_model


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


def _check_scope(value: object, where: str, contracts: Collection[str], errors: list[str]) -> tuple[str, ...] | None:
    """The declared contract titles, sorted (a scope is a set); errors name the unknown titles."""
    if not isinstance(value, list) or not value:
        got = "an empty array" if isinstance(value, list) else _type_name(value)
        errors.append(
            f"{where}, field 'contracts': expected a non-empty array of contract titles, got {got} "
            "(leave the field out to scope the run to the whole sample)"
        )
        return None
    bad_types = [i for i, t in enumerate(value) if not isinstance(t, str)]
    if bad_types:
        errors.append(f"{where}, field 'contracts': entries {bad_types[:10]} are not strings")
        return None
    unknown = sorted({t for t in value if t not in contracts})
    if unknown:
        shown = ", ".join(repr(t[:120]) for t in unknown[:10])
        more = f" and {len(unknown) - 10} more" if len(unknown) > 10 else ""
        errors.append(f"{where}, field 'contracts': unknown contract title(s) {shown}{more}")
        return None
    duplicates = sorted({t for t in value if value.count(t) > 1})
    if duplicates:
        errors.append(f"{where}, field 'contracts': listed more than once: {', '.join(repr(t) for t in duplicates)}")
        return None
    return tuple(sorted(value))


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
    scope: tuple[str, ...] | None = None
    wheres: list[str] = []  # where each item came from, for the scope check
    try:
        doc = json_loads(raw)
        is_json = True
    except JsonSyntaxError:
        is_json = False
        doc = None
    except JsonInputError as exc:  # too big or nested too deep: one message, nothing parsed further
        raise RunFormatError([str(exc)]) from None

    # A one-line JSON Lines run also parses as a JSON object: it is told apart by carrying extraction fields.
    one_line = isinstance(doc, dict) and "extractions" not in doc and any(name in doc for name in FIELDS)
    header = _csv_header(raw) if not is_json else None
    if header is not None:
        model, source_format = _parse_csv(raw, header, contracts, categories, default_model, items, wheres, errors)
    elif is_json and not one_line:
        model, scope = _parse_json(doc, contracts, categories, default_model, items, wheres, errors)
        source_format = "json"
    else:
        model, scope = _parse_jsonl(raw, contracts, categories, default_model, items, wheres, errors)
        source_format = "jsonl"
    _check_whole_run(items, wheres, scope, errors)
    if errors:
        raise RunFormatError(errors)
    return ParsedRun(model=str(model), extractions=tuple(items), source_format=source_format, contracts=scope)


def _parse_json(
    doc: object,
    contracts: Collection[str],
    categories: Collection[str],
    default_model: str | None,
    items: list[RunExtraction],
    wheres: list[str],
    errors: list[str],
) -> tuple[str | None, tuple[str, ...] | None]:
    """A JSON run ``{"model", "extractions", "contracts"?}``: its model and scope; items and errors appended."""
    if not isinstance(doc, dict):
        got = _type_name(doc)
        raise RunFormatError([f"top level: expected an object with 'model' and 'extractions', got {got}"])
    scope = None
    if "model" in doc:
        model = _check_model(doc["model"], "top level", errors)
    elif default_model:
        model = default_model
    else:
        model = None
        errors.append("top level, field 'model': missing")
    if "contracts" in doc:
        scope = _check_scope(doc["contracts"], "top level", contracts, errors)
    extractions = doc.get("extractions")
    if not isinstance(extractions, list):
        errors.append(f"top level, field 'extractions': expected an array, got {_type_name(extractions)}")
        raise RunFormatError(errors)
    for index, item in enumerate(extractions):
        parsed = _check_item(item, f"extractions[{index}]", contracts, categories, errors)
        if parsed:
            items.append(parsed)
            wheres.append(f"extractions[{index}]")
    return model, scope


def _parse_jsonl(
    raw: str,
    contracts: Collection[str],
    categories: Collection[str],
    default_model: str | None,
    items: list[RunExtraction],
    wheres: list[str],
    errors: list[str],
) -> tuple[str | None, tuple[str, ...] | None]:
    """A JSON Lines run (one extraction a line; the scope on the first): its model and scope."""
    model = None
    scope = None
    first = True
    for line_no, line in enumerate(raw.splitlines(), start=1):
        if not line.strip():
            continue
        where = f"line {line_no}"
        is_first, first = first, False
        try:
            obj = json_loads(line)
        except JsonSyntaxError as exc:
            errors.append(f"{where}: not valid JSON ({exc.msg} at column {exc.colno})")
            continue
        except JsonInputError as exc:
            errors.append(f"{where}: {exc}")
            continue
        if isinstance(obj, dict) and "contracts" in obj:
            if not is_first:
                errors.append(f"{where}, field 'contracts': the scope may only be declared on the first line")
            elif set(obj) - {"contracts", "model"}:
                errors.append(f"{where}: the scope line holds only 'contracts' (and optionally 'model')")
            else:
                scope = _check_scope(obj["contracts"], where, contracts, errors)
            obj = {k: v for k, v in obj.items() if k != "contracts"}
            if not obj:
                continue
        if isinstance(obj, dict) and "model" in obj:
            model = _agreeing_model(obj["model"], where, model, errors)
            if set(obj) == {"model"}:
                continue
        parsed = _check_item(obj, where, contracts, categories, errors)
        if parsed:
            items.append(parsed)
            wheres.append(where)
    if model is None:
        model = default_model
        if model is None:
            errors.append("field 'model': missing (no line carries it)")
    return model, scope


def _check_whole_run(items: list[RunExtraction], wheres: list[str], scope: tuple[str, ...] | None,
                     errors: list[str]) -> None:
    """What no single extraction shows: each is in the declared scope, there is one, confidence on all or none."""
    if scope is not None:
        declared = set(scope)
        for where, item in zip(wheres, items, strict=True):
            if item.contract not in declared:
                errors.append(
                    f"{where}, field 'contract': {item.contract[:120]!r} is not in the run's declared 'contracts'"
                )
    if not errors and not items:
        errors.append("the run has no extractions")
    with_confidence = sum(item.confidence is not None for item in items)
    if 0 < with_confidence < len(items):
        first = next(where for where, item in zip(wheres, items, strict=True) if item.confidence is None)
        errors.append(
            f"field 'confidence': given on {with_confidence} of {len(items)} extractions (first without: {first}); "
            "give it on every extraction or on none"
        )


def _csv_header(raw: str) -> list[str] | None:
    """The header of a CSV run (its first non-blank line naming contract, category and text), else None."""
    first = next((line for line in raw.splitlines() if line.strip()), "")
    if first.lstrip().startswith(("{", "[")):
        return None
    names = [name.strip().lower() for name in next(csv.reader([first]), [])]
    return names if all(name in names for name in FIELDS) else None


def _parse_csv(
    raw: str,
    header: list[str],
    contracts: Collection[str],
    categories: Collection[str],
    default_model: str | None,
    items: list[RunExtraction],
    wheres: list[str],
    errors: list[str],
) -> tuple[str | None, str]:
    """Rows of a CSV run appended to ``items``; the model (a ``model`` column, else the default)."""
    model: str | None = None
    reader = csv.reader(io.StringIO(raw.lstrip("\r\n")))
    next(reader)
    for row in reader:
        if not any(cell.strip() for cell in row):
            continue
        where = f"line {reader.line_num}"
        if len(row) != len(header):
            errors.append(f"{where}: {len(row)} cells, the header names {len(header)}")
            continue
        obj = dict(zip(header, row, strict=True))
        if obj.get("model", "").strip():
            model = _agreeing_model(obj["model"], where, model, errors)
        parsed = _check_item(obj, where, contracts, categories, errors)
        if parsed:
            items.append(parsed)
            wheres.append(where)
    if model is None:
        model = default_model
        if model is None:
            errors.append("field 'model': missing (no 'model' column and no default)")
    return model, "csv"
