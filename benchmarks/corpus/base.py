"""What every statute parser returns: plain frozen dataclasses, no Django.

A parser is a pure function of the source bytes (plus, for HRS, its index
bytes). Its name and version are stored on each snapshot, so a provision can
always be traced to the exact code that produced it.

Each parser also reads a file section by section (``read``): a stream of a ``SourceHead`` and then the
provisions, one at a time, so an import holds one section, not the file. ``parse`` is that stream collected.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator
from dataclasses import asdict, dataclass, field
from typing import BinaryIO

_SPACES = re.compile(r"[ \t\r\n\u00a0\u2002\u2003\u2009\u202f]+")


def squash(text: str) -> str:
    """Collapse the line wrapping and typographic spaces of official pages into single spaces."""
    return _SPACES.sub(" ", text).strip()


@dataclass(frozen=True)
class ParsedProvision:
    citation: str  # in the corpus's own form: "NRS 432B.220", "HRS § 521-44", "9 U.S.C. § 2"
    number: str  # the bare section number: "432B.220", "521-44", "2"
    chapter: str  # "432B", "521", "9/1" (title/chapter for the U.S. Code)
    chapter_title: str
    heading: str
    body: str
    history: str = ""
    notes: str = ""
    repealed: bool = False
    # Official pages sometimes print two versions of one section (effective
    # until / effective on a date): both are kept, numbered 1, 2, ...
    variant: int = 1
    official_url: str = ""
    # Given by corpus files only (docs/corpus-format.md): an ISO date, a label such as "effective 2025-07-01",
    # and the divisions above the section, outermost first (("title", "12"), ("part", "1026")).
    as_of: str = ""
    version_label: str = ""
    hierarchy: tuple[tuple[str, str], ...] = ()


@dataclass(frozen=True)
class ParsedSource:
    corpus: str  # "nrs", "hrs", "usc", or the id of a code imported from a corpus file
    parser_name: str
    parser_version: str
    title: str
    official_url: str
    provisions: tuple[ParsedProvision, ...] = field(default_factory=tuple)
    # A corpus file names its code and jurisdiction on every line; the official parsers know their own.
    code_name: str = ""
    jurisdiction: str = ""


@dataclass(frozen=True)
class SourceHead:
    """What a ``ParsedSource`` says besides its provisions, known before (or with) the first of them."""

    corpus: str
    parser_name: str
    parser_version: str
    title: str
    official_url: str
    code_name: str = ""
    jurisdiction: str = ""


# A parser's stream: a head, then provisions. A second head means "forget the provisions given so far, they
# start again" (the eCFR reader falls back to the whole tree when a file's header turns out not to come first).
SourceItem = SourceHead | ParsedProvision


def source_collect(items: Iterable[SourceItem]) -> ParsedSource:
    """A parser's stream held whole, as ``parse`` returns it."""
    head: SourceHead | None = None
    provisions: list[ParsedProvision] = []
    for item in items:
        if isinstance(item, SourceHead):
            head, provisions = item, []
        else:
            provisions.append(item)
    if head is None:
        raise ParseError("the source gave no head")
    return ParsedSource(**asdict(head), provisions=tuple(provisions))


def source_items(source: ParsedSource) -> Iterator[SourceItem]:
    """A source already held whole, as a stream (a parser or a test that builds a ``ParsedSource``)."""
    fields = asdict(source)
    del fields["provisions"]
    yield SourceHead(**fields)
    yield from source.provisions


_CHUNK = 1 << 20


def declares_entities(file: BinaryIO, *, doctype_within: int = 4096) -> bool:
    """Whether an XML file declares a DOCTYPE in its first bytes or an ENTITY anywhere, read in chunks (the
    file is left at its start)."""
    file.seek(0)
    tail, offset = b"", 0
    while chunk := file.read(_CHUNK):
        window = tail + chunk
        if b"<!ENTITY" in window or (offset < doctype_within and b"<!DOCTYPE" in window[:doctype_within]):
            file.seek(0)
            return True
        offset += len(chunk)
        tail = window[-16:]
    file.seek(0)
    return False


class ParseError(ValueError):
    """The bytes are not the format the parser reads; the message says where."""
