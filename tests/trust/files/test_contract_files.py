"""Crafted contract files stay harmless: a DOCX bomb is refused by its part before parsing, a PDF that costs too
much time or memory is refused within bounds, and a PDF that trips pypdf's own limits is that file's refusal; in a
batch every file gets its own outcome (page and command), never a 500.

The crafted files are built by ``crafted`` at test time, smaller than its full-size defaults (the files an attacker
would send: 42 MB of DOCX XML, 100,000 PDF pages, a 400 MB PDF stream) but crafted the same way."""

from __future__ import annotations

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.core.management import call_command

from grading.contracts.extract import DocumentRefused, ReadBounds, extract
from grading.contracts.models import ContractSet, ContractText, SetContract
from grading.contracts.reader import docx_check
from grading.contracts.services import contract_import, contract_set_get_or_create, contracts_import
from tests.factories import client_for
from tests.grading.contracts import files
from tests.trust.files import crafted

LIMITS = {"max_bytes": 20_000_000, "max_units": 100_000}


def test_a_docx_bomb_is_refused_naming_its_part_before_python_docx_reads_it():
    bomb = crafted.docx_bomb(6_000_000)
    assert len(bomb) < 60_000  # 7 MB of XML in a few kilobytes (most of them a thumbnail)
    with pytest.raises(DocumentRefused, match=r"part word/document\.xml declares 7\.0 MB from .* decompression bomb"):
        extract("bomb.docx", bomb, **LIMITS)


def test_a_docx_whose_parts_inflate_past_the_absolute_cap_is_refused_naming_the_part():
    # Ordinary compression ratios, but more inflated bytes in all than the setting allows.
    with pytest.raises(DocumentRefused, match=r"part .* takes the DOCX past 20,000 bytes uncompressed"):
        docx_check(files.docx_bytes(), bounds=ReadBounds(docx_inflated_bytes=20_000))
    docx_check(files.docx_bytes(), bounds=ReadBounds())  # the real file passes the defaults


@pytest.mark.django_db
def test_a_docx_bomb_through_the_service_stores_nothing_and_says_why(settings):
    contract_set, _ = contract_set_get_or_create(name="Firm A")
    outcome = contract_import(contract_set=contract_set, filename="vendor.docx", data=crafted.docx_bomb(6_000_000))
    assert outcome.status == "refused" and "word/document.xml" in outcome.detail
    assert not ContractText.objects.exists()


@pytest.mark.django_db
def test_a_pdf_that_takes_too_long_to_read_is_refused_within_the_time_bound(settings):
    settings.CONTRACT_READ_SECONDS = 1
    contract_set, _ = contract_set_get_or_create(name="Firm A")
    # Thousands of pages sharing one content stream: a few hundred kilobytes, several seconds of pypdf.
    outcome = contract_import(contract_set=contract_set, filename="pages.pdf",
                              data=crafted.pdf_many_pages(8_000))
    assert outcome.status == "refused", outcome.detail
    assert "took more than 1 s of processing (setting CONTRACT_READ_SECONDS)" in outcome.detail
    assert not SetContract.objects.exists()


@pytest.mark.django_db
def test_a_docx_that_needs_too_much_memory_is_refused_within_the_memory_bound(settings):
    settings.CONTRACT_READ_MEMORY_MB = 90
    data = crafted.docx_long(4000, 400)  # 14 MB of text: python-docx's tree of it needs well over 90 MB
    contract_set, _ = contract_set_get_or_create(name="Firm A")
    outcome = contract_import(contract_set=contract_set, filename="long.docx", data=data)
    assert outcome.status == "refused", outcome.detail
    assert "needs more than 90 MB of memory (setting CONTRACT_READ_MEMORY_MB)" in outcome.detail


def test_a_pdf_past_pypdfs_own_limits_is_that_files_refusal():
    with pytest.raises(DocumentRefused, match="exceeds the reader's limits"):
        extract("stream.pdf", crafted.pdf_stream_bomb(80_000_000), **LIMITS)


def _batch():
    return [("first.txt", b"FIRST AGREEMENT\nGoverning law: Nevada.\n"),
            ("stream.pdf", crafted.pdf_stream_bomb(80_000_000)),
            ("last.txt", b"LAST AGREEMENT\nTermination on notice.\n")]


