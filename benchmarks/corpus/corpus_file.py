"""Corpus files: any code as JSON Lines or CSV, one provision per line (docs/corpus-format.md).

The format any source can be turned into: a state's administrative rules, court rules, a firm's policy
manual. Pure: bytes in, a ``ParsedSource`` out, or every bad line named with its line number and field.
"""

from __future__ import annotations

import csv
import io
import json
import re
import sqlite3
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from datetime import date
from typing import Any, BinaryIO

from benchmarks.corpus.base import (
    ParsedProvision,
    ParsedSource,
    ParseError,
    SourceHead,
    SourceItem,
    source_collect,
    squash,
)

PARSER_NAME = "corpus-file"
PARSER_VERSION = "1"
FORMATS = ("jsonl", "csv")
REQUIRED = ("citation", "heading", "text", "url", "as_of", "jurisdiction", "code")
HIERARCHY = ("title", "chapter", "part")
OPTIONAL = (*HIERARCHY, "chapter_title", "version", "number", "history", "notes", "repealed")
FIELDS = (*REQUIRED, *OPTIONAL)
# The id of a code names it in URLs and suite files.
CODE_ID = re.compile(r"^[a-z][a-z0-9-]{1,15}$")
# Pages beside /benchmarks/corpus/<code>/ (benchmarks/corpus/urls.py): a code of that name would be unreachable.
RESERVED_CODES = frozenset({"import", "provisions"})
MAX_PROBLEMS = 50
_LIMITS = {"citation": 120, "number": 80, "version": 100, "url": 500, "jurisdiction": 200, "code": 300,
           "title": 40, "chapter": 40, "part": 40, "chapter_title": 400}
_TRUE, _FALSE = ("true", "yes", "1"), ("false", "no", "0", "")


@dataclass(frozen=True)
class LineProblem:
    line: int  # 1-based line of the file (for CSV, the header is line 1)
    field: str
    message: str

    def __str__(self) -> str:
        return f"line {self.line}: {self.field}: {self.message}"


class CorpusFileInvalid(ParseError):
    """Every problem of a corpus file (up to ``MAX_PROBLEMS``); nothing of it is imported."""

    def __init__(self, problems: list[LineProblem], *, filename: str = ""):
        self.problems = problems
        head = f"corpus file {filename} rejected" if filename else "corpus file rejected"
        more = " (first problems only)" if len(problems) >= MAX_PROBLEMS else ""
        super().__init__(head + more + ":\n" + "\n".join(f"  - {p}" for p in problems))


def file_format(filename: str) -> str:
    """``csv`` for a .csv file, else ``jsonl``."""
    return "csv" if filename.lower().endswith(".csv") else "jsonl"


def _records(lines: Iterator[str], fmt: str, bad: Any) -> Iterator[tuple[int, Any]]:
    """The file's records one at a time, each with the line it starts on: never a list of them all (the parsed
    records of a large file were several times its size)."""
    if fmt == "csv":
        reader = csv.DictReader(lines)
        unknown = [name for name in reader.fieldnames or [] if name not in FIELDS]
        for name in unknown:
            bad(1, name, f"unknown column; the columns are {', '.join(FIELDS)}")
        missing = [name for name in REQUIRED if name not in (reader.fieldnames or [])]
        for name in missing:
            bad(1, name, "required column missing from the header")
        if unknown or missing:
            return
        # A quoted field may span lines: a row is named by the physical line it starts on.
        start = 2
        for row in reader:
            yield start, row
            start = reader.line_num + 1
        return
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        try:
            record = json.loads(line)
        except json.JSONDecodeError as exc:
            bad(number, "line", f"not a JSON object ({exc.msg} at column {exc.colno})")
            continue
        yield number, record


class _CitationIndex:
    """The line each (citation, version) was first read on, and how many provisions were given of each citation,
    kept in a private SQLite database on disk: in dicts they grew with the file (about 350 bytes a section, 21 MiB
    for 100 MB of JSON Lines), here they stay within the page cache (``CACHE_KIB``) whatever the size of the file.
    Close it when the reading ends."""

    CACHE_KIB = 256

    def __init__(self) -> None:
        # An empty name is a temporary database that SQLite deletes when it is closed; its pages beyond the cache
        # go to its file. One transaction, never committed, and no journal: nothing is kept, nothing to recover.
        self._db = sqlite3.connect("")
        self._db.execute(f"PRAGMA cache_size = -{self.CACHE_KIB}")
        self._db.execute("PRAGMA journal_mode = OFF")
        self._db.execute("CREATE TABLE first_line (citation BLOB, version BLOB, line INTEGER, "
                         "PRIMARY KEY (citation, version)) WITHOUT ROWID")
        self._db.execute("CREATE TABLE given (citation BLOB PRIMARY KEY, count INTEGER) WITHOUT ROWID")

    @staticmethod
    def _key(text: str) -> bytes:
        # Compared as bytes: a lone surrogate, which JSON may escape into a string, is a key like any other.
        return text.encode("utf-8", "surrogatepass")

    def first_line(self, citation: str, version: str, line: int) -> int:
        """The line ``(citation, version)`` was first read on: ``line`` itself the first time."""
        key = (self._key(citation), self._key(version))
        if self._db.execute("INSERT OR IGNORE INTO first_line VALUES (?, ?, ?)", (*key, line)).rowcount:
            return line
        found = self._db.execute("SELECT line FROM first_line WHERE citation = ? AND version = ?", key).fetchone()
        return int(found[0])

    def variant(self, citation: str) -> int:
        """1 for the first provision given of ``citation``, 2 for the second, ..."""
        key = self._key(citation)
        found = self._db.execute("SELECT count FROM given WHERE citation = ?", (key,)).fetchone()
        count = int(found[0]) + 1 if found else 1
        self._db.execute("INSERT OR REPLACE INTO given VALUES (?, ?)", (key, count))
        return count

    def close(self) -> None:
        self._db.close()


