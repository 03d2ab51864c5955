"""Parsers over the real official files: counts, known citations and headings, repealed stubs."""

from __future__ import annotations

import pytest

from benchmarks.corpus import ParseError
from benchmarks.corpus.formats import hrs_json, nrs_html, uslm_xml


def _nrs(data_dir, chapter):
    return nrs_html.parse((data_dir / "statutes" / "nrs" / f"NRS-{chapter}.html").read_bytes(),
                          filename=f"NRS-{chapter}.html")


@pytest.fixture(scope="session")
def hrs_sections(data_dir):
    folder = data_dir / "statutes" / "hrs"
    meta = (folder / "index-meta.json").read_bytes()
    out = []
    for path in sorted(folder.glob("Vol*.json")):
        out += hrs_json.parse(path.read_bytes(), meta_raw=meta, filename=path.name).provisions
    return out


@pytest.mark.parametrize(("chapter", "count"), [("000", 21), ("001", 92), ("036", 1), ("432B", 188)])
def test_it_finds_every_nrs_section_including_second_versions(data_dir, chapter, count):
    assert len(_nrs(data_dir, chapter).provisions) == count


def test_it_reads_nrs_citation_heading_body_and_history_apart(data_dir):
    source = _nrs(data_dir, "036")
    (section,) = source.provisions
    assert source.parser_name == "nrs-html" and source.parser_version
    assert section.citation == "NRS 36.010"
    assert section.chapter == "36"
    assert section.heading == "Defendant asking affirmative relief may have provisional remedies."
    # windows-1252 right single quote decoded, CRLF wrapping collapsed
    assert section.body.startswith("When the defendant interposes a counterclaim")
    assert "defendant’s right to a provisional remedy" in section.body
    assert section.history == "[1911 CPA § 252; RL § 5194; NCL § 8750]"
    assert "1911 CPA" not in section.body
    assert section.official_url == "https://www.leg.state.nv.us/NRS/NRS-036.html#NRS036Sec010"


def test_it_keeps_links_inside_nrs_headings(data_dir):
    by_citation = {p.citation: p for p in _nrs(data_dir, "432B").provisions}
    assert by_citation["NRS 432B.322"].heading.startswith("Inapplicability of NRS 432B.220 to 432B.322, inclusive")
    assert by_citation["NRS 432B.220"].heading.startswith("Persons required to make report")
    assert by_citation["NRS 432B.020"].heading == "“Abuse or neglect of a child” defined."


def test_it_marks_the_repealed_nrs_stub_instead_of_dropping_it(data_dir):
    by_citation = {p.citation: p for p in _nrs(data_dir, "432B").provisions}
    stub = by_citation["NRS 432B.135"]
    assert stub.repealed
    assert stub.body.startswith("Repealed.")
    assert sum(p.repealed for p in by_citation.values()) == 1


def test_it_numbers_two_printed_versions_of_one_nrs_section(data_dir):
    versions = [p for p in _nrs(data_dir, "001").provisions if p.citation == "NRS 1.510"]
    assert [p.variant for p in versions] == [1, 2]
    assert "[Effective until" in versions[0].heading and "[Effective on" in versions[1].heading


def test_it_reads_all_5473_hrs_sections_with_308_repealed_stubs(hrs_sections):
    # The index says REPEALED of 315; eight of those pages print a live section under the number (346-51, 346-361,
    # 353-1, 478-5, 478-9, 580-42, 602-10, 605-15) and one index entry is a range stub (602-22 to 602-24, ...).
    assert len(hrs_sections) == 5473
    assert sum(p.repealed for p in hrs_sections) == 308
    assert all(p.citation.startswith("HRS § ") for p in hrs_sections)


def test_it_separates_hrs_body_history_and_notes(hrs_sections):
    by_citation = {p.citation: p for p in hrs_sections if p.variant == 1}
    deposits = by_citation["HRS § 521-44"]
    assert deposits.heading == "Security deposits."
    assert deposits.chapter == "521" and deposits.chapter_title == "RESIDENTIAL LANDLORD-TENANT CODE"
    assert deposits.body.startswith('(a) As used in this section "security deposit" means')
    assert deposits.history.startswith("[L 1972, c 132, pt of §1")
    assert deposits.notes.startswith("Case Notes")
    assert "Previous" not in deposits.body + deposits.notes
    assert by_citation["HRS § 521-1"].body == (
        "This chapter shall be known and may be cited as the Residential Landlord-Tenant Code.")
    # a section preceded by part headings and notes that cite its own number
    assert by_citation["HRS § 349-21"].heading == "Office of the long-term care ombudsman."
    assert by_citation["HRS § 501-5"].repealed


