"""Where a quoted text sits in its contract: the explorer's highlight and the audit's excerpt use this one search.

A model's quote is meant to be verbatim but often differs from the contract in
letter case or white space (a line break where the contract has a space, two
spaces where it has one). The search tries, in order, and reports which one
found it:

- ``exact``: the quote (stripped) as it is;
- ``case-insensitive``: the same characters, ignoring case;
- ``whitespace-normalised``: its words in order, ignoring case, with any run of
  white space between them.

Offsets are Python string offsets (code points); ``as_utf16`` converts them to
the UTF-16 offsets a browser counts.
"""

from __future__ import annotations

import re
from dataclasses import dataclass


@dataclass(frozen=True)
class Located:
    start: int
    end: int
    how: str  # "exact", "case-insensitive", "whitespace-normalised" (or "offsets" for a stored CUAD span)


def locate(text: str, quote: str) -> Located | None:
    """The first place the quote sits in ``text``, or None when it is found nowhere (or is blank)."""
    q = quote.strip()
    if not q:
        return None
    at = text.find(q)
    if at >= 0:
        return Located(at, at + len(q), "exact")
    # A pattern rather than ``text.lower().find``: lowercasing may change a string's length, and offsets must
    # index the original text.
    m = re.search(re.escape(q), text, flags=re.IGNORECASE)
    if m is not None:
        return Located(m.start(), m.end(), "case-insensitive")
    m = re.search(r"\s+".join(re.escape(p) for p in q.split()), text, flags=re.IGNORECASE)
    if m is not None:
        return Located(m.start(), m.end(), "whitespace-normalised")
    return None


def utf16_offset(text: str, offset: int) -> int:
    """A code-point offset of ``text`` as a UTF-16 offset (characters beyond the BMP count twice)."""
    return offset + sum(1 for ch in text[:offset] if ord(ch) > 0xFFFF)


def as_utf16(text: str, located: Located) -> Located:
    """The same place in UTF-16 offsets, as the browser counts them."""
    if len(text) == len(text.encode("utf-16-le")) // 2:  # nothing beyond the BMP: offsets are the same
        return located
    return Located(utf16_offset(text, located.start), utf16_offset(text, located.end), located.how)
