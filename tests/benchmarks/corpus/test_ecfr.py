"""CFR XML: 1 CFR (General Provisions) as GPO publishes it in its eCFR bulk data, and 14 CFR parts 101-105 as the
CFR annual edition, imported into pinned snapshots of codes the project never saw (``cfr1``, ``cfr14``) through the
same service as corpus files; bad files name the element and its line and write nothing."""

from __future__ import annotations

import io
import json
import re
import xml.etree.ElementTree as ET  # the independent reading of the same file
from pathlib import Path

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.core.management import CommandError, call_command

from benchmarks.corpus import ParseError
from benchmarks.corpus.base import squash
from benchmarks.corpus.formats import ecfr_xml
from benchmarks.corpus.models import CorpusCode, Provision, SourceSnapshot
from benchmarks.suites.citations import citation_parse
from reviewapp.core.records.hashing import sha256_hex, sha256_json

ECFR = Path(__file__).parent / "data" / "ecfr"
ANNUAL = Path(__file__).parent / "data" / "cfr-annual" / "CFR-2015-title14-vol2-parts101-105.xml"
CFR14_JSONL = Path(__file__).parent / "data" / "cfr14-parts101-105.jsonl"
CURRENT = ECFR / "current" / "ECFR-title1.xml"
UPDATED = ECFR / "updated" / "ECFR-title1.xml"


@pytest.fixture(scope="module")
def title1():
    return ecfr_xml.parse(CURRENT.read_bytes(), filename=CURRENT.name)


def test_it_reads_every_section_of_the_title_with_its_divisions_notes_and_date(title1):
    assert title1.corpus == "cfr1" and title1.code_name == "Code of Federal Regulations, Title 1"
    assert title1.title == "Title 1—General Provisions (eCFR, amended through 2022-12-29)"
    assert len(title1.provisions) == 288
    first = title1.provisions[0]
    assert (first.citation, first.number, first.heading) == ("1 CFR 1.1", "1.1", "Definitions.")
    assert first.body.startswith("As used in this chapter, unless the context requires otherwise—\n"
                                 "Administrative Committee means the Administrative Committee")
    assert first.history == "[37 FR 23603, Nov. 4, 1972, as amended at 50 FR 12466, Mar. 28, 1985]"
    assert first.notes.startswith("Part 1 authority: 44 U.S.C. 1506; sec. 6, E.O. 10530")
    assert first.hierarchy == (("title", "1"), ("chapter", "I"), ("subchapter", "A"), ("part", "1"))
    assert first.chapter == "1/1" and first.chapter_title == "PART 1—DEFINITIONS" and first.as_of == "2022-12-29"
    assert first.official_url == "https://www.ecfr.gov/current/title-1/section-1.1"
    by_citation = {p.citation: p for p in title1.provisions}
    assert dict(by_citation["1 CFR 17.2"].hierarchy)["subpart"] == "B"
    reserved = by_citation["1 CFR 457.104-457.109"]  # "§§ 457.104–457.109 [Reserved]": a range, en dash read as -
    assert reserved.repealed and reserved.body == "Reserved." and reserved.official_url.endswith("/part-457")


def test_every_paragraph_of_every_section_is_in_its_text_as_the_standard_library_reads_the_file(title1):
    # An independent reading: xml.etree finds each DIV8 section and its P/FP paragraphs.
    root = ET.fromstring(CURRENT.read_bytes())  # noqa: S314 -- our own test file
    sections = [d for d in root.iter() if re.match(r"DIV\d", d.tag) and d.get("TYPE") == "SECTION"]
    assert len(sections) == len(title1.provisions)
    for div, provision in zip(sections, title1.provisions, strict=True):
        number = div.get("N", "").lstrip("§ ").replace("\u2013", "-")
        assert provision.number == number
        in_footnotes = {id(p) for f in div.iter("FTNT") for p in f.iter("P")}
        for p in (e for e in div.iter() if e.tag in ("P", "FP")):
            # Footnotes (FTNT) are kept with the notes, the rest is the text.
            assert _paragraph(p, id(p) in in_footnotes) in f"{provision.body}\n{provision.notes}", (number, p.text)


