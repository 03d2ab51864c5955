"""A firm's contract file -> its text, with a map from text offsets back to the original's page or paragraph.

The type is decided by the bytes, never by the file name alone: a PDF starts with ``%PDF-``, a DOCX is a ZIP
holding ``word/document.xml``, an encrypted Office file or a legacy ``.doc`` is an OLE compound file, and the
rest must decode as text. A name whose extension claims another type than the content is refused (a renamed
binary is the usual mistake, and importing it as text would store garbage that graders then grade).

Maintained libraries read the formats: pypdf for PDF (text per page, page numbers kept), python-docx for DOCX
(paragraphs and table cells in body order), lxml for HTML. The first two run in a child process bounded in CPU
time and memory, and a DOCX's parts are checked for decompression bombs first (``reader``). There is no OCR: a
PDF whose pages hold no text layer is refused with that reason, never stored empty.

The text is built unit by unit (pages, paragraphs, lines), each unit normalised on its own (line ends, trailing
spaces, runs of blank lines), so every location offset points at exactly the character where its unit starts.
"""

from __future__ import annotations

import io
import re
import struct
import unicodedata
import zipfile
from collections.abc import Iterable
from dataclasses import dataclass

from grading.contracts.reader import DocumentRefused, ReadBounds, read_units

__all__ = ["DocumentRefused", "ExtractedText", "ReadBounds", "extract", "sniff"]

# What a contract may be. Files with another extension are still read by their content.
EXTENSIONS = {".pdf": "pdf", ".docx": "docx", ".txt": "text", ".text": "text", ".md": "text", ".htm": "html",
              ".html": "html"}
KIND_NAMES = {"pdf": "PDF", "docx": "DOCX", "text": "plain text", "html": "HTML"}
UNIT_NAMES = {"pdf": "page", "docx": "paragraph", "text": "line", "html": "line"}

_IMAGE_MAGIC = ((b"\x89PNG\r\n\x1a\n", "a PNG image"), (b"\xff\xd8\xff", "a JPEG image"), (b"GIF8", "a GIF image"),
                (b"II*\x00", "a TIFF image"), (b"MM\x00*", "a TIFF image"))
_OLE_MAGIC = b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1"
_BLOCK_TAGS = frozenset({"p", "div", "br", "li", "tr", "h1", "h2", "h3", "h4", "h5", "h6", "table", "section",
                         "article", "blockquote", "pre", "ol", "ul", "dt", "dd", "td", "th", "title", "hr"})
_BLANK_RUNS = re.compile(r"\n{3,}")
# A code point of a surrogate is never a character: a PDF's ToUnicode map can name one alone, and such text
# cannot be encoded (hashed, stored). Each becomes U+FFFD, one for one, so offsets stay where they were.
_SURROGATES = re.compile("[\ud800-\udfff]")


@dataclass(frozen=True)
class ExtractedText:
    text: str
    kind: str  # pdf | docx | text | html
    locations: tuple[tuple[int, int], ...]  # (offset where a unit starts, its 1-based page/paragraph/line number)
    units: int  # pages (PDF), paragraphs (DOCX), lines (text, HTML) in the original

    @property
    def unit_name(self) -> str:
        return UNIT_NAMES[self.kind]


def sniff(data: bytes) -> str:
    """The kind of content these bytes are: pdf, docx, text or html; DocumentRefused for anything else."""
    if not data:
        raise DocumentRefused("the file is empty")
    head = data[:1024]
    if b"%PDF-" in head:
        return "pdf"
    if data.startswith(b"PK\x03\x04"):
        try:
            names = set(zipfile.ZipFile(io.BytesIO(data)).namelist())
        except (zipfile.BadZipFile, ValueError, OSError, EOFError, NotImplementedError, struct.error) as exc:
            raise DocumentRefused(f"a damaged ZIP archive, not a readable DOCX ({exc})") from exc
        if "word/document.xml" in names:
            return "docx"
        raise DocumentRefused("a ZIP archive that is not a Word document (no word/document.xml)")
    if data.startswith(_OLE_MAGIC):
        raise DocumentRefused("an encrypted Office document or a legacy .doc file: save it as .docx without a "
                              "password, then import it")
    for magic, what in _IMAGE_MAGIC:
        if data.startswith(magic):
            raise DocumentRefused(f"{what}, not a text document (there is no OCR: import a PDF with a text layer)")
    if b"\x00" in data[:8192] and not data.startswith((b"\xff\xfe", b"\xfe\xff")):
        raise DocumentRefused("binary content of an unknown type (not PDF, DOCX, HTML or text)")
    lowered = data[:2048].lstrip(b"\xef\xbb\xbf \t\r\n").lower()
    if lowered.startswith((b"<!doctype html", b"<html")) or b"<body" in lowered:
        return "html"
    return "text"


