"""United States Code titles in USLM XML (uscode.house.gov).

Sections are ``<section identifier="/us/usc/t9/s2">`` with ``<num>``,
``<heading>``, the text (``content``/``chapeau``/``subsection``/...),
``<sourceCredit>`` (history) and ``<notes>``. Sections quoted inside notes
carry no identifier and are not sections of the Code.
"""

from __future__ import annotations

import io
import re
import xml.etree.ElementTree as ET
from collections.abc import Iterator
from typing import BinaryIO

from benchmarks.corpus.base import (
    ParsedProvision,
    ParsedSource,
    ParseError,
    SourceHead,
    SourceItem,
    declares_entities,
    source_collect,
    squash,
)

PARSER_NAME = "uslm-xml"
PARSER_VERSION = "2"
NS = "{http://xml.house.gov/schemas/uslm/1.0}"
OFFICIAL_BASE = "https://uscode.house.gov/view.xhtml?req=granuleid:USC-prelim-title{title}-section{section}&num=0&edition=prelim"


def _local(tag: str) -> str:
    return tag.rsplit("}", 1)[-1]


def _inline(elem: ET.Element | None) -> str:
    """A heading with its inline elements (<date>, <ref>, <i>) kept: "... Awards of <date>June 10, 1958</date>"."""
    return squash("".join(elem.itertext())) if elem is not None else ""


def _is_footnote(node: ET.Element) -> bool:
    return _local(node.tag) == "note" and node.get("type") == "footnote"


def _text(elem: ET.Element, footnotes: list[str] | None = None) -> str:
    """Text of an element with line breaks between block elements (num and heading joined inline).

    A footnote's marker stays in the text as "[1]" and its note goes to ``footnotes`` as "[1] So in original.",
    so neither runs into the sentence around it ("in force,11 So in original").
    """
    lines: list[str] = []
    buf: list[str] = []

    after_num = [False]

    def walk(node: ET.Element) -> None:
        name = _local(node.tag)
        if _is_footnote(node):
            num = node.find(f"{NS}num")
            mark = _inline(num)
            rest = (num.tail or "") + "".join(
                "".join(child.itertext()) + (child.tail or "") for child in node if child is not num
            ) if num is not None else "".join(node.itertext())
            if footnotes is not None:
                footnotes.append(squash(f"[{mark}] {rest}" if mark else rest))
            return
        if name == "ref" and node.get("class") == "footnoteRef":
            buf.append(f"[{squash(''.join(node.itertext()))}]")
            return
        # A block starts a new line, except right after its own "(a)" number.
        if name in {"subsection", "paragraph", "subparagraph", "clause", "subclause", "item", "p",
                    "chapeau", "continuation", "tr"} and buf and not after_num[0]:
            lines.append("".join(buf))
            buf.clear()
        after_num[0] = False
        if node.text:
            buf.append(node.text)
        for child in node:
            walk(child)
            if child.tail:
                buf.append(child.tail)
        if name in {"p", "chapeau", "continuation", "content", "tr"}:
            lines.append("".join(buf))
            buf.clear()
        elif name in {"num", "heading", "td", "th"}:
            buf.append(" ")
        after_num[0] = name == "num"

    walk(elem)
    if buf:
        lines.append("".join(buf))
    return "\n".join(s for s in (squash(line) for line in lines) if s)


def parse(raw: bytes, *, filename: str = "") -> ParsedSource:
    """The whole file's provisions at once (``read`` collected)."""
    return source_collect(read(io.BytesIO(raw), filename=filename))


# Divisions whose sections are sections of the Code (a section quoted in a note sits inside another element).
_CONTAINERS = {"subtitle", "part", "subpart", "subchapter", "division", "title", "main", "chapter"}


