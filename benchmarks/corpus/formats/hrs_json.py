"""Hawaii Revised Statutes volume files (capitol.hawaii.gov crawl, see data README).

A volume file maps a section id to ``{"t": full text with history, "u": official URL}``;
``index-meta.json`` carries the chapter list and each section's number and heading.
The text begins with any part/subpart headings, then ``§521-44  Heading.  body
[L 1972, c 132, ...]``, then editorial notes ("Case Notes", "Cross References", ...)
and the page's navigation ("Previous / Vol12_... / Next"). The body, the history
bracket and the notes are separated here.
"""

from __future__ import annotations

import io
import json
import re
from collections.abc import Iterator
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
    return source_collect(read(io.BytesIO(raw), meta_raw=meta_raw, filename=filename))


def read(source: BinaryIO, *, meta_raw: bytes, filename: str = "") -> Iterator[SourceItem]:
    """A volume's head, then its sections one at a time: the volume's object is read member by member, never
    whole. A file that is not one JSON object of distinct members is read whole, as ``json.loads`` reads it, with
    its messages (a reader given sections already is told to drop them by a new head)."""
    index = _index(meta_raw)
    try:
        yield from _sections(_members(source), index, filename)
        return
    except _NotStreamable:
        pass
    source.seek(0)
    try:
        volume = json.loads(source.read())
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise ParseError(f"{filename or 'HRS volume'}: not JSON ({exc})") from exc
    if not isinstance(volume, dict):
        raise ParseError(f"{filename or 'HRS volume'}: expected an object of sections")
    yield from _sections(iter(volume.items()), index, filename)


class _NotStreamable(Exception):
    """The file is not one JSON object of distinct members: ``read`` reads it whole instead."""


def _members(source: BinaryIO) -> Iterator[tuple[str, Any]]:
    """The members of the one JSON object a file holds, in order, decoded one at a time from a small buffer."""
    decoder = json.JSONDecoder()
    source.seek(0)
    text = io.TextIOWrapper(source, encoding="utf-8-sig")
    buf, pos, eof = "", 0, False
    keys: set[str] = set()

    def more() -> bool:
        nonlocal buf, pos, eof
        chunk = text.read(1 << 16)
        if not chunk:
            eof = True
            return False
        buf, pos = buf[pos:] + chunk, 0
        return True

    def peek() -> str:
        nonlocal pos
        while True:
            while pos < len(buf) and buf[pos] in " \t\r\n":
                pos += 1
            if pos < len(buf) or not more():
                return buf[pos] if pos < len(buf) else ""

    def value() -> Any:
        nonlocal pos
        while True:
            try:
                found, end = decoder.raw_decode(buf, pos)
                # A number may go on in the next chunk: a value is taken when something follows it.
                if end < len(buf) or eof:
                    pos = end
                    return found
            except json.JSONDecodeError as exc:
                if eof:
                    raise _NotStreamable(str(exc)) from exc
            more()

    try:
        if peek() != "{":
            raise _NotStreamable("not an object")
        pos += 1
        if peek() == "}":
            pos += 1
        else:
            while True:
                if peek() != '"':
                    raise _NotStreamable("a member without a name")
                key = value()
                if peek() != ":" or key in keys:
                    raise _NotStreamable("a member without a value, or named twice")
                keys.add(key)
                pos += 1
                peek()
                yield key, value()
                follows = peek()
                pos += 1
                if follows == "}":
                    break
                if follows != ",":
                    raise _NotStreamable("members not separated by commas")
        if peek():
            raise _NotStreamable("more after the object")
    except UnicodeDecodeError as exc:
        raise _NotStreamable(str(exc)) from exc
    finally:
        if not source.closed:  # a reading abandoned after its file was closed has nothing to give back
            text.detach()  # the caller's file stays open


def _sections(members: Iterator[tuple[str, Any]], index: dict[str, tuple[dict, list]],
              filename: str) -> Iterator[SourceItem]:
    """The volume's head and provisions from its members (section id, entry)."""
    vol_name = ""
    seen: dict[str, int] = {}
    waiting: list[ParsedProvision] = []  # sections read before the volume's name (none in the official files)
    given = 0

    def head() -> SourceHead:
        name = vol_name or (filename.rsplit("/", 1)[-1].removesuffix(".json"))
        return SourceHead(corpus="hrs", parser_name=PARSER_NAME, parser_version=PARSER_VERSION,
                          title=f"Hawaii Revised Statutes {name}", official_url=OFFICIAL_BASE + name + "/")

    for sec_id, entry in members:
        if sec_id not in index:
            raise ParseError(f"{filename}: section id {sec_id} is not in index-meta.json")
        if not isinstance(entry, dict) or not isinstance(entry.get("t"), str):
            raise ParseError(f"{filename}: section id {sec_id} has no 't' text")
        chapter, sec = index[sec_id]
        named = bool(vol_name)
        vol_name = vol_name or str(chapter.get("vol") or "")
        number, index_heading = str(sec[1]), _MARK.sub("", squash(str(sec[2])), count=1)
        heading, body, history, notes = _split(entry["t"], number, index_heading)
        seen[number] = seen.get(number, 0) + 1
        # The section's current text decides, not the index (which may still say REPEALED of a reenacted number).
        repealed = bool(_REPEALED.match(heading.upper()) or _REPEALED.match(body))
        if repealed and not body:
            body = "Repealed."
        waiting.append(ParsedProvision(
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
        ))
        if vol_name:
            if not named:
                yield head()
            given += len(waiting)
            yield from waiting
            waiting.clear()
    if waiting:
        yield head()
        given += len(waiting)
        yield from waiting
    if not given:
        raise ParseError(f"{filename or 'HRS volume'}: no sections")