class _NulFound(Exception):
    def __init__(self, line: int):
        self.line = line


def _lines(source: BinaryIO, fmt: str) -> Iterator[str]:
    """The file's lines, decoded one at a time; a NUL character stops the reading (``_NulFound``)."""
    source.seek(0)
    # Lines of JSON Lines end at "\n" only, as str.split("\n") cut them (a "\r" before it is whitespace to JSON);
    # the csv module reads its own line ends.
    text = io.TextIOWrapper(source, encoding="utf-8-sig", newline="" if fmt == "csv" else "\n")
    try:
        number = 0
        for line in text:
            number += line.count("\n") or 1
            if "\x00" in line:
                raise _NulFound(number - line.count("\n") + line[: line.index("\x00")].count("\n"))
            yield line
    finally:
        if not source.closed:  # a reading abandoned after its file was closed has nothing to give back
            text.detach()  # the caller's file stays open


def _text(value: Any) -> str | None:
    if value is None:
        return ""
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return str(value)
    return value if isinstance(value, str) else None


def code_id_problem(code: str) -> str | None:
    """Why ``code`` cannot name a code (in URLs and suite files), or None."""
    if not CODE_ID.match(code):
        return f"{code!r} is not a code id (2-16 lowercase letters, digits or '-', a letter first)"
    if code in RESERVED_CODES:
        return f"{code!r} names a page of the corpus pages (/benchmarks/corpus/{code}/): choose another code id"
    return None


def parse(raw: bytes, *, code: str, filename: str = "") -> ParsedSource:
    """Parse a corpus file of code ``code`` (its id); raises CorpusFileInvalid naming each bad line and field."""
    return source_collect(read(io.BytesIO(raw), code=code, filename=filename))


def read(source: BinaryIO, *, code: str, filename: str = "") -> Iterator[SourceItem]:
    """A corpus file's head, then its provisions one line at a time. Every bad line is named (up to
    ``MAX_PROBLEMS``) in the CorpusFileInvalid raised at the end: a reader that stored the provisions given
    before it must drop them."""
    problems: list[LineProblem] = []

    def bad(line: int, field: str, message: str) -> None:
        if len(problems) < MAX_PROBLEMS:
            problems.append(LineProblem(line, field, message))

    def refuse() -> CorpusFileInvalid:
        return CorpusFileInvalid(problems, filename=filename)

    if (problem := code_id_problem(code)) is not None:
        bad(0, "code id", problem)
        raise refuse()
    given = 0
    head: SourceHead | None = None
    citations = _CitationIndex()
    first: dict[str, tuple[str, int]] = {}

    def provision(line: int, record: Any) -> ParsedProvision | None:
        """The line's provision, or None when it has problems (each told to ``bad``)."""
        if not isinstance(record, dict):
            bad(line, "line", "must be an object of fields")
            return None
        values: dict[str, str] = {}
        for name, value in record.items():
            if name not in FIELDS:
                bad(line, str(name), f"unknown field; the fields are {', '.join(FIELDS)}")
                continue
            as_text = _text(value) if name != "repealed" else str(value).lower() if value is not None else ""
            if as_text is None:
                bad(line, name, f"must be a string, got {type(value).__name__}")
                continue
            values[name] = as_text.strip() if name in ("text", "notes") else squash(as_text)
        for name in REQUIRED:
            if name in values and not values[name]:
                bad(line, name, "required (a non-empty string)")
            elif name not in values and name not in {p.field for p in problems if p.line == line}:
                bad(line, name, "required")
        for name, limit in _LIMITS.items():
            if len(values.get(name, "")) > limit:
                bad(line, name, f"longer than {limit} characters")
        url = values.get("url", "")
        if url and not re.match(r"^https?://\S+$", url):
            bad(line, "url", f"must be an http(s) URL, got {url[:60]!r}")
        as_of = values.get("as_of", "")
        if as_of:
            try:
                date.fromisoformat(as_of)
            except ValueError:
                bad(line, "as_of", f"must be a date written YYYY-MM-DD, got {as_of[:30]!r}")
        repealed = values.get("repealed", "")
        if repealed not in _TRUE + _FALSE:
            bad(line, "repealed", f"must be true or false, got {repealed[:20]!r}")
        for name in ("jurisdiction", "code"):
            value = values.get(name, "")
            if value:
                expected = first.setdefault(name, (value, line))
                if expected[0] != value:
                    bad(line, name, f"{value!r} differs from {expected[0]!r} (line {expected[1]}): "
                                    "one file holds one code")
        citation, version = values.get("citation", ""), values.get("version", "")
        if citation:
            earlier = citations.first_line(citation, version, line)
            if earlier != line:
                bad(line, "citation", f"{citation} (version {version!r}) is already on line {earlier}; give the "
                                      "second version its own 'version' label")
        if any(p.line == line for p in problems):
            return None
        hierarchy = tuple((level, values[level]) for level in HIERARCHY if values.get(level))
        return ParsedProvision(
            citation=citation, number=values.get("number") or citation.rsplit(" ", 1)[-1].lstrip("§"),
            chapter="/".join(v for _, v in hierarchy)[:40], chapter_title=values.get("chapter_title", ""),
            heading=values["heading"], body=values["text"], history=values.get("history", ""),
            notes=values.get("notes", ""), repealed=repealed in _TRUE, variant=citations.variant(citation),
            official_url=url, as_of=as_of, version_label=version, hierarchy=hierarchy,
        )

    fmt = file_format(filename)
    try:
        for line, record in _records(_lines(source, fmt), fmt, bad):
            found = provision(line, record)
            if found is None:
                continue
            if head is None:
                head = SourceHead(corpus=code, parser_name=PARSER_NAME, parser_version=PARSER_VERSION,
                                  title=f"{first['code'][0]} ({filename.rsplit('/', 1)[-1] or code})"[:300],
                                  official_url=found.official_url, code_name=first["code"][0],
                                  jurisdiction=first["jurisdiction"][0])
                yield head
            given += 1
            yield found
    except UnicodeDecodeError as exc:
        problems.clear()
        bad(0, "file", f"not UTF-8 ({exc})")
        raise refuse() from exc
    except _NulFound as exc:
        problems.clear()
        bad(exc.line, "line", "contains a NUL character (0x00); not a text file")
        raise refuse() from None
    finally:
        citations.close()
    if not given and not problems:
        bad(0, "file", "no provisions (one JSON object per line, or a CSV header and rows)")
    if problems:
        raise refuse()


