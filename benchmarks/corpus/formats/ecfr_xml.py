"""The Code of Federal Regulations as eCFR XML (govinfo bulk data, ecfr.gov's versioner API), and as the CFR
annual edition's XML (govinfo's bulk CFR volumes; see ``_annual_edition``).

A title (``ECFR-title1.xml``: ``<DLPSTEXTCLASS>`` around ``<DIV1 TYPE="TITLE">``) or any division of one (the
versioner API answers a part as a bare ``<DIV5 TYPE="PART">``). Divisions nest as ``DIV1``..``DIV8`` with
``TYPE`` TITLE, SUBTITLE, CHAPTER, SUBCHAP, PART, SUBPART, SUBJGRP and SECTION; a section is a ``<DIV8
TYPE="SECTION" N="§ 1.1">`` with its ``<HEAD>`` ("§ 1.1   Definitions."), ``<P>``/``<FP>`` paragraphs,
tables and extracts, and a ``<CITA>`` source note. A part's ``<AUTH>`` and ``<SOURCE>`` notes apply to each of
its sections and are kept in each section's notes. Appendices are not sections and are not read.

Read with lxml, no DTD loaded, no entity expanded, nothing fetched; a DOCTYPE is refused outright (GPO's files
carry none). Every problem names the element and its line. One parser (``ecfr-xml``) reads both layouts.
"""

from __future__ import annotations

import io
import json
import re
from collections.abc import Iterator
from dataclasses import asdict
from datetime import date
from typing import TYPE_CHECKING, Any, BinaryIO

from benchmarks.corpus.base import (
    ParsedProvision,
    ParsedSource,
    ParseError,
    SourceHead,
    SourceItem,
    declares_entities,
    source_collect,
    source_items,
    squash,
)

if TYPE_CHECKING:
    from lxml import etree

PARSER_NAME = "ecfr-xml"
PARSER_VERSION = "2"
JURISDICTION = "United States (federal)"
SECTION_URL = "https://www.ecfr.gov/current/title-{title}/section-{number}"
PART_URL = "https://www.ecfr.gov/current/title-{title}/part-{part}"
TITLE_URL = "https://www.ecfr.gov/current/title-{title}"

_DIV = re.compile(r"^DIV[1-9]$")
# The divisions a section sits in, outermost first, as the corpus stores them (subject groups are headings
# within a subpart, not divisions a lawyer cites).
_LEVELS = {"TITLE": "title", "SUBTITLE": "subtitle", "CHAPTER": "chapter", "SUBCHAP": "subchapter",
           "PART": "part", "SUBPART": "subpart"}
_NUMBER = re.compile(r"^[0-9A-Za-z][0-9A-Za-z.\-]{0,78}$")
_HEAD_NUMBER = re.compile(r"^§§?\s*(\S+)\s*")
# Blocks start a new line of text; everything else (I, E, B, SU, FTREF, ...) runs inline.
_BLOCKS = {"P", "FP", "FP-1", "FP-2", "FP-DASH", "FP1-2", "PSPACE", "HD", "HD1", "HD2", "HD3", "HED", "TR", "ROW",
           "NOTE", "EXTRACT", "EXAMPLE", "LI", "DIV", "TABLE", "FRP", "AMDPAR", "STARS"}
_CELLS = {"TD", "TH", "ENT"}
_SKIP = {"GID", "PRTPAGE", "CFRTOC"}  # image file names, page numbers, tables of contents: not text
_NOTES = {"EDNOTE", "EFFDNOT", "SECAUTH", "FTNT", "CROSSREF"}
_MONTHS = {m: i for i, m in enumerate(("jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct",
                                        "nov", "dec"), start=1)}


def _where(elem: etree._Element) -> str:
    attrs = " ".join(f'{k}="{v}"' for k, v in elem.attrib.items() if k in ("N", "TYPE"))
    return f"<{elem.tag}{' ' + attrs if attrs else ''}> at line {elem.sourceline}"


