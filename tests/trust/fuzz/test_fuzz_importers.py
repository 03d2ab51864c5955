"""Property-based fuzzing of the importers: statute files (three parsers and the import service), suite files and
the CUAD JSON loader. Whatever the bytes, each answers with a result or its own clear error naming where, and a
refused file leaves every table exactly as it was."""

from __future__ import annotations

import json

import pytest
from hypothesis import given
from hypothesis import strategies as st

from benchmarks.corpus import ParseError
from benchmarks.corpus.formats import ecfr_xml, hrs_json, nrs_html, uslm_xml
from tests.trust.fuzz_support import (
    FUZZ,
    HRS_META,
    HRS_VOLUME,
    NRS_PAGE,
    USLM,
    json_values,
    mutated,
    mutated_text,
    row_counts,
)

# --------------------------------------------------------------------------- the three parsers (pure)


def test_the_seed_files_are_valid_so_the_mutations_start_from_a_real_file():
    assert [p.number for p in nrs_html.parse(NRS_PAGE.encode("cp1252")).provisions] == ["999.010", "999.020"]
    hrs = hrs_json.parse(json.dumps(HRS_VOLUME).encode(), meta_raw=json.dumps(HRS_META).encode(), filename="v.json")
    assert [p.citation for p in hrs.provisions] == ["HRS § 521-1", "HRS § 521-2"]
    assert [p.number for p in uslm_xml.parse(USLM.encode()).provisions] == ["1", "2"]


def _parses_or_says_where(parse, raw: bytes) -> None:
    try:
        source = parse(raw)
    except ParseError as error:
        assert str(error).strip()
        return
    assert source.provisions  # a file that parses has at least one section


@FUZZ
@given(raw=st.binary(max_size=600) | mutated_text(NRS_PAGE).map(lambda t: t.encode("utf-8", "surrogatepass")))
def test_the_nrs_parser_answers_sections_or_a_parse_error(raw):
    _parses_or_says_where(lambda b: nrs_html.parse(b, filename="NRS-999.html"), raw)


@FUZZ
@given(raw=st.binary(max_size=600) | mutated_text(USLM).map(lambda t: t.encode("utf-8", "surrogatepass")))
def test_the_uslm_parser_answers_sections_or_a_parse_error(raw):
    _parses_or_says_where(lambda b: uslm_xml.parse(b, filename="usc09.xml"), raw)


# The two layouts of GPO's CFR XML, as small as they come: eCFR (DIV1..DIV8) and the annual edition (CFRDOC).
ECFR = ('<?xml version="1.0" encoding="UTF-8" ?>\n<DLPSTEXTCLASS><TEXT><BODY><ECFRBRWS>'
        '<AMDDATE>Dec. 29, 2022</AMDDATE>\n'
        '<DIV1 N="1" NODE="1:1" TYPE="TITLE"><HEAD>Title 1—General Provisions</HEAD>\n'
        '<DIV5 N="2" NODE="1:1.0.1.1.2" TYPE="PART"><HEAD>PART 2—GENERAL</HEAD><AUTH><HED>Authority:</HED>'
        '<PSPACE>44 U.S.C. 1506.</PSPACE></AUTH>\n<DIV8 N="§ 2.1" TYPE="SECTION"><HEAD>§ 2.1   Scope.</HEAD>'
        '<P>(a) This <I>chapter</I> applies.</P><CITA>[37 FR 23603]</CITA></DIV8>\n'
        '<DIV8 N="§ 2.2" TYPE="SECTION"><HEAD>§ 2.2   Office.</HEAD><P>The Office.</P></DIV8></DIV5></DIV1>'
        '</ECFRBRWS></BODY></TEXT></DLPSTEXTCLASS>\n')