def test_it_drops_the_bracketed_section_mark_from_an_hrs_index_heading(hrs_sections):
    # index-meta.json prints "[§514B-191] Retaliation prohibited.": the mark is not part of the heading,
    # and the body must not begin by repeating the heading.
    section = next(p for p in hrs_sections if p.citation == "HRS § 514B-191")
    assert section.heading == "Retaliation prohibited."
    assert section.body.startswith("(a) An association, board, managing agent")
    assert section.history == "[L 2017, c 190, §1]"
    assert not any(p.heading.startswith(("[§", "§")) for p in hrs_sections)


def test_it_finds_the_hrs_section_mark_when_the_page_prints_another_number_than_the_index(hrs_sections):
    # The index numbers these 383-61.5, 514B-95.1 and 602-12 (second entry); the pages print §383-161, [§514B-95] and a
    # mark preceded by notes that cite "602-11 to 602-20": the section starts at the indented mark.
    by_citation = {(p.citation, p.variant): p for p in hrs_sections}
    assert by_citation["HRS § 383-61.5", 2].heading == "Waiver of rights void."
    assert by_citation["HRS § 514B-95.1", 1].heading == "Definitions."
    assert by_citation["HRS § 514B-95.1", 1].body.startswith("As used in this subpart:")
    court = by_citation["HRS § 602-12", 2]
    assert court.heading == "How constituted."
    assert court.body.startswith("The intermediate appellate court shall consist of a chief judge")
    assert court.history.startswith("[L 1979, c 111")


@pytest.mark.parametrize("number", ["346-152.7", "373C-33", "527-1", "551E-11", "604A-1", "663-10.99"])
def test_an_hrs_section_number_printed_with_a_non_breaking_hyphen_is_found(hrs_sections, number):
    # 69 pages print "§373C‑33": the heading was "‑33 Personnel." and the real heading began the body.
    section = next(p for p in hrs_sections if p.number == number and p.variant == 1)
    assert not section.heading.startswith(("‑", "-"))
    assert section.heading[0].isupper()
    assert not section.body.startswith(section.heading)


def test_it_hyphenates_citations_printed_with_a_non_breaking_hyphen(hrs_sections):
    assert not any("‑" in p.heading + p.body + p.history + p.notes for p in hrs_sections)
    venue = next(p for p in hrs_sections if p.number == "603-36")
    assert "section 603-21.5(a)(2)" in venue.body


@pytest.mark.parametrize(("number", "heading", "history"), [
    ("346-53.3", "Temporary assistance for needy families and food stamps for individuals with a felony conviction "
                 "which has as an element the possession, use, or distribution of a controlled substance.",
     "[L 1997, c 128, §2; am L 1999, c 27, §1]"),
    ("572-21", "Presumption of separate property.", "[L 1945, c 273, pt of §1; am L 1949, c 242, §3(a); RL 1955, "
                                                    "§326-1; HRS §510-1; ren L 1984, c 79, §1]"),
])
def test_an_hrs_heading_ends_at_its_own_period_and_the_history_is_kept(hrs_sections, number, heading, history):
    section = next(p for p in hrs_sections if p.number == number)
    assert section.heading == heading
    assert section.history == history
    assert section.body and not section.body.startswith(heading)


@pytest.mark.parametrize(("number", "first_words"), [
    ("480-11", "(a) Nothing in this chapter shall be construed to forbid"),
    ("501-261", None),
])
def test_an_hrs_heading_cut_short_in_the_index_does_not_swallow_the_first_paragraph(hrs_sections, number,
                                                                                    first_words):
    section = next(p for p in hrs_sections if p.number == number)
    assert section.heading.endswith(".") and len(section.heading) < 200
    assert "(a)" not in section.heading
    if first_words:
        assert section.body.startswith(first_words)


@pytest.mark.parametrize("number", ["350-6", "353-3", "604-18", "663-14", "667-14", "602-22", "480-31", "486-25"])
def test_an_hrs_range_stub_reads_repealed_without_the_rest_of_its_range_in_the_heading(hrs_sections, number):
    section = next(p for p in hrs_sections if p.number == number and p.variant == 1)
    assert section.repealed
    assert section.heading.rstrip(".") == "REPEALED"