def _footnote_mark(su: etree._Element) -> bool:
    """A superscript that numbers a footnote: before <FTREF/> in the text, or opening the footnote itself.

    Written "[1]" so the marker stays apart from the words around it ("respectively.) [1] Listings"), unlike a
    superscript of a unit ("m<SU>2</SU>").
    """
    following = su.getnext()
    if following is not None and following.tag == "FTREF":
        return True
    parent = su.getparent()
    return (parent is not None and parent.index(su) == 0 and not (parent.text or "").strip()
            and any(a.tag == "FTNT" for a in su.iterancestors()))


def block_text(elem: etree._Element) -> str:
    """The text of an element, one line per paragraph (or table row), spaces collapsed."""
    lines: list[str] = []
    buf: list[str] = []

    def flush() -> None:
        line = squash("".join(buf))
        if line:
            lines.append(line)
        buf.clear()

    def walk(node: etree._Element) -> None:
        tag = node.tag if isinstance(node.tag, str) else ""
        if tag in _SKIP:
            return
        if tag == "SU" and _footnote_mark(node):
            buf.append(f"[{squash(''.join(node.itertext()))}]")
            return
        block = tag in _BLOCKS
        if block:
            flush()
        if node.text and tag:
            buf.append(node.text)
        for child in node:
            walk(child)
            if child.tail:
                buf.append(child.tail)
        if tag in _CELLS:
            buf.append(" ")
        if block:
            flush()

    walk(elem)
    flush()
    return "\n".join(lines)


def _amended(root: etree._Element) -> str:
    """``AMDDATE`` ("Dec. 29, 2022(fm)") as an ISO date; '' when absent or unreadable."""
    return _amended_date(root.find(".//AMDDATE"))


def _amended_date(found: etree._Element | None) -> str:
    """The date of one ``AMDDATE`` element (``_amended``'s reading)."""
    text = squash("".join(found.itertext())) if found is not None else ""
    m = re.match(r"([A-Za-z]{3})[a-z]*\.?\s+(\d{1,2}),\s*(\d{4})", text)
    if not m or m.group(1).lower() not in _MONTHS:
        return ""
    try:
        return date(int(m.group(3)), _MONTHS[m.group(1).lower()], int(m.group(2))).isoformat()
    except ValueError:
        return ""


def _title_number(root: etree._Element) -> str:
    """The CFR title: a TITLE division's N, else a NODE ("1:1.0.1") or the versioner's hierarchy_metadata."""
    for elem in root.iter():
        if isinstance(elem.tag, str) and (found := _title_of(elem)):
            return found
    return ""


def _title_of(elem: etree._Element) -> str:
    """What one element says of the CFR title number ('' when nothing): ``_title_number``'s test of each."""
    if _DIV.match(elem.tag) and elem.get("TYPE") == "TITLE" and (elem.get("N") or "").strip():
        return (elem.get("N") or "").strip()
    node = elem.get("NODE") or ""
    if ":" in node:
        return node.split(":", 1)[0].strip()
    meta = elem.get("hierarchy_metadata") or ""
    m = re.search(r"title-(\w+)", meta)
    if m:
        return m.group(1)
    if elem.tag == "IDNO" and elem.get("TYPE") == "title" and squash(elem.text or ""):
        return squash(elem.text or "")
    return ""


def _section_number(div: etree._Element, head: str) -> str:
    raw = (div.get("N") or "").strip()
    if not raw:
        m = _HEAD_NUMBER.match(head)
        raw = m.group(1) if m else ""
    if not raw:
        meta = div.get("hierarchy_metadata") or ""
        try:
            raw = str(json.loads(meta).get("citation", "")).rsplit(" ", 1)[-1] if meta else ""
        except (ValueError, AttributeError):
            raw = ""
    number = re.sub(r"^§+\s*", "", raw).replace("\u2013", "-").replace("\u2014", "-").strip()
    if not number:
        raise ParseError(f"{_where(div)}: a section without a number (no N attribute, no '§ N' heading)")
    if not _NUMBER.match(number):
        raise ParseError(f"{_where(div)}: {number[:60]!r} is not a section number")
    return number


