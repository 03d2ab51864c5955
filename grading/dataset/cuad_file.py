"""Read the official CUAD v1 file (SQuAD 2.0 layout) from CUAD_v1.json or the CUAD_v1.zip holding it.

Plain Python: returns dataclasses and the list of span mismatches; the loader
service decides what to store.
"""

from __future__ import annotations

import csv
import hashlib
import json
import zipfile
from dataclasses import dataclass, field
from pathlib import Path

from reviewapp.core.records.storable import contains_nul


class CuadFileError(ValueError):
    """The file is not a CUAD v1 JSON (or a zip holding one); the message says where."""


@dataclass(frozen=True)
class SpanRecord:
    qa_id: str
    category: str
    answer_index: int
    start: int
    text: str


@dataclass(frozen=True)
class ContractRecord:
    title: str
    text: str
    spans: tuple[SpanRecord, ...]


@dataclass(frozen=True)
class CategoryInfo:
    name: str
    description: str = ""
    answer_format: str = ""
    group: str = ""


@dataclass
class CuadFile:
    sha256: str
    source_name: str
    version: str
    contracts: list[ContractRecord]
    categories: list[CategoryInfo]  # in first-seen question order
    mismatches: list[str] = field(default_factory=list)  # "<qa id> answer <i>: ..." per bad span

    @property
    def n_spans(self) -> int:
        return sum(len(c.spans) for c in self.contracts)


def read_source(path: Path) -> tuple[bytes, str]:
    """The CUAD JSON bytes (from the zip when given one) and a name for messages."""
    if not path.exists():
        raise CuadFileError(f"{path}: no such file")
    if zipfile.is_zipfile(path):
        with zipfile.ZipFile(path) as archive:
            members = [n for n in archive.namelist() if n.rsplit("/", 1)[-1] == "CUAD_v1.json"]
            if not members:
                raise CuadFileError(f"{path}: the zip holds no CUAD_v1.json")
            return archive.read(members[0]), f"{path.name}:{members[0]}"
    return path.read_bytes(), path.name


def _strip_prefix(value: str, prefix: str) -> str:
    value = (value or "").strip()
    return value[len(prefix) :].strip() if value.startswith(prefix) else value


def read_category_csv(path: Path) -> dict[str, CategoryInfo]:
    """category_descriptions.csv (UTF-8 with BOM; values prefixed "Category: ", "Description: ", ...)."""
    out: dict[str, CategoryInfo] = {}
    with path.open(encoding="utf-8-sig", newline="") as handle:
        for row in csv.reader(handle):
            if len(row) < 4 or not row[0].startswith("Category: "):
                continue
            name = _strip_prefix(row[0], "Category: ")
            group = _strip_prefix(row[3], "Group: ")
            out[name] = CategoryInfo(
                name=name,
                description=_strip_prefix(row[1], "Description: "),
                answer_format=_strip_prefix(row[2], "Answer Format: "),
                group="" if group == "-" else group,
            )
    return out



def _question_details(question: str) -> str:
    marker = "Details:"
    return question.split(marker, 1)[1].strip() if marker in question else ""


