"""Real contract files made by the formats' own libraries: PDF by WeasyPrint (and pypdf to encrypt), DOCX by
python-docx. Each builder returns bytes; the texts are known, so tests can check what extraction gives back."""

from __future__ import annotations

import functools
import io

PAGES = (
    "MASTER SUPPLY AGREEMENT. This Agreement is made between Acme Corp and Beta LLC.",
    "Governing Law. This Agreement shall be governed by the laws of the State of Nevada.",
    "Termination for Convenience. Either party may terminate this Agreement on 30 days notice.",
)


@functools.cache
def pdf_with_text(pages: tuple[str, ...] = PAGES) -> bytes:
    from weasyprint import HTML

    body = "".join(f'<p style="break-after: page">{page}</p>' for page in pages[:-1]) + f"<p>{pages[-1]}</p>"
    return bytes(HTML(string=f"<html><body>{body}</body></html>").write_pdf())


@functools.cache
def pdf_image_only() -> bytes:
    """A 'scanned' page: a picture and no text layer."""
    from weasyprint import HTML

    svg = ("data:image/svg+xml;utf8,<svg xmlns='http://www.w3.org/2000/svg' width='400' height='300'>"
           "<rect width='400' height='300' fill='gray'/><circle cx='200' cy='150' r='80' fill='black'/></svg>")
    return bytes(HTML(string=f'<html><body><img src="{svg}" width="400"></body></html>').write_pdf())


def pdf_encrypted() -> bytes:
    from pypdf import PdfReader, PdfWriter

    writer = PdfWriter(clone_from=PdfReader(io.BytesIO(pdf_with_text())))
    writer.encrypt(user_password="reader-pass", owner_password="owner-pass", algorithm="RC4-128")
    out = io.BytesIO()
    writer.write(out)
    return out.getvalue()


def pdf_corrupt() -> bytes:
    """The head of a real PDF and then noise: the cross-reference table and every object after are gone."""
    return pdf_with_text()[:400] + b"\x00garbage\xff" * 50


def docx_bytes(paragraphs: tuple[str, ...] = PAGES, table: tuple[tuple[str, str], ...] = (("Party", "Acme Corp"),)
               ) -> bytes:
    import docx

    document = docx.Document()
    document.add_paragraph(paragraphs[0])
    document.add_paragraph("")  # an empty paragraph: not stored, numbers keep counting
    for text in paragraphs[1:]:
        document.add_paragraph(text)
    grid = document.add_table(rows=len(table), cols=2)
    for row, (left, right) in zip(grid.rows, table, strict=True):
        row.cells[0].text = left
        row.cells[1].text = right
    out = io.BytesIO()
    document.save(out)
    return out.getvalue()


PNG = (b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\x00\x00\x00\x01\x00\x00\x00\x01\x08\x06\x00\x00\x00\x1f\x15\xc4\x89"
       b"\x00\x00\x00\rIDATx\x9cc\xf8\x0f\x00\x00\x01\x01\x00\x05\x18\xd8N\x00\x00\x00\x00IEND\xaeB`\x82")
