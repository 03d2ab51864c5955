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

from benchmarks.corpus.base import ParsedProvision, ParsedSource, ParseError, squash

PARSER_NAME = "hrs-json"
PARSER_VERSION = "2"
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


def _split(text: str, number: str, heading: str) -> tuple[str, str, str, str]:
    """(heading, body, history, notes) of one section's text."""
    text = _NAV.sub("", text.replace("\r\n", "\n")).strip()
    # Start at the section mark; what precedes it is part/subpart headings.
    # Prefer the mark at the start of the text or of an indented line: notes
    # above a section may cite its number at the start of a wrapped line.
    mark = re.search(r"(?:\A|\n[ \t]+)\[?§{1,2}\s*" + re.escape(number) + r"\b", text)
    if mark is None:  # an index number the page does not print (383-61.5 is printed §383-161)
        mark = re.search(r"(?:\A|\n[ \t]+)\[?§{1,2}\s*\d", text)
    if mark is None:
        mark = re.search(r"\[?§{1,2}\s*" + re.escape(number) + r"\b", text)
    if mark is None:
        mark = re.search(r"\[?§{1,2}", text)
    rest = text[mark.start():].lstrip() if mark else text
    # Drop the mark itself ("§521-44", "[§521-1]", "§§501-61, 501-62").
    rest = re.sub(r"^\[?§{1,2}\s*[\w.-]+(?:,\s*[\w.-]+)*(?:\s+to\s+[\w.-]+)?\]?", "", rest, count=1)
    # Drop the heading, whose line breaks differ from the index's copy. Some
    # index headings carry a part title or a note; then the text's own heading
    # (which ends at a period followed by two spaces) is the one used.
    words = heading.split()
    pattern = r"^\s*\[?" + r"\s+".join(re.escape(w) for w in words) + r"\]?\.?"
    if words and "§" not in heading and re.match(pattern, rest):
        rest = re.sub(pattern, "", rest, count=1)
    else:
        own = re.match(r"^\s*\[?((?:[^\n]|\n(?!\n))+?[.\]])(?: {2,}|\n\n|\s*$)", rest)
        if own:
            heading = squash(own.group(1)).strip("[]")
            rest = rest[own.end():]
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
        repealed = any(h.upper().startswith("REPEALED") for h in (index_heading, heading)) or bool(
            re.match(r"REPEALED\b", body)
        )
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