def read_cuad(path: Path | str, *, source: tuple[bytes, str] | None = None, category_csv: bool = True) -> CuadFile:
    """Parse and check a CUAD file; every span is compared with its contract text at its offset.

    ``source`` is the file's bytes and name when the caller has already read them (see ``read_source``).
    ``category_csv`` False: take descriptions from the questions only, never from a category_descriptions.csv
    beside ``path`` (bytes that are not a file on disk have no folder).
    """
    path = Path(path)
    raw, source_name = source or read_source(path)
    try:
        doc = json.loads(raw)
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise CuadFileError(f"{source_name}: not valid JSON ({exc})") from exc
    if not isinstance(doc, dict) or not isinstance(doc.get("data"), list):
        raise CuadFileError(f"{source_name}: expected an object with a 'data' list (SQuAD 2.0 layout)")

    # JSON can carry a NUL only as the escape \u0000 (json.loads refuses raw control characters; a UTF-16 or
    # UTF-32 file has NUL bytes and takes the walk): without either in the bytes, no entry needs walking.
    may_hold_nul = b"\\u0000" in raw or b"\x00" in raw
    descriptions: dict[str, CategoryInfo] = {}
    csv_path = path.parent / "category_descriptions.csv"
    if category_csv and csv_path.is_file():
        descriptions = read_category_csv(csv_path)

    contracts: list[ContractRecord] = []
    categories: dict[str, CategoryInfo] = {}
    mismatches: list[str] = []
    titles: set[str] = set()
    for d_index, entry in enumerate(doc["data"]):
        where = f"data[{d_index}]"
        title = entry.get("title") if isinstance(entry, dict) else None
        if not isinstance(title, str) or not title:
            raise CuadFileError(f"{source_name}: {where}.title missing or not a string")
        if may_hold_nul and contains_nul(entry):  # PostgreSQL cannot store a NUL in a text column
            raise CuadFileError(f"{source_name}: {where} ({title[:80]!r}) contains a NUL character (\\u0000)")
        if len(title) > 255:  # the width of Contract.title
            raise CuadFileError(f"{source_name}: {where}.title is longer than 255 characters")
        if title in titles:
            raise CuadFileError(f"{source_name}: {where}.title {title!r} appears twice")
        titles.add(title)
        paragraphs = entry.get("paragraphs")
        if not isinstance(paragraphs, list) or len(paragraphs) != 1:
            raise CuadFileError(f"{source_name}: {where} ({title}): expected exactly one paragraph (the contract)")
        paragraph = paragraphs[0]
        context = paragraph.get("context") if isinstance(paragraph, dict) else None
        if not isinstance(context, str):
            raise CuadFileError(f"{source_name}: {where} ({title}): context missing")
        qas = paragraph.get("qas") or []
        if not isinstance(qas, list):
            raise CuadFileError(f"{source_name}: {where}.paragraphs[0].qas is not a list")
        spans: list[SpanRecord] = []
        for q_index, qa in enumerate(qas):
            if not isinstance(qa, dict):
                raise CuadFileError(f"{source_name}: {where}.qas[{q_index}] is not an object")
            qa_id = qa.get("id", "")
            if not isinstance(qa_id, str) or "__" not in qa_id:
                raise CuadFileError(f"{source_name}: {where}.qas[{q_index}].id {qa_id!r} is not '<title>__<Category>'")
            category = qa_id.rsplit("__", 1)[1]
            if len(qa_id) > 400 or len(category) > 100:  # the widths of Span.qa_id and Category.name
                raise CuadFileError(f"{source_name}: {where}.qas[{q_index}].id is too long (id at most 400 "
                                    "characters, category at most 100)")
            if category not in categories:
                base = descriptions.get(category)
                question = qa.get("question", "")
                categories[category] = base or CategoryInfo(
                    name=category, description=_question_details(question if isinstance(question, str) else "")
                )
            answers = qa.get("answers") or []
            if not isinstance(answers, list):
                raise CuadFileError(f"{source_name}: {where}.qas[{q_index}].answers ({qa_id}) is not a list")
            for a_index, answer in enumerate(answers):
                if not isinstance(answer, dict):
                    mismatches.append(f"{qa_id} answer {a_index}: not an object")
                    continue
                text, start = answer.get("text"), answer.get("answer_start")
                if not isinstance(text, str) or not isinstance(start, int) or isinstance(start, bool) or start < 0:
                    mismatches.append(f"{qa_id} answer {a_index}: text or answer_start missing or malformed")
                    continue
                if context[start : start + len(text)] != text:
                    found = context[start : start + len(text)]
                    mismatches.append(
                        f"{qa_id} answer {a_index}: text at offset {start} is {found[:40]!r}, span says {text[:40]!r}"
                    )
                    continue
                spans.append(SpanRecord(qa_id, category, a_index, start, text))
        contracts.append(ContractRecord(title, context, tuple(spans)))

    version = doc.get("version", "")
    if not isinstance(version, (str, int, float)) or len(str(version)) > 64:
        raise CuadFileError(f"{source_name}: version must be a short string (at most 64 characters)")
    return CuadFile(
        sha256=hashlib.sha256(raw).hexdigest(),
        source_name=source_name,
        version=str(version),
        contracts=contracts,
        categories=list(categories.values()),
        mismatches=mismatches,
    )