@pytest.mark.parametrize(("number", "heading"), [
    ("346-51", "Public assistance and child welfare services administered by department."),
    ("478-5", "Usury not recoverable."),
    ("478-9", None), ("580-42", None), ("346-361", "Definitions."), ("353-1", None), ("602-10", None),
])
def test_a_live_hrs_section_below_an_old_repealed_stub_is_not_repealed(hrs_sections, number, heading):
    section = next(p for p in hrs_sections if p.number == number and p.variant == 1)
    assert not section.repealed
    assert "REPEALED" not in section.heading.upper() and "OLD" not in section.heading
    assert section.history.startswith("[") and "REPEALED" not in section.body
    assert not section.body.startswith(("L 19", "§"))
    if heading:
        assert section.heading == heading


@pytest.mark.parametrize(("name", "count"), [("usc01.xml", 39), ("usc09.xml", 31)])
def test_it_reads_us_code_sections_but_not_sections_quoted_in_notes(data_dir, name, count):
    source = uslm_xml.parse((data_dir / "statutes" / "usc" / name).read_bytes(), filename=name)
    assert len(source.provisions) == count
    assert len({p.citation for p in source.provisions}) == count


def test_it_reads_a_us_code_section(data_dir):
    source = uslm_xml.parse((data_dir / "statutes" / "usc" / "usc09.xml").read_bytes())
    by_citation = {p.citation: p for p in source.provisions}
    section = by_citation["9 U.S.C. § 2"]
    assert section.heading == "Validity, irrevocability, and enforcement of agreements to arbitrate"
    assert section.chapter == "9/1"
    assert section.body.startswith("A written provision in any maritime transaction")
    assert section.history == "(July 30, 1947, ch. 392, 61 Stat. 670.)"
    assert by_citation["9 U.S.C. § 10"].body.startswith("(a) In any of the following cases")


def test_a_us_code_heading_keeps_its_inline_date(data_dir):
    source = uslm_xml.parse((data_dir / "statutes" / "usc" / "usc09.xml").read_bytes())
    section = next(p for p in source.provisions if p.citation == "9 U.S.C. § 305")
    assert section.heading.endswith("Recognition and Enforcement of Foreign Arbitral Awards of June 10, 1958")


def test_us_code_title_and_chapter_headings_keep_their_inline_elements():
    raw = (b'<uscDoc xmlns="http://xml.house.gov/schemas/uslm/1.0" identifier="/us/usc/t7"><main><title>'
           b'<heading>Title of <i>Acts</i></heading><chapter><num value="2">2</num><heading>Act of '
           b'<date date="1958-06-10">June 10, 1958</date> rules</heading><section identifier="/us/usc/t7/s1">'
           b'<num value="1">1.</num><heading>Rule of <date>May 1, 2000</date></heading><content>Text.</content>'
           b'</section></chapter></title></main></uscDoc>')
    source = uslm_xml.parse(raw)
    (section,) = source.provisions
    assert source.title == "Title 7—Title of Acts"
    assert section.chapter_title == "Act of June 10, 1958 rules"
    assert section.heading == "Rule of May 1, 2000"


def test_a_us_code_footnote_marker_stays_apart_from_the_text_and_its_note_goes_to_the_notes(data_dir):
    source = uslm_xml.parse((data_dir / "statutes" / "usc" / "usc01.xml").read_bytes())
    section = next(p for p in source.provisions if p.citation == "1 U.S.C. § 112a")
    assert "are no longer in force,[1] (B) the agreements" in section.body
    assert "So in original" not in section.body
    assert section.notes.startswith("[1] So in original. The comma probably should be a semicolon.\n")


def test_parsers_reject_bytes_of_another_format():
    with pytest.raises(ParseError):
        nrs_html.parse(b"<html><body><p>no sections</p></body></html>")
    with pytest.raises(ParseError):
        uslm_xml.parse(b"<not-uslm/>")
    with pytest.raises(ParseError, match="DOCTYPE"):
        uslm_xml.parse(b'<?xml version="1.0"?><!DOCTYPE x [<!ENTITY a "b">]><x/>')
    with pytest.raises(ParseError):
        hrs_json.parse(b"[]", meta_raw=b'{"chapters": []}')


def test_a_uslm_file_declaring_an_unknown_encoding_is_refused_with_a_parse_error():
    # Found by the importer fuzz test: ElementTree raised LookupError, which escaped as a crash.
    from benchmarks.corpus import ParseError
    from benchmarks.corpus.formats.uslm_xml import parse

    raw = b'<?xml version="1.0" encoding="no-such-encoding"?><uscDoc identifier="/us/usc/t9"/>'
    with pytest.raises(ParseError, match="unreadable XML declaration"):
        parse(raw, filename="usc09.xml")
