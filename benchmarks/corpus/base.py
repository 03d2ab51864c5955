"""What every statute parser returns: plain frozen dataclasses, no Django.

A parser is a pure function of the source bytes (plus, for HRS, its index
bytes). Its name and version are stored on each snapshot, so a provision can
always be traced to the exact code that produced it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

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


class ParseError(ValueError):
    """The bytes are not the format the parser reads; the message says where."""