CFR_ANNUAL = ('<?xml version="1.0" encoding="UTF-8"?>\n<CFRDOC><AMDDATE>Jan. 1, 2015</AMDDATE><FMTR><TITLEPG>'
              '<TITLENUM>Title 14</TITLENUM><REVISED>Revised as of January 1, 2015</REVISED></TITLEPG></FMTR>\n'
              '<TITLE><CHAPTER><TOC><TOCHD><HD>CHAPTER I—FAA</HD></TOCHD></TOC><SUBCHAP><HD>SUBCHAPTER F—AIR</HD>\n'
              '<PART><HD>PART 101—BALLOONS</HD><SUBPART><HD>Subpart A—General</HD><SECTION><SECTNO>§ 101.1</SECTNO>'
              '<SUBJECT>Applicability.</SUBJECT><P>(a) This part.</P><CITA>[Doc. No. 1580]</CITA></SECTION>\n'
              '<SECTION><SECTNO>§ 101.3</SECTNO><SUBJECT>Waivers.</SUBJECT><P>No person.</P></SECTION></SUBPART>'
              '</PART></SUBCHAP></CHAPTER></TITLE></CFRDOC>\n')


def test_the_cfr_seed_files_are_valid():
    assert [p.citation for p in ecfr_xml.parse(ECFR.encode()).provisions] == ["1 CFR 2.1", "1 CFR 2.2"]
    assert [p.citation for p in ecfr_xml.parse(CFR_ANNUAL.encode()).provisions] == ["14 CFR 101.1", "14 CFR 101.3"]


@FUZZ
@given(raw=st.binary(max_size=600) | mutated_text(ECFR).map(lambda t: t.encode("utf-8", "surrogatepass"))
       | mutated_text(CFR_ANNUAL).map(lambda t: t.encode("utf-8", "surrogatepass")))
def test_the_cfr_xml_parser_answers_sections_or_a_parse_error(raw):
    _parses_or_says_where(lambda b: ecfr_xml.parse(b, filename="ECFR-title1.xml"), raw)


@FUZZ
@given(volume=mutated(HRS_VOLUME) | json_values, meta=mutated(HRS_META) | json_values)
def test_the_hrs_parser_answers_sections_or_a_parse_error(volume, meta):
    raw, meta_raw = json.dumps(volume).encode(), json.dumps(meta).encode()
    _parses_or_says_where(lambda b: hrs_json.parse(b, meta_raw=meta_raw, filename="Vol12.json"), raw)


@FUZZ
@given(raw=st.binary(max_size=200))
def test_the_hrs_parser_refuses_bytes_that_are_not_json(raw):
    _parses_or_says_where(lambda b: hrs_json.parse(b, meta_raw=raw, filename="Vol12.json"), raw)


# --------------------------------------------------------------------------- the statute import service


def _import(tmp_path, fmt: str, files: dict[str, bytes]):
    from benchmarks.corpus.services import statutes_import

    folder = tmp_path / fmt
    folder.mkdir(exist_ok=True)
    for old in folder.iterdir():
        old.unlink()
    for name, raw in files.items():
        (folder / name).write_bytes(raw)
    return statutes_import(fmt=fmt, paths=[folder])


def _import_is_whole_or_nothing(tmp_path, fmt: str, files: dict[str, bytes]) -> None:
    from benchmarks.corpus.models import Provision
    from benchmarks.corpus.services import ImportProblem

    before = row_counts()
    try:
        outcomes = _import(tmp_path, fmt, files)
    except (ImportProblem, ParseError) as error:
        assert str(error).strip()
        assert row_counts() == before, f"a refused {fmt} import wrote rows: {error}"
        return
    for outcome in outcomes:
        stored = Provision.objects.filter(snapshot=outcome.snapshot).count()
        assert stored == outcome.snapshot.provision_count


@FUZZ
@given(page=mutated_text(NRS_PAGE))
def test_a_fuzzed_nrs_page_is_imported_whole_or_refused_with_nothing_written(db, tmp_path, page):
    _import_is_whole_or_nothing(tmp_path, "nrs-html", {"NRS-999.html": page.encode("cp1252", "replace")})


@FUZZ
@given(xml=mutated_text(USLM))
def test_a_fuzzed_uslm_title_is_imported_whole_or_refused_with_nothing_written(db, tmp_path, xml):
    _import_is_whole_or_nothing(tmp_path, "uslm-xml", {"usc09.xml": xml.encode("utf-8", "replace")})


@FUZZ
@given(volume=mutated(HRS_VOLUME), meta=mutated(HRS_META) | st.just(HRS_META))
def test_a_fuzzed_hrs_volume_is_imported_whole_or_refused_with_nothing_written(db, tmp_path, volume, meta):
    files = {"Vol12_Ch0501-0588.json": json.dumps(volume).encode(), "index-meta.json": json.dumps(meta).encode()}
    _import_is_whole_or_nothing(tmp_path, "hrs-json", files)


