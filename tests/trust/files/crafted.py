"""Files an attacker would craft, built here at test time (a bomb is small on disk and never committed).

- ``docx_bomb``: a valid DOCX whose ``word/document.xml`` inflates far past its size (a decompression bomb);
- ``docx_long``: an honest DOCX that is simply large (it needs memory to read, not tricks);
- ``pdf_many_pages``: a PDF of many pages that all share one content stream (cheap to send, costly to read);
- ``pdf_lone_surrogate``: a PDF whose font maps a glyph to half of a UTF-16 surrogate pair;
- ``pdf_stream_bomb``: a one-page PDF whose content stream inflates past pypdf's own output limit.
"""

from __future__ import annotations

import io
import random
import zipfile
import zlib
from collections.abc import Iterator

from tests.grading.contracts import files

W = "http://schemas.openxmlformats.org/wordprocessingml/2006/main"
PARAGRAPH = b"<w:p><w:r><w:t>Clause.</w:t></w:r></w:p>"


def _docx_with_body(chunks: Iterator[bytes], *, level: int) -> bytes:
    """A real DOCX (python-docx's) whose ``word/document.xml`` body is ``chunks`` (paragraph elements), streamed."""
    source = zipfile.ZipFile(io.BytesIO(files.docx_bytes()))
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED, compresslevel=level) as built:
        for info in source.infolist():
            if info.filename != "word/document.xml":
                built.writestr(info.filename, source.read(info))
                continue
            with built.open("word/document.xml", "w", force_zip64=True) as part:
                head = f'<?xml version="1.0" encoding="UTF-8" standalone="yes"?><w:document xmlns:w="{W}"><w:body>'
                part.write(head.encode())
                for chunk in chunks:
                    part.write(chunk)
                part.write(b"<w:sectPr/></w:body></w:document>")
    return out.getvalue()


def docx_bomb(inflated: int = 42_000_000) -> bytes:
    """``word/document.xml`` of ``inflated`` bytes of one short paragraph repeated: a few hundred to one."""
    chunk = PARAGRAPH * 25_000
    return _docx_with_body(iter([chunk] * (inflated // len(chunk) + 1)), level=9)


def docx_long(paragraphs: int, words: int) -> bytes:
    """An honest, large DOCX: long paragraphs of varied words, compressing like prose (far below the ratio cap)."""
    rng = random.Random(7)
    vocabulary = [f"term{n}" for n in range(5000)]

    def body() -> Iterator[bytes]:
        for _ in range(paragraphs):
            yield b"<w:p><w:r><w:t>" + " ".join(rng.choices(vocabulary, k=words)).encode() + b"</w:t></w:r></w:p>"

    return _docx_with_body(body(), level=1)


def _pdf(objects: list[bytes]) -> bytes:
    """A PDF of these objects (numbered from 1; object 1 is the catalog) with a correct cross-reference table."""
    out = bytearray(b"%PDF-1.4\n%\xe2\xe3\xcf\xd3\n")
    offsets = []
    for number, body in enumerate(objects, start=1):
        offsets.append(len(out))
        out += b"%d 0 obj\n" % number + body + b"\nendobj\n"
    xref = len(out)
    out += b"xref\n0 %d\n0000000000 65535 f \n" % (len(objects) + 1)
    out += b"".join(b"%010d 00000 n \n" % offset for offset in offsets)
    out += b"trailer\n<< /Size %d /Root 1 0 R >>\nstartxref\n%d\n%%%%EOF\n" % (len(objects) + 1, xref)
    return bytes(out)


FONT = b"<< /Font << /F1 << /Type /Font /Subtype /Type1 /BaseFont /Helvetica >> >> >>"


def _stream(content: bytes, *, compressed: bytes | None = None) -> bytes:
    if compressed is None:
        return b"<< /Length %d >>\nstream\n" % len(content) + content + b"\nendstream"
    return b"<< /Length %d /Filter /FlateDecode >>\nstream\n" % len(compressed) + compressed + b"\nendstream"


def pdf_many_pages(pages: int = 100_000, *, text: bytes = b"Clause. " * 12) -> bytes:
    """``pages`` pages, every one pointing at the same small content stream (object 3)."""
    content = b"BT /F1 10 Tf 72 720 Td (" + text + b") Tj ET"
    first_page = 5
    kids = b" ".join(b"%d 0 R" % n for n in range(first_page, first_page + pages))
    objects = [b"<< /Type /Catalog /Pages 2 0 R >>",
               b"<< /Type /Pages /Count %d /Kids [" % pages + kids + b"] >>",
               _stream(content), FONT]
    page = b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents 3 0 R /Resources 4 0 R >>"
    objects += [page] * pages
    return _pdf(objects)


def pdf_stream_bomb(inflated: int = 400_000_000) -> bytes:
    """One page whose Flate content stream inflates to ``inflated`` bytes (spaces after a line of text)."""
    packer = zlib.compressobj(9)
    parts = [packer.compress(b"BT /F1 10 Tf 72 720 Td (Governing Law.) Tj ET\n")]
    block = b" " * 1_000_000
    for _ in range(inflated // len(block)):
        parts.append(packer.compress(block))
    parts.append(packer.flush())
    objects = [b"<< /Type /Catalog /Pages 2 0 R >>", b"<< /Type /Pages /Count 1 /Kids [5 0 R] >>",
               _stream(b"", compressed=b"".join(parts)), FONT,
               b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents 3 0 R /Resources 4 0 R >>"]
    return _pdf(objects)


def pdf_lone_surrogate() -> bytes:
    """One page showing "BAB" in a font whose ToUnicode map sends "A" to U+D835 alone (half a surrogate pair)."""
    cmap = (b"/CIDInit /ProcSet findresource begin 12 dict begin begincmap /CMapName /Lone def\n"
            b"1 begincodespacerange <00> <FF> endcodespacerange\n"
            b"2 beginbfchar <41> <D835> <42> <0042> endbfchar\n"
            b"endcmap CMapName currentdict /CMap defineresource pop end end")
    objects = [b"<< /Type /Catalog /Pages 2 0 R >>", b"<< /Type /Pages /Count 1 /Kids [5 0 R] >>",
               _stream(b"BT /F1 10 Tf 72 720 Td (BAB) Tj ET"),
               b"<< /Font << /F1 << /Type /Font /Subtype /Type1 /BaseFont /Helvetica /ToUnicode 6 0 R >> >> >>",
               b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents 3 0 R /Resources 4 0 R >>",
               _stream(cmap)]
    return _pdf(objects)