# --------------------------------------------------------------------------- citations of the code


def _citations(source: ParsedSource | Iterable[tuple[str, str]]) -> Iterable[tuple[str, str]]:
    """(citation, number) of each provision in order: of a parsed source, or as given (a stored snapshot's,
    read back in batches)."""
    if isinstance(source, ParsedSource):
        return ((p.citation, p.number) for p in source.provisions)
    return source


def citation_pattern_derive(source: ParsedSource | Iterable[tuple[str, str]]) -> tuple[str, str]:
    """A citation pattern and form read off the file's own citations, when they share one prefix before the
    number ("12 CFR § 1026.1", "12 CFR § 1026.2" -> "12 CFR § {number}"); ("", "") when they do not."""
    prefix = None
    for citation, number in _citations(source):
        if not number:
            continue
        if not citation.endswith(number):
            return "", ""
        if prefix is None:
            prefix = citation[: len(citation) - len(number)]
        elif citation[: len(citation) - len(number)] != prefix:
            return "", ""
    if prefix is None:
        return "", ""
    words = re.findall(r"[A-Za-z0-9]+", prefix)
    if not words:
        return "", ""
    # Lawyers write the prefix with or without dots, spaces and section marks: "12 C.F.R. §", "12 CFR".
    loose = r"(?<![\w.])" + r"[\s.]*".join(r"\.?\s*".join(re.escape(ch) for ch in w) if w.isalpha() and w.isupper()
                                           else re.escape(w) for w in words)
    pattern = loose + r"\.?\s*(?:§+\s*)?(?P<number>[0-9A-Za-z][\w.\-]*?)(?![\w]|[.\-]\w)"
    return pattern, prefix + "{number}"


def citation_pattern_check(source: ParsedSource | Iterable[tuple[str, str]], *, pattern: str, form: str,
                           filename: str = "") -> list[LineProblem]:
    """The problems of a citation pattern: it must compile, name a ``number`` group, and read each citation of
    the file back as itself (else a suite could not name the sections it cites)."""
    try:
        compiled = re.compile(pattern, re.I)
    except re.error as exc:
        return [LineProblem(0, "citation pattern", f"not a regular expression ({exc})")]
    if "number" not in compiled.groupindex:
        return [LineProblem(0, "citation pattern", "needs a named group (?P<number>...)")]
    if "{number}" not in form:
        return [LineProblem(0, "citation form", "needs {number} where the section number goes")]
    problems = []
    for position, (citation, _) in enumerate(_citations(source)):
        match = compiled.search(citation)
        read = form.replace("{number}", match.group("number")) if match else None
        if read != citation:
            # Line numbers as in the file when it has no blank lines (a CSV file's header is line 1).
            line = position + (2 if file_format(filename) == "csv" else 1)
            problems.append(LineProblem(line, "citation",
                                        f"the citation pattern reads {citation!r} as {read!r}"))
            if len(problems) >= MAX_PROBLEMS:
                break
    return problems