def _paragraph(p: ET.Element, in_footnote: bool) -> str:
    """A paragraph's words; a footnote's number (<SU> before <FTREF/>, or opening the footnote) written "[1]"."""
    children = list(p)
    words = [p.text or ""]
    for i, child in enumerate(children):
        before_ref = i + 1 < len(children) and children[i + 1].tag == "FTREF"
        opens_footnote = in_footnote and i == 0 and not (p.text or "").strip()
        if child.tag == "SU" and (before_ref or opens_footnote):
            words.append(f"[{''.join(child.itertext()).strip()}]")
        else:
            words.append("".join(child.itertext()))
        words.append(child.tail or "")
    return squash("".join(words))


def test_a_footnote_number_stays_apart_from_the_words_around_it(title1):
    by_citation = {p.citation: p for p in title1.provisions}
    aids = by_citation["1 CFR 8.5"]
    assert "respectively.) [1] Listings shall refer to" in aids.body
    assert aids.notes.startswith("[1] A three volume set")
    assert "copies. [1] However, if the document" in by_citation["1 CFR 18.1"].body


def test_a_part_answered_alone_by_the_versioner_api_reads_as_in_the_whole_title(title1):
    # ecfr.gov's versioner API answers a part as a bare <DIV5>, without the title around it.
    root = ET.fromstring(CURRENT.read_bytes())  # noqa: S314 -- our own test file
    part = next(d for d in root.iter("DIV5") if d.get("N") == "17")
    alone = ecfr_xml.parse(b'<?xml version="1.0" encoding="UTF-8"?>\n' + ET.tostring(part), filename="part-17.xml")
    whole = [p for p in title1.provisions if p.chapter == "1/17"]
    assert [(p.citation, p.heading, p.body, p.history, p.notes) for p in alone.provisions] == \
           [(p.citation, p.heading, p.body, p.history, p.notes) for p in whole]
    assert alone.provisions[0].hierarchy == (("title", "1"), ("part", "17"), ("subpart", "A"))


@pytest.mark.parametrize(("raw", "message"), [
    (b"<DLPSTEXTCLASS>\n<DIV1 N=\"1\" TYPE=\"TITLE\">\n<DIV8 N=\"1.1\" TYPE=\"SECTION\"><HEAD>x</HEAD>\n</DIV1>",
     r"not well-formed XML at line 4"),
    (b"<?xml version=\"1.0\"?>\n<!DOCTYPE x [<!ENTITY a \"b\">]>\n<DLPSTEXTCLASS/>", r"DOCTYPE/ENTITY"),
    (b"<html>\n<PART/>\n</html>", r"root <html> at line 1 is neither eCFR XML"),
    (b"<CFRDOC>\n<TITLE><CFRTITLE><TITLEHD><HD>Title 14</HD></TITLEHD></CFRTITLE>\n<PART><HD>Authority</HD>\n"
     b"<SECTION><SECTNO>101.1</SECTNO></SECTION></PART></TITLE></CFRDOC>",
     r"<PART> at line 3: no part number in its heading 'Authority'"),
    (b"<CFRDOC>\n<TITLE><CFRTITLE><TITLEHD><HD>Title 14</HD></TITLEHD></CFRTITLE>\n<PART><HD>PART 101</HD>\n"
     b"<SECTION><SUBJECT>Scope.</SUBJECT></SECTION></PART></TITLE></CFRDOC>",
     r"<SECTION> at line 4: a section without a <SECTNO>"),
    (b"<DLPSTEXTCLASS>\n<DIV1 N=\"1\" TYPE=\"TITLE\">\n<DIV5 N=\"2\" TYPE=\"PART\">\n"
     b"<DIV8 TYPE=\"SECTION\"><HEAD>Definitions.</HEAD></DIV8></DIV5></DIV1></DLPSTEXTCLASS>",
     r"<DIV8 TYPE=\"SECTION\"> at line 4: a section without a number"),
    (b"<DLPSTEXTCLASS>\n<DIV1 N=\"1\" TYPE=\"TITLE\">\n<DIV5 TYPE=\"PART\"/></DIV1></DLPSTEXTCLASS>",
     r"<DIV5 TYPE=\"PART\"> at line 3: a part needs a number N"),
    (b"<DLPSTEXTCLASS>\n<DIV1 N=\"1\" TYPE=\"TITLE\">\n<DIV8 N=\"1 1\" TYPE=\"SECTION\"/></DIV1></DLPSTEXTCLASS>",
     r"<DIV8 N=\"1 1\" TYPE=\"SECTION\"> at line 3: '1 1' is not a section number"),
    (b"<DLPSTEXTCLASS><DIV1 N=\"1\" TYPE=\"TITLE\"><HEAD>Title 1</HEAD></DIV1></DLPSTEXTCLASS>", r"no <DIV8"),
    (b"<DLPSTEXTCLASS><DIV5 N=\"2\" TYPE=\"PART\"/></DLPSTEXTCLASS>", r"no CFR title number"),
])
def test_a_bad_file_is_refused_naming_the_element_and_its_line(raw, message):
    with pytest.raises(ParseError, match=message):
        ecfr_xml.parse(raw, filename="bad.xml")