# --------------------------------------------------------------------------- suite files


@pytest.fixture
def suite_corpus(db):
    from tests.benchmarks.conftest import import_synthetic

    import_synthetic([("999.010", "Deposits.", "The landlord shall return the deposit."),
                      ("999.020", "Notice.", "A tenant must be given notice."),
                      ("999.030", "Fees.", "A fee applies to an appeal.")], key="fuzz-suite.html")


VALID_SUITE = {
    "name": "fuzz-suite", "version": 1, "corpus": "nrs", "description": "fuzzing",
    "families": [{"id": "fam-a", "split": "dev"}, {"id": "fam-b", "split": "heldout"}],
    "queries": [
        {"id": "q1", "kind": "ranking", "split": "dev", "family": "fam-a", "text": "When is a deposit returned?",
         "targets": ["NRS 999.010", {"citation": "NRS 999.020", "provisional": False, "note": "n"}]},
        {"id": "q2", "kind": "ranking", "split": "heldout", "family": "fam-b", "text": "What fee applies?",
         "targets": [{"citation": "NRS 999.030"}]},
        {"id": "oc1", "kind": "outside_corpus", "text": "What is the gasoline tax in Utah?"},
        {"id": "ec1", "kind": "exact_citation", "text": "NRS 999.010", "expected_citation": "NRS 999.010"},
    ],
}


def test_the_seed_suite_is_valid(suite_corpus):
    from benchmarks.suites.services import suite_import

    suite, created = suite_import(raw=json.dumps(VALID_SUITE).encode(), filename="s.json")
    assert created and suite.queries.count() == 4


@FUZZ
@given(data=mutated(VALID_SUITE, rounds=4) | json_values, version=st.integers(1, 10**6))
def test_a_fuzzed_suite_is_frozen_whole_or_refused_naming_the_query_and_field(suite_corpus, data, version):
    from benchmarks.suites.files import SuiteInvalid
    from benchmarks.suites.services import suite_import

    if isinstance(data, dict) and data.get("version") == 1:
        data["version"] = version  # distinct versions: each valid example freezes a new suite
    before = row_counts()
    try:
        suite, created = suite_import(raw=json.dumps(data).encode(), filename="fuzz.json")
    except SuiteInvalid as error:
        assert error.problems and all(p.where and p.field and p.message for p in error.problems)
        assert row_counts() == before, str(error)
        return
    if created:
        assert suite.queries.count() == len(data["queries"])


@FUZZ
@given(raw=st.binary(max_size=300), yaml=st.booleans())
def test_suite_files_that_are_not_json_or_yaml_objects_are_refused_as_files(suite_corpus, raw, yaml):
    from benchmarks.suites.files import SuiteInvalid
    from benchmarks.suites.services import suite_import

    before = row_counts()
    with pytest.raises(SuiteInvalid) as refused:
        suite_import(raw=raw, filename="fuzz.yaml" if yaml else "fuzz.json")
    assert refused.value.problems[0].where == "suite"
    assert row_counts() == before


# --------------------------------------------------------------------------- CUAD JSON


def _cuad_doc() -> dict:
    from tests.grading.cuad_fixture import cuad_bytes

    return json.loads(cuad_bytes())


@FUZZ
@given(doc=mutated(_cuad_doc(), rounds=3) | json_values | st.binary(max_size=200))
def test_a_fuzzed_cuad_file_is_loaded_whole_or_refused_naming_where(db, tmp_path, doc):
    from grading.dataset.cuad_file import CuadFileError
    from grading.dataset.models import Contract, Span
    from grading.dataset.services import CuadLoadError, cuad_load

    path = tmp_path / "CUAD_v1.json"
    path.write_bytes(doc if isinstance(doc, bytes) else json.dumps(doc).encode())
    before = row_counts()
    try:
        result = cuad_load(path=path)
    except (CuadFileError, CuadLoadError) as error:
        message = str(error)
        assert "CUAD_v1.json" in message
        assert row_counts() == before, message
        return
    dataset = result.dataset
    assert Contract.objects.filter(dataset=dataset).count() == dataset.n_contracts
    assert Span.objects.filter(contract__dataset=dataset).count() == dataset.n_spans