def _part_notes(part: etree._Element, number: str) -> str:
    """A part's authority and source notes, which apply to each of its sections."""
    notes = []
    for tag, label in (("AUTH", "authority"), ("SOURCE", "source")):
        found = part.find(tag)
        if found is not None:
            text = squash(" ".join(squash(t) for t in found.itertext() if squash(t)))
            text = re.sub(r"^(Authority|Source):\s*", "", text)
            if text:
                notes.append(f"Part {number} {label}: {text}")
    return "\n".join(notes)


def _heading(head: str, number: str) -> str:
    """"§ 1.1   Definitions." -> "Definitions." (the number is the citation's)."""
    text = _HEAD_NUMBER.sub("", head, count=1) if head.startswith("§") else head
    return text.strip() or head


def parse(raw: bytes, *, filename: str = "") -> ParsedSource:
    """The whole file's provisions at once (``read`` collected)."""
    return source_collect(read(io.BytesIO(raw), filename=filename))


def read(source: BinaryIO, *, filename: str = "") -> Iterator[SourceItem]:
    """The file's head, then its provisions one at a time: a bulk title is read part by part, so memory holds
    one part; anything else (a division alone, the annual edition, an odd or broken file) as a whole tree."""
    # local import: lxml stays out of the URL config, which imports this module (tests/test_cold_start.py)
    from lxml import etree

    name = filename or "CFR XML file"
    if declares_entities(source):
        raise ParseError(f"{name}: a DOCTYPE/ENTITY declaration is not accepted (GPO's CFR XML has none)")
    options = {"resolve_entities": False, "no_network": True, "load_dtd": False, "dtd_validation": False,
               "remove_comments": True, "remove_pis": True, "huge_tree": False}
    # Set before any section is read: by the streamed walk as it meets them, else from the whole tree.
    title, as_of = "", ""
    provisions: list[ParsedProvision] = []
    seen: dict[str, int] = {}

    def section(div: etree._Element, levels: tuple[tuple[str, str], ...], part_title: str, inherited: str) -> None:
        head_elem = div.find("HEAD")
        head = squash("".join(head_elem.itertext())) if head_elem is not None else ""
        number = _section_number(div, head)
        heading = _heading(head, number)
        body, history, notes = [], [], []
        for child in div:
            if not isinstance(child.tag, str) or child.tag == "HEAD":
                continue
            if child.tag == "CITA":
                history.append(squash("".join(child.itertext())))
            elif child.tag in _NOTES:
                notes.append(block_text(child))
            elif _DIV.match(child.tag):
                raise ParseError(f"{name}: {_where(child)} inside the section {_where(div)}: a division cannot "
                                 "be part of a section")
            else:
                body.append(block_text(child))
        reserved = bool(re.match(r"^\[Reserved\]\.?$", heading, re.I))
        text = "\n".join(b for b in body if b)
        part = dict(levels).get("part") or number.split(".", 1)[0]
        seen[number] = seen.get(number, 0) + 1
        single = re.match(r"^[0-9A-Za-z]+\.[0-9A-Za-z.\-]+$", number) and "-" not in number
        provisions.append(ParsedProvision(
            citation=f"{title} CFR {number}", number=number, chapter=f"{title}/{part}"[:40],
            chapter_title=part_title, heading=heading or "[no heading]", body=text or ("Reserved." if reserved else ""),
            history="\n".join(h for h in history if h), notes="\n".join(n for n in (*notes, inherited) if n),
            repealed=reserved, variant=seen[number],
            official_url=(SECTION_URL.format(title=title, number=number) if single
                          else PART_URL.format(title=title, part=part)),
            as_of=as_of, hierarchy=levels,
        ))

    def visit(node: etree._Element, levels: tuple[tuple[str, str], ...], part_title: str, inherited: str) -> None:
        for child in node:
            visit_child(child, levels, part_title, inherited)

    def visit_child(child: etree._Element, levels: tuple[tuple[str, str], ...], part_title: str,
                    inherited: str) -> None:
        if not isinstance(child.tag, str):
            return
        if not _DIV.match(child.tag):
            if child.tag in _WRAPPERS:
                visit(child, levels, part_title, inherited)
            return
        kind = (child.get("TYPE") or "").upper()
        if kind == "SECTION":
            section(child, levels, part_title, inherited)
            return
        if not kind:
            raise ParseError(f"{name}: {_where(child)} has no TYPE (TITLE, CHAPTER, PART, SECTION, ...)")
        inner, title_of, notes = levels, part_title, inherited
        level = _LEVELS.get(kind)
        if level:
            value = (child.get("N") or "").replace("\u2013", "-").strip()
            if level == "title":
                value = value or title
            if not value or len(value) > 40:
                raise ParseError(f"{name}: {_where(child)}: a {kind.lower()} needs a number N (at most 40 "
                                 "characters)")
            inner = (*levels, (level, value))
            if level == "part":
                title_of = squash("".join(child.find("HEAD").itertext())) if child.find("HEAD") is not None \
                    else f"Part {value}"
                notes = _part_notes(child, value)
        visit(child, inner, title_of, notes)

    def stream() -> Iterator[SourceItem]:
        """The bulk title read part by part (``_stream_units``), each part's tree cleared once read: memory
        holds one part, not the title. Stops with ``_NotStreamable`` when the file is not a bulk title whose
        header comes first (a division alone, the annual edition, anything odd or broken): the whole-tree
        reading below takes it, with its own messages."""
        nonlocal title, as_of
        units = _stream_units(source, options)
        header = next(units, None)
        if header is None:
            raise _NotStreamable("no part")
        title, as_of, title_head = header
        given = 0
        for unit, levels in units:
            visit_child(unit, levels, "", "")
            _forget(unit)
            if provisions and not given:
                yield _head(title, f"{title_head or f'Title {title}'} (eCFR"
                                   f"{f', amended through {as_of}' if as_of else ''})")
            given += len(provisions)
            yield from provisions
            provisions.clear()
        if not given:
            raise _NotStreamable("no section")

    try:
        yield from stream()
        return
    except (ParseError, _NotStreamable):
        pass
    # The whole-tree reading starts the provisions again: its head tells a reader given some already to drop them.
    title, as_of = "", ""
    provisions.clear()
    seen.clear()
    source.seek(0)
    try:
        root = etree.parse(source, parser=etree.XMLParser(**options)).getroot()
    except etree.XMLSyntaxError as exc:
        raise ParseError(f"{name}: not well-formed XML at line {exc.lineno}, column {exc.offset}: {exc.msg}") from exc
    except (LookupError, ValueError) as exc:  # an XML declaration naming an unknown encoding
        raise ParseError(f"{name}: unreadable XML declaration ({exc})") from exc
    if root.tag in _ANNUAL_ROOTS:
        yield from source_items(_annual_edition(root, name))
        return
    if root.tag not in {"DLPSTEXTCLASS", "ECFR", "ECFRBRWS"} and not _DIV.match(str(root.tag)):
        raise ParseError(f"{name}: the root <{root.tag}> at line {root.sourceline} is neither eCFR XML "
                         "(<DLPSTEXTCLASS>, <ECFR> or a <DIV1>..<DIV8> division) nor the CFR annual edition "
                         "(<CFRDOC>, <CFRGRANULE>)")
    title = _title_number(root)
    if not re.match(r"^\d{1,3}$", title):
        raise ParseError(f"{name}: no CFR title number (a <DIV1 TYPE=\"TITLE\" N=...>, a NODE=\"title:...\" or "
                         f"hierarchy_metadata naming title-N){f'; found {title[:20]!r}' if title else ''}")
    as_of = _amended(root)
    title_div = next((e for e in root.iter() if isinstance(e.tag, str) and _DIV.match(e.tag)
                      and e.get("TYPE") == "TITLE"), None)
    title_head = squash(title_div.findtext("HEAD") or "") if title_div is not None else ""
    title_head = re.sub(r"\s*-+\s*Volume \d+$", "", title_head)  # "Title 1—General Provisions--Volume 1"

    if _DIV.match(str(root.tag)):
        # A division answered alone (the versioner API): read it as the only child of a document.
        holder = etree.Element("ECFR")
        holder.append(root)
        levels: tuple[tuple[str, str], ...] = () if root.get("TYPE") == "TITLE" else (("title", title),)
        visit(holder, levels, "", "")
    else:
        visit(root, (), "", "")
    if not provisions:
        raise ParseError(f"{name}: no <DIV8 TYPE=\"SECTION\"> in CFR title {title}")
    yield _head(title, f"{title_head or f'Title {title}'} (eCFR{f', amended through {as_of}' if as_of else ''})")
    yield from provisions