def test_the_command_imports_the_title_as_a_pinned_snapshot_with_citations_read_as_1_cfr_1_1(db):
    out = io.StringIO()
    call_command("import_corpus", str(CURRENT), stdout=out)
    assert "imported: cfr1 ECFR-title1.xml" in out.getvalue() and "288 sections, parser ecfr-xml v2" in out.getvalue()
    snapshot = SourceSnapshot.objects.get(corpus="cfr1")
    assert snapshot.sha256 == sha256_hex(CURRENT.read_bytes()) and snapshot.raw == CURRENT.read_bytes()
    section = Provision.objects.get(citation="1 CFR 17.2")
    # Hashed from the stored texts exactly as every parser's provisions are (corpus/services.py).
    assert section.content_sha256 == sha256_json({
        "citation": "1 CFR 17.2", "variant": 1, "heading": section.heading, "body": section.body,
        "history": section.history, "notes": section.notes, "repealed": False, "as_of": "2022-12-29",
        "hierarchy": {"title": "1", "chapter": "I", "subchapter": "E", "part": "17", "subpart": "B"}})
    assert section.passages.get().caption == "1 CFR 17.2. Procedure and timing for regular schedule."
    code = CorpusCode.objects.get(code="cfr1")
    assert code.citation_form == "1 CFR {number}"
    for written, citation in (("see 1 C.F.R. § 17.2(b)", "1 CFR 17.2"), ("1 cfr §17.2.", "1 CFR 17.2"),
                              ("1 CFR 457.104-457.109", "1 CFR 457.104-457.109")):
        parsed = citation_parse(written, default_corpus="cfr1", code=_pattern(code))
        assert parsed is not None and parsed.citation == citation, written
    call_command("import_corpus", str(CURRENT), stdout=out)
    assert "unchanged (no-op)" in out.getvalue() and SourceSnapshot.objects.filter(corpus="cfr1").count() == 1


def _pattern(code: CorpusCode):
    from benchmarks.corpus.selectors import corpus_citation_pattern

    return corpus_citation_pattern(corpus=code.code)


