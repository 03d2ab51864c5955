"""Hawaii Revised Statutes volume files (capitol.hawaii.gov crawl, see data README).

A volume file maps a section id to ``{"t": full text with history, "u": official URL}``;
``index-meta.json`` carries the chapter list and each section's number and heading.
The text begins with any part/subpart headings, then ``§521-44  Heading.  body
[L 1972, c 132, ...]``, then editorial notes ("Case Notes", "Cross References", ...)
and the page's navigation ("Previous / Vol12_... / Next"). The body, the history
bracket and the notes are separated here.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from typing import BinaryIO

from benchmarks.corpus.base import ParsedProvision, ParsedSource, ParseError, SourceItem, source_items, squash

PARSER_NAME = "hrs-json"
PARSER_VERSION = "3"
OFFICIAL_BASE = "https://www.capitol.hawaii.gov/hrscurrent/"

_NAV = re.compile(r"\n\s*Previous\s*\n\s*\S+\s*\n\s*Next\s*$")
_NOTE_HEADERS = (
    "Note", "Notes", "Case Notes", "Cross References", "Revision Note", "Rules of Court",
    "Attorney General Opinions", "Law Journals and Reviews", "COMMENTARY", "Commentary",
    "Official Comment", "Official Comments", "Hawaii Legislative Reporter's Comment",
    "Cross Reference", "Federal Cases", "Other References",
)
_NOTES_START = re.compile(r"\n\n(?:" + "|".join(re.escape(h) for h in _NOTE_HEADERS) + r")[^\n]{0,60}\n\n")
# The history bracket closes the body: "[L 1972, c 132, pt of §1; am L 2015, c 29, §3]".
# A few index headings keep the section mark of the printed page ("[§514B-191] Retaliation prohibited.").
_MARK = re.compile(r"^\[?§{1,2}\s*[\w.-]+\]\s*")
_HISTORY = re.compile(r"\[(?:[^\[\]]*?\b(?:L|RL|CC|PC|HRS|Sp|gen ch|am|ren|Act)\b[^\[\]]*?)\]\s*$", re.S)


def _index(meta_raw: bytes) -> dict[str, tuple[dict, list]]:
    try:
        meta = json.loads(meta_raw)
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise ParseError(f"index-meta.json: not JSON ({exc})") from exc
    if not isinstance(meta, dict) or not isinstance(meta.get("chapters"), list):
        raise ParseError("index-meta.json: no 'chapters' list")
    by_id: dict[str, tuple[dict, list]] = {}
    for c_index, chapter in enumerate(meta["chapters"]):
        where = f"index-meta.json: chapters[{c_index}]"
        if not isinstance(chapter, dict) or not isinstance(chapter.get("num"), (str, int)):
            raise ParseError(f"{where}: expected an object with 'num' and a 'secs' list")
        secs = chapter.get("secs", [])
        if not isinstance(secs, list):
            raise ParseError(f"{where}.secs: expected a list")
        for s_index, sec in enumerate(secs):
            if not isinstance(sec, list) or len(sec) < 3 or not all(isinstance(v, (str, int)) for v in sec[:3]):
                raise ParseError(f"{where}.secs[{s_index}]: expected [id, number, heading]")
            by_id[str(sec[0])] = (chapter, sec)
    return by_id


# A section number as the pages print it ("521-44", "346-53.3", "514B-191"); a mark names one section or a
# list or range of them ("§§350-6 and 350-7", "§§346-51 to 346-62", "§§486-25, 26, 26.5", "§§480-31 to 37").
# A mark opens a section only at the start of the text or of an indented line: notes above a section cite
# numbers at the start of their wrapped, unindented lines.
_NUMBER = r"\d+[A-Z]*-\d+(?:\.\d+)*[A-Z]*"
_SHORT = r"(?:" + _NUMBER + r"|\d+(?:\.\d+)*[A-Z]*)"
_MARK_AT = re.compile(
    r"(?:\A|(?<=\n)[ \t]+)\[?(§{1,2})\s*(" + _NUMBER + r"(?:(?:,\s*(?:and\s+)?|\s+(?:and|to)\s+)" + _SHORT
    + r")*)\]?"
)
# An old section printed above the current one under the same number ("§478-5  [OLD] REPEALED.  L 1986, ...").
_REPEALED = re.compile(r"(?:\[OLD\]\s*)?REPEALED\b")
_OLD = re.compile(r"\s*\[OLD\]")
# A heading ends at its first period followed by a line break, two spaces or the end; no heading of the index
# has a period followed by a space inside it.
_OWN_HEADING = re.compile(r"\s*((?:[^\n]|\n(?!\n))+?\.\]?)(?=[ \t]{2,}|\n|\s*\Z)")


def _mark_for(text: str, number: str) -> re.Match[str] | None:
    """The mark that opens this section's current text.

    A page may open with an older stub under the same number or a range that includes it
    ("§§346-51 to 346-62  [OLD] REPEALED." above "§346-51  Public assistance ..."): the current text is the
    first mark naming the number that is not an [OLD] stub, else the first mark naming it, else the first mark.
    """
    marks = list(_MARK_AT.finditer(text))
    naming = [m for m in marks if _names(m.group(2), number)]
    current = [m for m in naming if not _OLD.match(text, m.end())]
    if current:
        return current[0]
    if naming:
        return naming[0]
    return marks[0] if marks else None


def _sort_key(number: str) -> tuple[tuple[int, str], ...]:
    return tuple((int(p), "") if p.isdigit() else (0, p) for p in re.findall(r"\d+|[A-Z]+", number))


def _names(names: str, number: str) -> bool:
    """Whether a mark's list of numbers names this one, a range naming what lies between its ends."""
    chapter = names.split("-", 1)[0]
    parts = re.split(r"(,\s*(?:and\s+)?|\s+(?:and|to)\s+)", names)
    full = [p if "-" in p else f"{chapter}-{p}" for p in parts[::2]]
    if number in full:
        return True
    return any(
        joint.strip() == "to" and _sort_key(low) <= _sort_key(number) <= _sort_key(high)
        for low, joint, high in zip(full[:-1], parts[1::2], full[1:], strict=True)
    )


