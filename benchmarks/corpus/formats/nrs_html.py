"""Nevada Revised Statutes chapter pages (leg.state.nv.us/NRS/NRS-XXX.html).

Word-generated HTML in windows-1252 with CRLF. Each section is a
``<p class="SectBody">`` holding ``<span class=Section>432B.220</span>`` and
``<span class=Leadline>heading</span>`` followed by the first text, then more
SectBody paragraphs, then ``<p class="SourceNote">`` (history). Table of
contents lines (COLeadline) and headings between sections are not section text.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from html.parser import HTMLParser
from typing import BinaryIO

from benchmarks.corpus.base import ParsedProvision, ParsedSource, ParseError, SourceItem, source_items, squash

PARSER_NAME = "nrs-html"
PARSER_VERSION = "1"
OFFICIAL_BASE = "https://www.leg.state.nv.us/NRS/"


class _Paragraphs(HTMLParser):
    """Collects each <p> as (class, [(span_class, text), ...], anchor names)."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.paragraphs: list[tuple[str, list[tuple[str, str]], list[str]]] = []
        self.title = ""
        self._p: tuple[str, list[tuple[str, str]], list[str]] | None = None
        self._spans: list[str] = []
        self._in_title = False

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        a = dict(attrs)
        if tag == "p":
            self._p = ((a.get("class") or ""), [], [])
            self._spans = []
        elif tag == "span" and self._p is not None:
            # A span without a class (Word's inline styling) belongs to the span around it.
            self._spans.append(a.get("class") or (self._spans[-1] if self._spans else ""))
        elif tag == "a" and self._p is not None and a.get("name"):
            self._p[2].append(a["name"] or "")
        elif tag == "title":
            self._in_title = True
        elif tag == "br" and self._p is not None:
            self._p[1].append((self._spans[-1] if self._spans else "", " "))

    def handle_endtag(self, tag: str) -> None:
        if tag == "p" and self._p is not None:
            self.paragraphs.append(self._p)
            self._p = None
        elif tag == "span" and self._spans:
            self._spans.pop()
        elif tag == "title":
            self._in_title = False

    def handle_data(self, data: str) -> None:
        if self._in_title:
            self.title += data
        if self._p is not None:
            self._p[1].append((self._spans[-1] if self._spans else "", data))


_REPEALED = re.compile(r"^\s*(\[?Repealed\.\]?)", re.IGNORECASE)


def decode(raw: bytes) -> str:
    # The pages declare windows-1252; a stray byte must not abort an import.
    return raw.decode("cp1252", errors="replace")


def parse(raw: bytes, *, filename: str = "") -> ParsedSource:
    """Parse one NRS chapter page into its sections (repealed stubs marked, not dropped)."""
    collector = _Paragraphs()
    collector.feed(decode(raw))
    collector.close()

    chapter_title = ""
    sections: list[dict] = []
    current: dict | None = None
    after_source_note = False
    for css, segments, anchors in collector.paragraphs:
        if css == "Chapter" and not chapter_title:
            chapter_title = squash("".join(text for _, text in segments))
            continue
        if css == "SectBody" and any(span == "Section" for span, _ in segments):
            number = squash("".join(t for s, t in segments if s == "Section"))
            heading = squash("".join(t for s, t in segments if s == "Leadline"))
            first = squash("".join(t for s, t in segments if s not in {"Section", "Leadline", "Empty"}))
            anchor = next((name for name in anchors if "Sec" in name), "")
            current = {"number": number, "heading": heading, "body": [first] if first else [],
                       "history": [], "notes": [], "anchor": anchor}
            sections.append(current)
            after_source_note = False
            continue
        if current is None:
            continue
        text = squash("".join(t for _, t in segments))
        if css == "SectBody":
            if not text:
                continue
            # Text after the history line is an editorial note, not the law itself.
            (current["notes"] if after_source_note else current["body"]).append(text)
        elif css == "SourceNote":
            if text:
                current["history"].append(text)
            after_source_note = True
        elif css in {"DocHeading", "DocHeading2", "COHead2", "COHead4", "Chapter"}:
            current = None

    if not sections:
        raise ParseError(f"{filename or 'NRS page'}: no <span class=Section> found; not an NRS chapter page?")

    page = filename.rsplit("/", 1)[-1] if filename else ""
    chapter = sections[0]["number"].split(".", 1)[0]
    page = page or f"NRS-{chapter.zfill(3)}.html"
    seen: dict[str, int] = {}
    provisions = []
    for sec in sections:
        number = sec["number"]
        seen[number] = seen.get(number, 0) + 1
        body = "\n".join(sec["body"])
        heading = sec["heading"].rstrip()
        repealed = bool(_REPEALED.match(body)) or heading.endswith("[Repealed.]")
        url = OFFICIAL_BASE + page + (f"#{sec['anchor']}" if sec["anchor"] else "")
        provisions.append(
            ParsedProvision(
                citation=f"NRS {number}",
                number=number,
                chapter=number.split(".", 1)[0],
                chapter_title=chapter_title,
                heading=heading,
                body=body,
                history="\n".join(sec["history"]),
                notes="\n".join(sec["notes"]),
                repealed=repealed,
                variant=seen[number],
                official_url=url,
            )
        )
    return ParsedSource(
        corpus="nrs",
        parser_name=PARSER_NAME,
        parser_version=PARSER_VERSION,
        title=squash(collector.title) or chapter_title,
        official_url=OFFICIAL_BASE + page,
        provisions=tuple(provisions),
    )


def read(source: BinaryIO, *, filename: str = "") -> Iterator[SourceItem]:
    """The source as a stream (``benchmarks.corpus.base``). Read whole: one file is one volume or chapter of a few
    MB, and its sections are only known once the whole of it is read."""
    source.seek(0)
    yield from source_items(parse(source.read(), filename=filename))