# ---------------------------------------------------------------------------- a bulk title, part by part

_WRAPPERS = {"TEXT", "BODY", "ECFRBRWS", "ECFR"}  # elements the walk looks inside of, besides divisions
_BULK_ROOTS = {"DLPSTEXTCLASS", "ECFR", "ECFRBRWS"}
_UNITS = {"PART", "SECTION"}  # what the streamed walk hands to ``parse``'s walk whole: a part, or a lone section


class _NotStreamable(Exception):
    """The file is not a bulk title with its header first: ``parse`` reads it as a whole tree instead."""


def _stream_units(source: BinaryIO, options: dict[str, bool]) -> Iterator[Any]:
    """A bulk eCFR title read with ``iterparse``: first its header ``(title, as_of, title_head)``, then each part
    (or a section outside any part) as ``(element, levels above it)``, complete, in document order.

    The header is what the whole-tree reading finds first in document order (``_title_of``, the first
    ``AMDDATE``, the first TITLE division's HEAD), known by the end of the first part; the divisions above a part
    are numbered as that reading numbers them. Anything it would read differently (a title number or date only
    after the first part, a division without TYPE or N, a root other than a bulk title, broken XML) raises
    ``_NotStreamable``, and ``parse`` takes the whole tree with its own messages.
    """
    # local import: lxml stays out of the URL config, which imports this module (tests/test_cold_start.py)
    from lxml import etree

    found_title, first_amended, title_div = "", None, None
    header_sent, head_missing = False, False
    # One entry per open element: (its children are walked, the divisions above it, it is a unit).
    stack: list[tuple[bool, tuple[tuple[str, str], ...], bool]] = []
    try:
        source.seek(0)
        for event, elem in etree.iterparse(source, events=("start", "end"), **options):
            tag = elem.tag if isinstance(elem.tag, str) else ""
            if event == "start":
                if not found_title and tag != "IDNO":
                    found_title = _title_of(elem) if tag else ""
                if title_div is None and _DIV.match(tag) and elem.get("TYPE") == "TITLE":
                    if header_sent:
                        raise _NotStreamable("a TITLE division after the first part")
                    title_div = elem
                if not stack:
                    if tag not in _BULK_ROOTS:
                        raise _NotStreamable(f"root <{tag}>")
                    stack.append((True, (), False))
                    continue
                walked, levels, _ = stack[-1]
                if not walked:
                    stack.append((False, levels, False))
                elif _DIV.match(tag):
                    kind = (elem.get("TYPE") or "").upper()
                    if kind in _UNITS:
                        stack.append((False, levels, True))
                        continue
                    level = _LEVELS.get(kind)
                    if not kind or (level == "title" and not found_title and not elem.get("N")):
                        raise _NotStreamable(f"{_where(elem)} read before the title number")
                    if level:
                        value = (elem.get("N") or "").replace("\u2013", "-").strip()
                        value = value or found_title if level == "title" else value
                        if not value or len(value) > 40:
                            raise _NotStreamable(f"{_where(elem)} without a number")
                        levels = (*levels, (level, value))
                    stack.append((True, levels, False))
                else:
                    stack.append((tag in _WRAPPERS, levels, False))
                continue
            _, levels, unit = stack.pop()
            if tag == "IDNO" and not found_title:
                found_title = _title_of(elem)
            elif tag == "AMDDATE" and first_amended is None:
                if header_sent:  # the header said "no date"
                    raise _NotStreamable("the first AMDDATE after the first part")
                first_amended = elem
            elif tag == "HEAD" and head_missing and elem.getparent() is title_div:
                raise _NotStreamable("the title's HEAD after the first part")
            if not unit:
                continue
            if not header_sent:
                if not re.match(r"^\d{1,3}$", found_title):
                    raise _NotStreamable("no title number before the first part")
                head = squash(title_div.findtext("HEAD") or "") if title_div is not None else ""
                head_missing = title_div is not None and title_div.find("HEAD") is None
                yield found_title, _amended_date(first_amended), re.sub(r"\s*-+\s*Volume \d+$", "", head)
                header_sent = True
            yield elem, levels
    except (etree.XMLSyntaxError, LookupError, ValueError) as exc:
        raise _NotStreamable(str(exc)) from exc


