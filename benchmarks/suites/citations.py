"""Citation parser for exact-citation controls and suite targets: text in, canonical citation out, no model call.

Accepts the forms lawyers write and returns the corpus's own form as stored on
``Provision.citation``:

- NRS: ``NRS 432B.220``, ``N.R.S. 432B.220``, ``NRS §432B.220``, ``Nev. Rev. Stat. § 432B.220``,
  ``Nev. Rev. Stat. Ann. § 432B.220`` -> ``NRS 432B.220``
- HRS: ``HRS § 521-44``, ``H.R.S. 521-44``, ``Haw. Rev. Stat. § 521-44``, ``Haw. Rev. Stat. Ann. § 521-44``
  -> ``HRS § 521-44``
- USC: ``9 U.S.C. § 2``, ``9 USC 2``, ``9 U.S.C.A. § 2`` -> ``9 U.S.C. § 2``

A subsection suffix (``432B.220(4)(a)``, ``521-44(a)``, ``§ 2(b)``) resolves to the section;
the suffix is kept on ``ParsedCitation.subsection``. With ``default_corpus`` ("nrs" or "hrs"),
a bare section number (``432B.220``, ``§ 432B.220``, ``521-44``) is read as a section of that
corpus when the text names no corpus.

A code imported from a corpus file (docs/corpus-format.md) brings its own ``CodePattern``: a regular
expression with a named group ``number`` and the form its citations are stored in (``12 CFR § {number}``).
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass


@dataclass(frozen=True)
class ParsedCitation:
    corpus: str
    number: str
    citation: str
    subsection: str = ""  # "(4)(a)" when the text cites below the section


@dataclass(frozen=True)
class CodePattern:
    """How the citations of a code imported from a corpus file are found in a text and stored."""

    code: str
    pattern: str  # with a named group ``number`` (and optionally ``sub``)
    form: str  # "12 CFR § {number}"

    def compiled(self) -> re.Pattern[str]:
        return _compiled(self.pattern)


@functools.lru_cache(maxsize=64)
def _compiled(pattern: str) -> re.Pattern[str]:
    return re.compile(pattern + (_SUBSECTION if "(?P<sub>" not in pattern else ""), re.I)


_SECTION_MARK = r"\s*(?:§+\s*)?"
_SUBSECTION = r"(?P<sub>(?:\s?\([0-9A-Za-z]{1,4}\))*)"
# A number ends where no further digit, letter or dotted digit follows ("432B.2201" is not "432B.220").
_END = r"(?![0-9A-Za-z]|\.\d)"
_NRS_NUMBER = r"(?P<number>\d{1,3}[A-Z]{0,2}\.\d{3}\d*[A-Z]?)" + _END
_HRS_NUMBER = r"(?P<number>\d{1,3}[A-Z]{0,2}-\d+(?:\.\d+)?[A-Z]?)" + _END

_NRS = re.compile(
    r"(?<![\w.])(?:N\.?\s*R\.?\s*S\.?|Nev\.?\s*Rev\.?\s*Stat\.?(?:\s*Ann\.?)?)" + _SECTION_MARK + _NRS_NUMBER
    + _SUBSECTION, re.I)
_HRS = re.compile(
    r"(?<![\w.])(?:H\.?\s*R\.?\s*S\.?|Haw\.?\s*Rev\.?\s*Stat\.?(?:\s*Ann\.?)?)" + _SECTION_MARK + _HRS_NUMBER
    + _SUBSECTION, re.I)
_USC = re.compile(
    r"(?<![\w.])(?P<title>\d{1,2})\s*U\.?\s*S\.?\s*C\.?(?:\s*[AS]\.?)?" + _SECTION_MARK
    + r"(?P<number>\d+[a-z]{0,2}(?:-\d+)?)(?![0-9A-Za-z])" + _SUBSECTION, re.I)
_BARE = {
    "nrs": re.compile(r"(?<![\w.\-])(?:§+\s*)?" + _NRS_NUMBER + _SUBSECTION, re.I),
    "hrs": re.compile(r"(?<![\w.\-])(?:§+\s*)?" + _HRS_NUMBER + _SUBSECTION, re.I),
}


def _parsed(corpus: str, match: re.Match[str], code: CodePattern | None = None) -> ParsedCitation:
    sub = re.sub(r"\s+", "", match.group("sub") or "")
    if code is not None and corpus == code.code:
        number = match.group("number")
        return ParsedCitation(corpus, number, code.form.replace("{number}", number), sub)
    if corpus == "usc":
        title, number = match.group("title"), match.group("number").lower()
        return ParsedCitation("usc", f"{title}/{number}", f"{title} U.S.C. § {number}", sub)
    number = match.group("number").upper()
    citation = f"NRS {number}" if corpus == "nrs" else f"HRS § {number}"
    return ParsedCitation(corpus, number, citation, sub)


def citation_parse(text: str, *, default_corpus: str = "", code: CodePattern | None = None) -> ParsedCitation | None:
    """The first statute citation in ``text``, normalised to the section; None if there is none.

    ``default_corpus`` ("nrs" or "hrs"; others ignored) reads a bare section number as a
    section of that corpus, but only when no corpus-named citation is in the text. ``code`` also reads the
    citations of a code imported from a corpus file.
    """
    patterns = [("nrs", _NRS), ("hrs", _HRS), ("usc", _USC)]
    if code is not None and code.pattern:
        patterns.insert(0, (code.code, code.compiled()))  # first: it wins a tie for the same position
    found = [(m.start(), corpus, m) for corpus, pattern in patterns if (m := pattern.search(text))]
    if not found:
        bare = _BARE.get(default_corpus)
        match = bare.search(text) if bare is not None else None
        return _parsed(default_corpus, match) if match else None
    _, corpus, match = min(found, key=lambda item: item[0])
    return _parsed(corpus, match, code)