def _split(text: str, number: str, heading: str) -> tuple[str, str, str, str]:
    """(heading, body, history, notes) of one section's text."""
    # The pages print some section numbers with a non-breaking hyphen (U+2011), a typographic variant of
    # the hyphen like U+00A0 of the space: read as the hyphen everywhere, so "§603‑21.5" is found as typed.
    text = _NAV.sub("", text.replace("\r\n", "\n").replace("\u2011", "-")).strip()
    # Start at the section's mark; what precedes it is part/subpart headings, notes or an older stub.
    mark = _mark_for(text, number)
    rest = text[mark.end():] if mark else text
    rest = rest.lstrip()
    # The heading is the text's own. It ends at a period that a line break or two spaces follow, or earlier
    # where the index's copy of it ends at a period followed by a new sentence ("Review hearings. Except
    # for ..."): some pages put one space there. An index heading that runs on into the text ("Funds.] The
    # State shall ..."), is cut short ("... provider…") or carries a part title or a note is no guide.
    own = _OWN_HEADING.match(rest)
    end = own.end() if own else None
    words = heading.removesuffix("…").split()
    hint = re.match(r"\s*\[?" + r"\s+".join(re.escape(w) for w in words) + r"\]?\.?\]?", rest) if words else None
    if hint and rest[hint.end() - 1] in ".]" and (end is None or hint.end() < end) and (
            re.match(r"\s+[^a-z\s]|\s*\Z", rest[hint.end():])):
        end = hint.end()
    if end is not None:
        heading = squash(rest[:end])
        # "[§349-15  Heading.]" and "§353-1  [Heading.]": the bracket of an editor's addition is not the heading's.
        if heading.endswith("]") and heading.count("[") == heading.count("]") - 1:
            heading = heading[:-1]
        elif heading.startswith("[") and heading.endswith("]") and heading.count("[") == 1:
            heading = heading[1:-1]
        rest = rest[end:]
    notes_at = _NOTES_START.search(rest)
    notes = ""
    if notes_at:
        notes = rest[notes_at.start():].strip()
        rest = rest[: notes_at.start()]
    history = ""
    found = _HISTORY.search(rest)
    if found:
        history = squash(found.group(0))
        rest = rest[: found.start()]
    paragraphs = [squash(p) for p in re.split(r"\n\s*\n", rest)]
    return heading, "\n".join(p for p in paragraphs if p), history, notes


def parse(raw: bytes, *, meta_raw: bytes, filename: str = "") -> ParsedSource:
    """Parse one volume file, taking numbers and headings from index-meta.json."""
    try:
        volume = json.loads(raw)
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise ParseError(f"{filename or 'HRS volume'}: not JSON ({exc})") from exc
    if not isinstance(volume, dict):
        raise ParseError(f"{filename or 'HRS volume'}: expected an object of sections")
    index = _index(meta_raw)
    provisions = []
    vol_name = ""
    seen: dict[str, int] = {}
    for sec_id, entry in volume.items():
        if sec_id not in index:
            raise ParseError(f"{filename}: section id {sec_id} is not in index-meta.json")
        if not isinstance(entry, dict) or not isinstance(entry.get("t"), str):
            raise ParseError(f"{filename}: section id {sec_id} has no 't' text")
        chapter, sec = index[sec_id]
        vol_name = vol_name or str(chapter.get("vol") or "")
        number, index_heading = str(sec[1]), _MARK.sub("", squash(str(sec[2])), count=1)
        heading, body, history, notes = _split(entry["t"], number, index_heading)
        seen[number] = seen.get(number, 0) + 1
        # The section's current text decides, not the index (which may still say REPEALED of a reenacted number).
        repealed = bool(_REPEALED.match(heading.upper()) or _REPEALED.match(body))
        if repealed and not body:
            body = "Repealed."
        provisions.append(
            ParsedProvision(
                citation=f"HRS § {number}",
                number=number,
                chapter=str(chapter["num"]),
                chapter_title=squash(str(chapter.get("title") or "")),
                heading=heading,
                body=body,
                history=history,
                notes=notes,
                repealed=repealed,
                variant=seen[number],
                official_url=str(entry.get("u") or ""),
            )
        )
    if not provisions:
        raise ParseError(f"{filename or 'HRS volume'}: no sections")
    vol_name = vol_name or (filename.rsplit("/", 1)[-1].removesuffix(".json"))
    return ParsedSource(
        corpus="hrs",
        parser_name=PARSER_NAME,
        parser_version=PARSER_VERSION,
        title=f"Hawaii Revised Statutes {vol_name}",
        official_url=OFFICIAL_BASE + vol_name + "/",
        provisions=tuple(provisions),
    )


def read(source: BinaryIO, *, meta_raw: bytes, filename: str = "") -> Iterator[SourceItem]:
    """The source as a stream (``benchmarks.corpus.base``). Read whole: one file is one volume or chapter of a few
    MB, and its sections are only known once the whole of it is read."""
    source.seek(0)
    yield from source_items(parse(source.read(), meta_raw=meta_raw, filename=filename))