def _forget(elem: etree._Element) -> None:
    """Drop a read part and everything before it from the tree ``iterparse`` is building."""
    elem.clear(keep_tail=True)
    parent = elem.getparent()
    if parent is not None:
        while elem.getprevious() is not None:
            del parent[0]


def _head(title: str, heading: str) -> SourceHead:
    return SourceHead(
        corpus=f"cfr{title}", parser_name=PARSER_NAME, parser_version=PARSER_VERSION, title=heading[:300],
        official_url=TITLE_URL.format(title=title), code_name=f"Code of Federal Regulations, Title {title}",
        jurisdiction=JURISDICTION,
    )


def _source(title: str, heading: str, provisions: list[ParsedProvision]) -> ParsedSource:
    return ParsedSource(**asdict(_head(title, heading)), provisions=tuple(provisions))


# --------------------------------------------------------------------------- the CFR annual edition

# govinfo's bulk CFR (CFR-2015-title14-vol2.xml): <CFRDOC> around <TITLE>, <CHAPTER>, <SUBCHAP>, <PART>, <SUBPART>
# (each named by its <HD>), and <SECTION> with <SECTNO> ("§ 101.1"), <SUBJECT>, paragraphs and <CITA>; a part's
# <CONTENTS> repeats numbers and subjects and is not read. A volume is one file of a title ("revised as of").
_ANNUAL_ROOTS = {"CFRDOC", "CFRGRANULE"}
_ANNUAL_LEVELS = {"CHAPTER": ("chapter", r"CHAPTER\s+([0-9A-Z]+)"),
                  "SUBCHAP": ("subchapter", r"SUBCHAPTERS?\s+([0-9A-Z\-\u2013]+)"),
                  "PART": ("part", r"PARTS?\s+([0-9A-Za-z\-\u2013]+)"),
                  "SUBPART": ("subpart", r"Subparts?\s+([0-9A-Za-z\-\u2013]+)")}
