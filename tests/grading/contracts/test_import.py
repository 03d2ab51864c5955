"""A firm's contracts in: PDF, DOCX, text and HTML read by their libraries; bad files refused one by one, by name.

The promise: "an import test feeds corrupt, encrypted, empty and image-only PDFs and a renamed binary and gets one
clear error each"; the same text twice is stored once; offsets map back to pages and paragraphs.
"""

from __future__ import annotations

import io
import random

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError
from django.db import connection, transaction
from django.db.utils import DatabaseError

from grading.contracts.extract import DocumentRefused, assemble, extract, location_of
from grading.contracts.models import ContractSet, ContractText, SetContract
from grading.contracts.services import contract_import, contract_set_get_or_create
from reviewapp.core.models import AppendOnlyError
from tests.grading.contracts import files

LIMITS = {"max_bytes": 10_000_000, "max_units": 1000}


def _write(tmp_path, name: str, data: bytes):
    path = tmp_path / name
    path.write_bytes(data)
    return path


@pytest.mark.django_db
def test_the_command_imports_the_readable_files_and_names_each_refused_one_with_its_reason(tmp_path, capsys):
    good = [_write(tmp_path, "supply.pdf", files.pdf_with_text()),
            _write(tmp_path, "nda.docx", files.docx_bytes()),
            _write(tmp_path, "lease.txt", b"LEASE\nThe tenant pays rent monthly.\n")]
    bad = {
        "corrupt.pdf": (files.pdf_corrupt(), "damaged PDF"),
        "locked.pdf": (files.pdf_encrypted(), "encrypted with a password"),
        "empty.pdf": (b"", "empty"),
        "scan.pdf": (files.pdf_image_only(), "no text layer"),
        "photo.pdf": (files.PNG, "PNG image"),
        "renamed.docx": (files.pdf_with_text(), "named .docx but the content is PDF"),
    }
    for name, (data, _) in bad.items():
        _write(tmp_path, name, data)
    call_command("import_contracts", *[str(p) for p in good], *[str(tmp_path / n) for n in bad], "--set", "Firm A")
    out, err = capsys.readouterr()
    lines = [line for line in err.splitlines() if line.strip()]
    assert len(lines) == len(bad)  # one line a refused file
    for name, (_, reason) in bad.items():
        line = next(line for line in lines if name in line)
        assert reason in line, line
    assert "3 imported, 0 already in the set" in out and "6 refused" in out
    contract_set = ContractSet.objects.get(name="Firm A")
    assert sorted(contract_set.contracts.values_list("title", flat=True)) == ["lease", "nda", "supply"]
    assert ContractText.objects.count() == 3  # nothing of a refused file was written


@pytest.mark.django_db
def test_importing_the_same_text_again_stores_nothing_and_says_so(tmp_path, capsys):
    path = _write(tmp_path, "supply.pdf", files.pdf_with_text())
    call_command("import_contracts", str(path), "--set", "Firm A")
    capsys.readouterr()
    copy = _write(tmp_path, "supply copy.pdf", files.pdf_with_text())
    call_command("import_contracts", str(copy), "--set", "Firm A")
    out, _ = capsys.readouterr()
    assert "already in this set as 'supply'" in out and "0 imported, 1 already in the set" in out
    assert SetContract.objects.count() == 1 and ContractText.objects.count() == 1
    # Another set links the stored text: the set holds it, the text is not stored twice.
    call_command("import_contracts", str(copy), "--set", "Firm B")
    out, _ = capsys.readouterr()
    assert "linked, not stored again" in out
    assert SetContract.objects.count() == 2 and ContractText.objects.count() == 1


@pytest.mark.django_db
def test_the_command_fails_when_nothing_could_be_imported(tmp_path, capsys):
    with pytest.raises(CommandError, match="no file imported"):
        call_command("import_contracts", str(_write(tmp_path, "x.pdf", b"")), "--set", "Firm A")
    assert "x.pdf: the file is empty" in capsys.readouterr().err


