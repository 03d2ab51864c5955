"""United States Code titles in USLM XML (uscode.house.gov).

Sections are ``<section identifier="/us/usc/t9/s2">`` with ``<num>``,
``<heading>``, the text (``content``/``chapeau``/``subsection``/...),
``<sourceCredit>`` (history) and ``<notes>``. Sections quoted inside notes
carry no identifier and are not sections of the Code.
"""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET

from benchmarks.corpus.base import ParsedProvision, ParsedSource, ParseError, squash

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
    # USLM has no DTD; refusing one rules out entity-expansion tricks in fetched bytes.
    if b"<!DOCTYPE" in raw[:4096] or b"<!ENTITY" in raw:
        raise ParseError(f"{filename or 'USLM file'}: a DOCTYPE/ENTITY declaration is not accepted")
    try:
        root = ET.fromstring(raw)  # noqa: S314 -- DOCTYPE refused above; expat fetches no external entities
    except ET.ParseError as exc:
        raise ParseError(f"{filename or 'USLM file'}: not well-formed XML ({exc})") from exc
    except LookupError as exc:  # an XML declaration naming an encoding Python does not know
        raise ParseError(f"{filename or 'USLM file'}: unreadable XML declaration ({exc})") from exc
    doc_id = root.get("identifier") or ""
    found = re.match(r"/us/usc/t(\w+)$", doc_id)
    if _local(root.tag) != "uscDoc" or not found:
        raise ParseError(f"{filename or 'USLM file'}: root is not a <uscDoc identifier='/us/usc/tN'>")
    title = found.group(1)
    title_elem = root.find(f"{NS}main/{NS}title")
    title_heading = _inline(title_elem.find(f"{NS}heading")) if title_elem is not None else ""

    provisions: list[ParsedProvision] = []
    seen: dict[str, int] = {}

    def visit(node: ET.Element, chapter: str, chapter_title: str) -> None:
        for child in node:
            name = _local(child.tag)
            if name == "chapter":
                num = child.find(f"{NS}num")
                chap = (num.get("value") if num is not None else "") or ""
                visit(child, chap, _inline(child.find(f"{NS}heading")))
            elif name == "section":
                ident = child.get("identifier") or ""
                m = re.match(rf"/us/usc/t{re.escape(title)}/s([\w.-]+)$", ident)
                if m:
                    provisions.append(_section(child, m.group(1), chapter, chapter_title))
            elif name in {"subtitle", "part", "subpart", "subchapter", "division", "title", "main"}:
                visit(child, chapter, chapter_title)

    def _section(sec: ET.Element, number: str, chapter: str, chapter_title: str) -> ParsedProvision:
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
            chapter_title=chapter_title or title_heading,
            heading=heading,
            body=body or ("Repealed." if repealed else ""),
            history=history,
            notes="\n".join(n for n in (*footnotes, *notes) if n),
            repealed=repealed,
            variant=seen[number],
            official_url=OFFICIAL_BASE.format(title=title, section=number),
        )

    visit(root, "", "")
    if not provisions:
        raise ParseError(f"{filename or 'USLM file'}: no <section identifier='/us/usc/t{title}/s...'>")
    return ParsedSource(
        corpus="usc",
        parser_name=PARSER_NAME,
        parser_version=PARSER_VERSION,
        title=f"Title {title}—{title_heading}" if title_heading else f"Title {title}",
        official_url=f"https://uscode.house.gov/view.xhtml?path=/prelim@title{title}&edition=prelim",
        provisions=tuple(provisions),
    )