def test_a_bad_file_through_the_command_exits_non_zero_and_writes_nothing(db, tmp_path):
    raw = CURRENT.read_bytes()
    cut = raw.index(b'<DIV8 N="\xc2\xa7 17.3"')
    path = tmp_path / "ECFR-title1.xml"
    path.write_bytes(raw[:cut] + b'<DIV8 TYPE="SECTION"><HEAD>Criteria.</HEAD></DIV8>' + raw[cut:])
    line = raw[:cut].count(b"\n") + 1
    with pytest.raises(CommandError, match=rf'<DIV8 TYPE="SECTION"> at line {line}: a section without a number'):
        call_command("import_corpus", str(path))
    assert not SourceSnapshot.objects.exists() and not Provision.objects.exists() and not CorpusCode.objects.exists()
    with pytest.raises(CommandError, match="built-in code"):
        call_command("import_corpus", str(CURRENT), "--code", "usc")
    assert not SourceSnapshot.objects.exists()


def test_the_upload_page_takes_an_ecfr_file_without_a_code(admin_client_):
    response = admin_client_.post("/benchmarks/corpus/import/",
                                  {"code": "", "file": SimpleUploadedFile(CURRENT.name, CURRENT.read_bytes())})
    assert response.status_code == 302 and response["Location"] == "/benchmarks/corpus/cfr1/"
    assert Provision.objects.filter(corpus="cfr1").count() == 288
    bad = admin_client_.post("/benchmarks/corpus/import/",
                             {"code": "", "file": SimpleUploadedFile("x.xml", b"<DLPSTEXTCLASS><DIV1>")})
    assert bad.status_code == 400 and "not well-formed XML at line 1" in bad.content.decode()
    no_code = admin_client_.post("/benchmarks/corpus/import/",
                                 {"code": "", "file": SimpleUploadedFile("x.jsonl", b"{}")})
    assert no_code.status_code == 400 and "code: required" in no_code.content.decode()


def test_the_annual_edition_reads_as_the_corpus_file_made_from_the_same_volume():
    source = ecfr_xml.parse(ANNUAL.read_bytes(), filename=ANNUAL.name)
    assert source.corpus == "cfr14" and len(source.provisions) == 50
    assert source.title == "Title 14—Aeronautics and Space (CFR annual edition, Revised as of January 1, 2015)"
    first = source.provisions[0]
    assert (first.citation, first.heading, first.as_of) == ("14 CFR 101.1", "Applicability.", "2015-01-01")
    assert first.hierarchy == (("title", "14"), ("chapter", "I"), ("subchapter", "F"), ("part", "101"),
                               ("subpart", "A"))
    assert first.notes.startswith("Part 101 authority: 49 U.S.C. 106(g), 40103")
    # The corpus file was made from the same volume by another converter, which kept paragraphs but not tables.
    reference = {r["citation"].replace("§ ", ""): r for r in map(json.loads, CFR14_JSONL.read_text().splitlines())}
    assert [p.citation for p in source.provisions] == list(reference)
    with_tables = set()
    for p in source.provisions:
        r = reference[p.citation]
        assert (p.heading, p.history) == (r["heading"], r.get("history", "")), p.citation
        if p.body != r["text"]:
            assert p.body.startswith(r["text"]), p.citation
            with_tables.add(p.citation)
    assert with_tables == {"14 CFR 103.23", "14 CFR 105.17"}
    table = next(p for p in source.provisions if p.citation == "14 CFR 105.17").body
    assert "1,200 feet or less above the surface" in table.split("following table:", 1)[1]


def test_the_annual_edition_imports_as_a_snapshot_of_title_14(db):
    out = io.StringIO()
    call_command("import_corpus", str(ANNUAL), stdout=out)
    assert f"imported: cfr14 {ANNUAL.name}" in out.getvalue() and "50 sections" in out.getvalue()
    code = CorpusCode.objects.get(code="cfr14")
    assert (code.name, code.citation_form) == ("Code of Federal Regulations, Title 14", "14 CFR {number}")
    assert Provision.objects.get(citation="14 CFR 105.43").version_label == "Revised as of January 1, 2015"