def test_pdf_offsets_map_back_to_their_pages_and_docx_offsets_to_their_paragraphs():
    pdf = extract("a.pdf", files.pdf_with_text(), **LIMITS)
    assert pdf.kind == "pdf" and pdf.units == 3
    for page, words in enumerate(("MASTER SUPPLY", "Governing Law", "Termination for Convenience"), start=1):
        assert location_of(pdf.locations, pdf.text.index(words)) == page
    document = extract("b.docx", files.docx_bytes(), **LIMITS)
    # Paragraph 2 of the original is empty: not stored, and the numbers still count it.
    assert location_of(document.locations, document.text.index("Governing Law")) == 3
    assert location_of(document.locations, document.text.index("Acme Corp", 100)) == 6  # the table's cell


def test_html_keeps_the_text_and_drops_scripts_styles_and_the_head():
    page = b"<html><head><title>T</title><style>p{}</style></head><body><h1>Lease</h1><p>Rent is <b>due</b>.</p>" \
           b"<script>var x = 1;</script></body></html>"
    result = extract("lease.html", page, **LIMITS)
    assert result.text == "Lease\nRent is due."


@pytest.mark.parametrize(("name", "data", "reason"), [
    ("big.txt", b"x" * 2000, "too large \\(2,000 bytes; the limit is 1,000 bytes"),
    ("legacy.doc", b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1" + b"\x00" * 100, "legacy .doc"),
    ("archive.docx", b"PK\x03\x04" + b"\x00" * 50, "damaged ZIP"),
    ("blob.bin", bytes(range(256)) * 3, "binary content"),
])
def test_other_bad_files_are_refused_with_their_reason(name, data, reason):
    with pytest.raises(DocumentRefused, match=reason):
        extract(name, data, max_bytes=1000, max_units=1000)


def test_every_location_points_at_the_first_character_of_its_unit_on_random_units():
    rng = random.Random(36)
    for _ in range(200):
        kind = rng.choice(["pdf", "docx", "text"])
        units = ["".join(rng.choice("ab \n\r") for _ in range(rng.randint(0, 12))) for _ in range(rng.randint(1, 8))]
        result = assemble(units, kind=kind)
        for offset, number in result.locations:
            # The unit's normalised text starts exactly at its offset (the reference: normalise it alone).
            expected = assemble([units[number - 1]], kind=kind).text
            assert result.text[offset:offset + len(expected)] == expected
        offsets = [offset for offset, _ in result.locations]
        assert offsets == sorted(offsets)


@pytest.mark.django_db
def test_stored_texts_are_append_only_in_the_database_itself():
    contract_set, _ = contract_set_get_or_create(name="Firm A")
    outcome = contract_import(contract_set=contract_set, filename="a.txt", data=b"Governing Law. Nevada.")
    text = outcome.contract.text
    with pytest.raises(AppendOnlyError):
        text.save()
    with pytest.raises(DatabaseError), transaction.atomic(), connection.cursor() as cursor:
        cursor.execute("UPDATE grading_contracttext SET text = 'forged' WHERE id = %s", [text.pk])
    assert ContractText.objects.get(pk=text.pk).text == "Governing Law. Nevada."


@pytest.mark.django_db
def test_the_text_hash_is_computed_from_the_text_and_titles_stay_unique_in_a_set():
    import hashlib

    contract_set, _ = contract_set_get_or_create(name="Firm A")
    first = contract_import(contract_set=contract_set, filename="folder/Agreement.txt", data=b"One.")
    second = contract_import(contract_set=contract_set, filename="other/Agreement.txt", data=b"Two.")
    assert first.contract.text.sha256 == hashlib.sha256(b"One.").hexdigest()
    assert (first.contract.title, second.contract.title) == ("Agreement", "Agreement (2)")


def test_a_pdf_over_the_page_limit_is_refused_before_its_text_is_read():
    with pytest.raises(DocumentRefused, match="3 pages; the limit is 2"):
        extract("a.pdf", files.pdf_with_text(), max_bytes=10_000_000, max_units=2)


def test_a_pdf_locked_only_by_an_owner_password_opens_as_in_any_reader():
    from pypdf import PdfReader, PdfWriter

    writer = PdfWriter(clone_from=PdfReader(io.BytesIO(files.pdf_with_text())))
    writer.encrypt(user_password="", owner_password="owner", algorithm="RC4-128")
    out = io.BytesIO()
    writer.write(out)
    assert "Governing Law" in extract("owner.pdf", out.getvalue(), **LIMITS).text
