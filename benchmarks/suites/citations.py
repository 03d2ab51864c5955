"""Citation parser for exact-citation controls: text in, canonical citation out, no model call.

Accepts the forms a researcher types ("NRS 432B.220", "Nev. Rev. Stat. § 432B.220",
"HRS § 521-44", "Haw. Rev. Stat. 521-44", "9 U.S.C. § 2", "9 USC 2") and returns
the corpus's own form as stored on ``Provision.citation``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass


@dataclass(frozen=True)
class ParsedCitation:
    corpus: str
    number: str
    citation: str


_NRS = re.compile(r"\b(?:NRS|Nev\.?\s*Rev\.?\s*Stat\.?)\s*(?:§+\s*)?(\d{1,3}[A-Z]{0,2}\.\d{3}[0-9]*[A-Za-z]?)", re.I)
_HRS = re.compile(r"\b(?:HRS|Haw\.?\s*Rev\.?\s*Stat\.?)\s*(?:§+\s*)?(\d{1,3}[A-Z]{0,2}-\d+(?:\.\d+)?[A-Za-z]?)", re.I)
_USC = re.compile(r"\b(\d{1,2})\s*U\.?\s*S\.?\s*C\.?(?:\s*A\.?)?\s*(?:§+\s*)?(\d+[a-z]?(?:-\d+)?)", re.I)


def citation_parse(text: str) -> ParsedCitation | None:
    """The first statute citation in ``text``, normalised; None if there is none."""
    found = [(m.start(), "nrs", m) for m in [_NRS.search(text)] if m]
    found += [(m.start(), "hrs", m) for m in [_HRS.search(text)] if m]
    found += [(m.start(), "usc", m) for m in [_USC.search(text)] if m]
    if not found:
        return None
    _, corpus, match = min(found, key=lambda item: item[0])
    if corpus == "nrs":
        number = match.group(1).upper()
        return ParsedCitation("nrs", number, f"NRS {number}")
    if corpus == "hrs":
        number = match.group(1).upper()
        return ParsedCitation("hrs", number, f"HRS § {number}")
    title, number = match.group(1), match.group(2).lower()
    return ParsedCitation("usc", f"{title}/{number}", f"{title} U.S.C. § {number}")