@pytest.mark.django_db
def test_a_batch_upload_with_a_pypdf_limit_error_names_each_files_outcome_and_is_no_500(admin_user_):
    contract_set, _ = contract_set_get_or_create(name="Firm A")
    response = client_for(admin_user_).post(f"/cuad/contracts/{contract_set.pk}/", {
        "files": [SimpleUploadedFile(name, data) for name, data in _batch()]})
    html = response.content.decode()
    assert response.status_code == 200
    assert "first.txt</strong>" in html and "last.txt</strong>" in html
    assert "stream.pdf</strong>:\n  refused: a PDF that exceeds the reader&#x27;s limits" in html
    assert sorted(contract_set.contracts.values_list("title", flat=True)) == ["first", "last"]


@pytest.mark.django_db
def test_the_command_names_the_pypdf_limit_file_and_imports_the_rest(tmp_path, capsys):
    for name, data in _batch():
        (tmp_path / name).write_bytes(data)
    call_command("import_contracts", *[str(tmp_path / name) for name, _ in _batch()], "--set", "Firm A")
    out, err = capsys.readouterr()
    assert "stream.pdf: a PDF that exceeds the reader's limits" in err
    assert "2 imported, 0 already in the set (nothing new stored), 1 refused" in out
    assert sorted(ContractSet.objects.get(name="Firm A").contracts.values_list("title", flat=True)) == [
        "first", "last"]


@pytest.mark.django_db
def test_a_batch_stops_reading_new_files_when_it_has_used_its_time(settings):
    settings.CONTRACT_BATCH_SECONDS = 0
    contract_set, _ = contract_set_get_or_create(name="Firm A")
    outcomes = contracts_import(contract_set=contract_set, files=_batch()[::2])
    assert [o.status for o in outcomes] == ["refused", "refused"]
    assert all("this batch used its 0 s (setting CONTRACT_BATCH_SECONDS)" in o.detail for o in outcomes)
    assert not SetContract.objects.exists()


def _central_entry_edited(**edits: bytes) -> bytes:
    """The real DOCX with its first central directory entry edited: ``at<offset>=bytes`` each."""
    data = bytearray(files.docx_bytes())
    entry = data.index(b"PK\x01\x02")
    for where, value in edits.items():
        offset = entry + int(where.removeprefix("at"))
        data[offset:offset + len(value)] = value
    return bytes(data)


@pytest.mark.parametrize("data, why", [
    (_central_entry_edited(at6=b"\x51"), "zip file version 8.1"),  # "version needed to extract": 8.1
    # The UTF-8 flag (bit 11 of the flags) on a file name that is not UTF-8.
    (_central_entry_edited(at8=b"\x00\x08", at46=b"\xff"), "can't decode"),
], ids=["version", "name"])
def test_a_zip_whose_directory_python_cannot_read_is_refused_as_that_files_error(data, why):
    # Found by fuzzing the ZIP's central directory: zipfile raised NotImplementedError or UnicodeDecodeError out
    # of the type sniffing, past every refusal (a 500 on the upload page).
    with pytest.raises(DocumentRefused, match=f"a damaged ZIP archive, not a readable DOCX .*{why}"):
        extract("edited.docx", data, **LIMITS)


@pytest.mark.django_db
def test_a_pdf_whose_font_names_half_a_surrogate_pair_imports_with_a_replacement_character(admin_user_):
    # Found while bounding the readers: pypdf hands back U+D835 alone, which cannot be encoded, so hashing the
    # text raised UnicodeEncodeError: a 500 that stopped the batch after the file before it.
    contract_set, _ = contract_set_get_or_create(name="Firm A")
    response = client_for(admin_user_).post(f"/cuad/contracts/{contract_set.pk}/", {"files": [
        SimpleUploadedFile("glyphs.pdf", crafted.pdf_lone_surrogate()),
        SimpleUploadedFile("after.txt", b"AFTER AGREEMENT\nNotice: ten days.\n")]})
    assert response.status_code == 200
    assert sorted(contract_set.contracts.values_list("title", flat=True)) == ["after", "glyphs"]
    assert contract_set.contracts.get(title="glyphs").text.text == "B\ufffdB"