_ANNUAL_SKIP = {"CONTENTS", "TOC", "FMTR", "BMTR", "EAR", "LRH", "RRH", "PRTPAGE", "HD", "CFRTOC"}
_ANNUAL_NOTES = {"EDNOTE", "EFFDNOT", "EFFDNOTP", "SECAUTH", "FTNT", "CROSSREF"}


def _division_number(div: etree._Element, kind: str, pattern: str) -> str:
    hd = div.find("HD") if div.find("HD") is not None else div.find("RESERVED")
    if hd is None and kind == "CHAPTER":
        hd = div.find("TOC/TOCHD/HD")  # a volume prints its chapter's heading in the chapter's table of contents
    text = squash("".join(hd.itertext())) if hd is not None else ""
    m = re.match(pattern, text)
    if not m and kind == "PART":
        m = re.match(r"Pts?\.\s+([0-9A-Za-z]+)", squash(div.findtext("EAR") or ""))
    if not m:
        raise ParseError(f"{_where(div)}: no {kind.lower()} number in its heading {text[:60]!r}")
    return m.group(1).replace("\u2013", "-")


def _annual_edition(root: etree._Element, name: str) -> ParsedSource:
    titlenum = squash("".join(root.find(".//TITLENUM").itertext())) if root.find(".//TITLENUM") is not None else ""
    heading = root.find(".//CFRTITLE/TITLEHD/HD")
    title_head = squash("".join(heading.itertext())) if heading is not None else ""
    found = re.match(r"Title\s+(\d{1,3})\b", titlenum or title_head)
    if not found:
        raise ParseError(f"{name}: no CFR title number (a <TITLENUM>Title N</TITLENUM> or <CFRTITLE> heading)")
    title = found.group(1)
    as_of = _amended(root)
    revised = root.find(".//REVISED")
    version = squash("".join(revised.itertext())) if revised is not None else ""
    provisions: list[ParsedProvision] = []
    seen: dict[str, int] = {}

    def section(sec: etree._Element, levels: tuple[tuple[str, str], ...], part_title: str, inherited: str) -> None:
        sectno = squash("".join(sec.find("SECTNO").itertext())) if sec.find("SECTNO") is not None else ""
        number = re.sub(r"^§+\s*", "", sectno).replace("\u2013", "-").replace("\u2014", "-").strip()
        if not number:
            raise ParseError(f"{name}: {_where(sec)}: a section without a <SECTNO>")
        if not _NUMBER.match(number):
            raise ParseError(f"{name}: {_where(sec)}: {number[:60]!r} is not a section number")
        subject = sec.find("SUBJECT")
        heading = squash("".join(t for t in subject.itertext())) if subject is not None else ""
        body, history, notes = [], [], []
        for child in sec:
            if not isinstance(child.tag, str) or child.tag in {"SECTNO", "SUBJECT", "PRTPAGE"}:
                continue
            if child.tag == "CITA":
                history.append(squash("".join(child.itertext())))
            elif child.tag in _ANNUAL_NOTES:
                notes.append(block_text(child))
            else:
                body.append(block_text(child))
        reserved = bool(re.match(r"^\[Reserved\]\.?$", heading, re.I)) or sec.find("RESERVED") is not None
        part = dict(levels).get("part") or number.split(".", 1)[0]
        seen[number] = seen.get(number, 0) + 1
        single = "-" not in number and "." in number
        text = "\n".join(b for b in body if b)
        provisions.append(ParsedProvision(
            citation=f"{title} CFR {number}", number=number, chapter=f"{title}/{part}"[:40], chapter_title=part_title,
            heading=heading or "[no heading]", body=text or ("Reserved." if reserved else ""),
            history="\n".join(h for h in history if h), notes="\n".join(n for n in (*notes, inherited) if n),
            repealed=reserved, variant=seen[number],
            official_url=(SECTION_URL.format(title=title, number=number) if single
                          else PART_URL.format(title=title, part=part)),
            as_of=as_of, version_label=version[:100], hierarchy=levels,
        ))

    def visit(node: etree._Element, levels: tuple[tuple[str, str], ...], part_title: str, inherited: str) -> None:
        for child in node:
            if not isinstance(child.tag, str) or child.tag in _ANNUAL_SKIP:
                continue
            if child.tag == "SECTION":
                section(child, levels, part_title, inherited)
            elif child.tag in _ANNUAL_LEVELS:
                if next(child.iter("SECTION"), None) is None:
                    continue  # "Subparts F-G [Reserved]", a part's table of contents: no section to read
                level, pattern = _ANNUAL_LEVELS[child.tag]
                inner = (*levels, (level, _division_number(child, child.tag, pattern)))
                title_of, notes = part_title, inherited
                if child.tag == "PART":
                    hd = child.find("HD")
                    title_of = squash("".join(hd.itertext())) if hd is not None else f"Part {inner[-1][1]}"
                    notes = _part_notes(child, inner[-1][1])
                visit(child, inner, title_of, notes)
            elif child.tag in {"TITLE", "SUBJGRP", "CFRDOC", "CFRGRANULE"}:
                visit(child, levels, part_title, inherited)

    visit(root, (("title", title),), "", "")
    if not provisions:
        raise ParseError(f"{name}: no <SECTION> in CFR title {title}")
    return _source(title, f"{title_head or f'Title {title}'} (CFR annual edition{f', {version}' if version else ''})",
                   provisions)