def extract(filename: str, data: bytes, *, max_bytes: int, max_units: int,
            bounds: ReadBounds | None = None) -> ExtractedText:
    """The text of one contract file; DocumentRefused (with the reason in words) when it cannot be read.

    PDF and DOCX are read by their libraries in a child process within ``bounds`` (``reader.read_units``).
    """
    if len(data) > max_bytes:
        raise DocumentRefused(f"too large ({_size(len(data))}; the limit is {_size(max_bytes)}, setting "
                              "CONTRACT_MAX_BYTES)")
    kind = sniff(data)
    extension = ("." + filename.rsplit(".", 1)[-1].lower()) if "." in filename else ""
    claimed = EXTENSIONS.get(extension)
    if claimed is not None and claimed != kind and {claimed, kind} != {"text", "html"}:
        raise DocumentRefused(f"named {extension} but the content is {KIND_NAMES[kind]}")
    if kind in ("pdf", "docx"):
        units = read_units(kind, data, max_units=max_units, bounds=bounds or ReadBounds())
    elif kind == "html":
        units = _html_lines(_decode(data))
    else:
        units = _decode(data).split("\n")
    result = assemble(units, kind=kind)
    if not result.text.strip():
        raise DocumentRefused("no text in the file" if kind != "pdf" else
                              "the PDF has no text layer (a scanned document?): OCR is not supported, import a "
                              "PDF with text")
    if result.units > max_units:
        raise DocumentRefused(f"too long ({result.units} {result.unit_name}s; the limit is {max_units}, setting "
                              "CONTRACT_MAX_UNITS)")
    return result


def _size(n: int) -> str:
    return f"{n / 1e6:.1f} MB" if n >= 1_000_000 else f"{n:,} bytes"


def _normalise(unit: str) -> str:
    unit = _SURROGATES.sub("\ufffd", unit)
    unit = unicodedata.normalize("NFC", unit.replace("\r\n", "\n").replace("\r", "\n").replace("\x00", ""))
    lines = [line.rstrip() for line in unit.split("\n")]
    return _BLANK_RUNS.sub("\n\n", "\n".join(lines)).strip("\n")


def assemble(units: Iterable[str], *, kind: str) -> ExtractedText:
    """Join normalised units with a separator (a blank line between pages, a newline otherwise)."""
    separator = "\n\n" if kind == "pdf" else "\n"
    parts: list[str] = []
    locations: list[tuple[int, int]] = []
    offset = 0
    count = 0
    for number, raw in enumerate(units, start=1):
        count = number
        unit = _normalise(raw)
        if not unit and kind != "pdf":
            continue  # empty paragraphs and lines add nothing a reader could find
        if parts:
            parts.append(separator)
            offset += len(separator)
        locations.append((offset, number))
        parts.append(unit)
        offset += len(unit)
    return ExtractedText(text="".join(parts), kind=kind, locations=tuple(locations), units=count)


def _decode(data: bytes) -> str:
    if data.startswith((b"\xff\xfe", b"\xfe\xff")):
        try:
            return data.decode("utf-16")
        except UnicodeDecodeError as exc:
            raise DocumentRefused(f"not valid UTF-16 text (byte {exc.start})") from exc
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        utf8_error = exc
    try:  # the usual encoding of text saved on Windows; its five undefined bytes still fail
        return data.decode("cp1252")
    except UnicodeDecodeError:
        raise DocumentRefused(f"neither UTF-8 nor Windows-1252 text (byte {utf8_error.start})") from utf8_error


def _html_lines(markup: str) -> list[str]:
    # local import: lxml stays out of the URL config, which imports this module (tests/test_cold_start.py)
    import lxml.html
    from lxml import etree

    try:
        root = lxml.html.document_fromstring(markup)
    except (etree.ParserError, ValueError) as exc:
        raise DocumentRefused(f"HTML that cannot be parsed ({exc})") from exc
    for element in list(root.iter("script", "style", "head", "noscript", "template")):
        element.drop_tree()
    for element in root.iter():
        if isinstance(element.tag, str) and element.tag.lower() in _BLOCK_TAGS:
            element.tail = "\n" + (element.tail or "")
            if element.tag.lower() != "br":
                element.text = "\n" + (element.text or "")
    text = root.text_content()
    return [" ".join(line.split()) for line in text.split("\n")]


def location_of(locations: Iterable[tuple[int, int]] | Iterable[list[int]], offset: int) -> int:
    """The 1-based page/paragraph/line number holding character ``offset`` (0 when there is none)."""
    found = 0
    for start, number in locations:
        if start > offset:
            break
        found = number
    return found