def read(source: BinaryIO, *, filename: str = "") -> Iterator[SourceItem]:
    """The title's head, then its sections one at a time: the file is read with ``iterparse`` and each section
    (and each other finished division) is dropped from the tree once read, so memory holds one section."""
    name = filename or "USLM file"
    # USLM has no DTD; refusing one rules out entity-expansion tricks in fetched bytes.
    if declares_entities(source):
        raise ParseError(f"{name}: a DOCTYPE/ENTITY declaration is not accepted")
    title, title_heading = "", None
    head: SourceHead | None = None
    waiting: list[ParsedProvision] = []  # sections read before the title's heading (none in the Code's files)
    seen: dict[str, int] = {}
    chapters: dict[int, tuple[str, str]] = {}
    # One entry per open element: (element, its sections are the Code's, the chapter element around it).
    stack: list[tuple[ET.Element, bool, ET.Element | None]] = []
    given = 0

    def chapter_of(chapter: ET.Element | None) -> tuple[str, str]:
        if chapter is None:
            return "", ""
        if id(chapter) not in chapters:
            num = chapter.find(f"{NS}num")
            chapters[id(chapter)] = ((num.get("value") if num is not None else "") or "",
                                     _inline(chapter.find(f"{NS}heading")))
        return chapters[id(chapter)]

    def section(sec: ET.Element, number: str, chapter: str, chapter_title: str) -> ParsedProvision:
        heading = _inline(sec.find(f"{NS}heading"))
        body_parts: list[str] = []
        notes: list[str] = []
        footnotes: list[str] = []
        history = ""
        for child in sec:
            name = _local(child.tag)
            if name in {"num", "heading"}:
                continue
            if name == "sourceCredit":
                history = squash("".join(child.itertext()))
            elif name == "notes":
                notes.append(_text(child, footnotes))
            else:
                body_parts.append(_text(child, footnotes))
        seen[number] = seen.get(number, 0) + 1
        status = (sec.get("status") or "").lower()
        repealed = status in {"repealed", "omitted"} or bool(re.match(r"\[?Repealed\b", heading, re.I))
        body = "\n".join(p for p in body_parts if p)
        return ParsedProvision(
            citation=f"{title} U.S.C. § {number}",
            number=number,
            chapter=f"{title}/{chapter}" if chapter else title,
            chapter_title=chapter_title or title_heading or "",
            heading=heading,
            body=body or ("Repealed." if repealed else ""),
            history=history,
            notes="\n".join(n for n in (*footnotes, *notes) if n),
            repealed=repealed,
            variant=seen[number],
            official_url=OFFICIAL_BASE.format(title=title, section=number),
        )

    def make_head() -> SourceHead:
        return SourceHead(
            corpus="usc", parser_name=PARSER_NAME, parser_version=PARSER_VERSION,
            title=f"Title {title}—{title_heading}" if title_heading else f"Title {title}",
            official_url=f"https://uscode.house.gov/view.xhtml?path=/prelim@title{title}&edition=prelim",
        )

    source.seek(0)
    try:
        for event, elem in ET.iterparse(source, events=("start", "end")):  # noqa: S314 -- DOCTYPE refused above
            tag = _local(elem.tag)
            if event == "start":
                if not stack:
                    found = re.match(r"/us/usc/t(\w+)$", elem.get("identifier") or "")
                    if tag != "uscDoc" or not found:
                        raise ParseError(f"{name}: root is not a <uscDoc identifier='/us/usc/tN'>")
                    title = found.group(1)
                    stack.append((elem, True, None))
                    continue
                parent, walked, chapter = stack[-1]
                stack.append((elem, walked and tag in _CONTAINERS, elem if walked and tag == "chapter" else chapter))
                continue
            _, walked, chapter = stack.pop()
            if not stack:
                break
            parent, parent_walked, _ = stack[-1]
            if not parent_walked:
                continue
            # The title's heading: the first <heading> of the first <title> in <main>, as the whole tree finds it.
            if title_heading is None and len(stack) == 3 and stack[1][0].tag == f"{NS}main" \
                    and parent.tag == f"{NS}title" and parent.find(f"{NS}heading") is elem:
                title_heading = _inline(elem)
            elif title_heading is None and len(stack) == 2 and parent.tag == f"{NS}main" and elem.tag == f"{NS}title":
                title_heading = ""  # the first title ended without a heading
            if tag == "section":
                m = re.match(rf"/us/usc/t{re.escape(title)}/s([\w.-]+)$", elem.get("identifier") or "")
                if m:
                    waiting.append(section(elem, m.group(1), *chapter_of(chapter)))
            if tag not in {"num", "heading"}:
                parent.remove(elem)  # read: nothing of it is needed again
                chapters.pop(id(elem), None)
            if title_heading is not None and waiting:
                if head is None:
                    head = make_head()
                    yield head
                given += len(waiting)
                yield from waiting
                waiting.clear()
    except ET.ParseError as exc:
        raise ParseError(f"{name}: not well-formed XML ({exc})") from exc
    except LookupError as exc:  # an XML declaration naming an encoding Python does not know
        raise ParseError(f"{name}: unreadable XML declaration ({exc})") from exc
    if waiting:
        title_heading = title_heading or ""
        yield make_head()
        given += len(waiting)
        yield from waiting
    if not given:
        raise ParseError(f"{name}: no <section identifier='/us/usc/t{title}/s...'>")
