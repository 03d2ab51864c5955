"""Corpus files (docs/corpus-format.md): a code the project never saw, 14 CFR parts 101-105, imported from JSON
Lines or CSV into a pinned snapshot, its citations read, its sections searched and shown with their header."""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path

import pytest
from django.core.management import CommandError, call_command

from benchmarks.corpus import corpus_file
from benchmarks.corpus.corpus_file import CorpusFileInvalid
from benchmarks.corpus.models import CorpusCode, Provision, SourceSnapshot
from benchmarks.corpus.services import ImportProblem, corpus_file_import
from benchmarks.suites.citations import citation_parse

CFR = Path(__file__).parent / "data" / "cfr14-parts101-105.jsonl"


def _lines() -> list[dict]:
    return [json.loads(line) for line in CFR.read_text().splitlines()]


def _jsonl(records: list[dict]) -> bytes:
    return ("\n".join(json.dumps(r, ensure_ascii=False) for r in records) + "\n").encode()


def _csv(records: list[dict]) -> bytes:
    out = io.StringIO()
    writer = csv.DictWriter(out, fieldnames=list(corpus_file.FIELDS))
    writer.writeheader()
    writer.writerows(records)
    return out.getvalue().encode()


@pytest.fixture
def cfr14(db):
    return corpus_file_import(code="cfr14", raw=CFR.read_bytes(), filename=CFR.name, retrieved_from=str(CFR))


def test_it_reads_every_line_of_the_cfr_file_with_its_hierarchy_date_and_version():
    source = corpus_file.parse(CFR.read_bytes(), code="cfr14", filename=CFR.name)
    assert len(source.provisions) == 50
    first = source.provisions[0]
    assert first.citation == "14 CFR § 101.1" and first.number == "101.1" and first.heading == "Applicability."
    assert first.body.startswith("(a) This part prescribes rules governing the operation in the United States")
    assert first.hierarchy == (("title", "14"), ("part", "101")) and first.chapter == "14/101"
    assert first.as_of == "2015-01-01" and first.version_label == "revised as of January 1, 2015"
    assert source.code_name == "Code of Federal Regulations, Title 14"
    assert source.jurisdiction == "United States (federal)"


@pytest.mark.parametrize("encode", [_jsonl, _csv])
def test_it_names_the_line_and_field_of_every_bad_line(encode):
    records = [{**r, "text": r["text"].replace("\n", " ")} for r in _lines()[:4]]  # one physical line each
    records[1] = {**records[1], "as_of": "1 Jan 2015"}
    records[2] = {**records[2], "url": ""}
    records[3] = {**records[3], "jurisdiction": "Nevada"}
    with pytest.raises(CorpusFileInvalid) as refused:
        corpus_file.parse(encode(records), code="cfr14", filename="bad." + ("csv" if encode is _csv else "jsonl"))
    offset = 1 if encode is _csv else 0  # the header is line 1 of a CSV file
    found = {(p.line, p.field) for p in refused.value.problems}
    assert found == {(2 + offset, "as_of"), (3 + offset, "url"), (4 + offset, "jurisdiction")}
    assert f"line {2 + offset}: as_of: must be a date written YYYY-MM-DD" in str(refused.value)


def test_it_refuses_a_line_that_is_not_json_an_unknown_field_and_a_repeated_citation():
    good = _lines()[:2]
    raw = _jsonl(good) + b'{"citation": "14 CFR \\u00a7 1"\n' + _jsonl([{**good[0], "penalty": "x"}, good[0]])
    with pytest.raises(CorpusFileInvalid) as refused:
        corpus_file.parse(raw, code="cfr14", filename="bad.jsonl")
    found = {(p.line, p.field) for p in refused.value.problems}
    # line 4 is also the second 14 CFR § 101.1 with the same (no) version label
    assert found == {(3, "line"), (4, "penalty"), (4, "citation"), (5, "citation")}


def test_a_repeated_citation_and_version_is_refused_naming_the_line_it_repeats():
    good = _lines()[:3]
    with pytest.raises(CorpusFileInvalid) as refused:
        corpus_file.parse(_jsonl([*good, good[1]]), code="cfr14", filename="bad.jsonl")
    assert str(refused.value) == (
        "corpus file bad.jsonl rejected:\n  - line 4: citation: 14 CFR § 101.3 (version 'revised as of January 1, "
        "2015') is already on line 2; give the second version its own 'version' label")


def test_two_versions_of_a_citation_are_its_variants_in_file_order():
    first, second = _lines()[:2]
    later = {**first, "version": "effective 2026-01-01", "text": "New text."}
    source = corpus_file.parse(_jsonl([first, second, later]), code="cfr14", filename="two.jsonl")
    assert [(p.citation, p.variant) for p in source.provisions] == [
        ("14 CFR § 101.1", 1), ("14 CFR § 101.3", 1), ("14 CFR § 101.1", 2)]


def test_a_citation_with_an_escaped_lone_surrogate_is_compared_like_any_other():
    first, second = _lines()[:2]
    odd = {**first, "citation": "14 CFR § 101.\ud800"}
    raw = "".join(json.dumps(r) + "\n" for r in (odd, second, odd)).encode()  # json.dumps escapes the surrogate
    with pytest.raises(CorpusFileInvalid) as refused:
        corpus_file.parse(raw, code="cfr14", filename="odd.jsonl")
    assert [(p.line, p.field) for p in refused.value.problems] == [(3, "citation")]
    assert "is already on line 1" in str(refused.value)


def test_the_command_imports_a_cfr_file_into_a_pinned_snapshot_hashed_like_the_official_parsers(db):
    out = io.StringIO()
    call_command("import_corpus", str(CFR), "--code", "cfr14", stdout=out)
    assert "imported: cfr14 cfr14-parts101-105.jsonl" in out.getvalue() and "50 sections" in out.getvalue()
    snapshot = SourceSnapshot.objects.get(corpus="cfr14")
    assert snapshot.parser_name == "corpus-file" and snapshot.raw == CFR.read_bytes()
    section = Provision.objects.get(citation="14 CFR § 103.1")
    assert section.hierarchy == {"title": "14", "part": "103"} and section.as_of.isoformat() == "2015-01-01"
    assert section.passages.get().caption == "14 CFR § 103.1. Applicability."
    code = CorpusCode.objects.get(code="cfr14")
    assert (code.name, code.jurisdiction) == ("Code of Federal Regulations, Title 14", "United States (federal)")
    call_command("import_corpus", str(CFR), "--code", "cfr14", stdout=out)
    assert "unchanged (no-op)" in out.getvalue() and SourceSnapshot.objects.filter(corpus="cfr14").count() == 1


def test_the_command_exits_non_zero_and_imports_nothing_when_a_line_is_bad(db, tmp_path):
    records = _lines()
    records[30] = {**records[30], "heading": ""}
    path = tmp_path / "cfr14.jsonl"
    path.write_bytes(_jsonl(records))
    with pytest.raises(CommandError, match=r"line 31: heading: required"):
        call_command("import_corpus", str(path), "--code", "cfr14")
    assert not SourceSnapshot.objects.exists() and not Provision.objects.exists()
    assert not CorpusCode.objects.exists()


def test_a_csv_file_of_the_same_sections_gives_the_same_provision_hashes(db):
    jsonl = corpus_file_import(code="cfr14", raw=CFR.read_bytes(), filename=CFR.name).snapshot
    as_csv = _csv([{k: r.get(k, "") for k in corpus_file.FIELDS} for r in _lines()])
    csv_snapshot = corpus_file_import(code="cfr14", raw=as_csv, filename="cfr14.csv").snapshot
    assert list(jsonl.provisions.order_by("position").values_list("content_sha256", flat=True)) == \
        list(csv_snapshot.provisions.order_by("position").values_list("content_sha256", flat=True))


def test_a_built_in_code_and_a_second_file_that_renames_the_code_are_refused(cfr14):
    with pytest.raises(ImportProblem, match="built-in code"):
        corpus_file_import(code="nrs", raw=CFR.read_bytes(), filename=CFR.name)
    renamed = _jsonl([{**r, "code": "Title 14 CFR"} for r in _lines()])
    with pytest.raises(ImportProblem, match="code 'Title 14 CFR' differs"):
        corpus_file_import(code="cfr14", raw=renamed, filename="other.jsonl")


def test_a_given_citation_pattern_must_read_every_citation_back(db):
    with pytest.raises(CorpusFileInvalid, match=r"line 1: citation: the citation pattern reads"):
        corpus_file_import(code="cfr14", raw=CFR.read_bytes(), filename=CFR.name,
                           citation_pattern=r"CFR (?P<number>\d+)", citation_form="14 CFR § {number}")
    outcome = corpus_file_import(code="cfr14", raw=CFR.read_bytes(), filename=CFR.name,
                                 citation_pattern=r"14\s*C\.?F\.?R\.?\s*(?:§\s*)?(?P<number>\d+\.\d+)",
                                 citation_form="14 CFR § {number}")
    assert outcome.created


def test_lawyers_citations_of_the_imported_code_are_read_in_its_own_form(cfr14):
    from benchmarks.corpus.selectors import corpus_citation_pattern

    code = corpus_citation_pattern(corpus="cfr14")
    for written in ("14 C.F.R. § 105.17(b)", "see 14 CFR 105.17.", "14 cfr §105.17"):
        parsed = citation_parse(written, default_corpus="cfr14", code=code)
        assert parsed is not None and parsed.citation == "14 CFR § 105.17", written
    assert citation_parse("9 U.S.C. § 2", default_corpus="cfr14", code=code).corpus == "usc"


def test_the_workbench_search_and_the_legal_header_work_on_the_imported_code(cfr14):
    from benchmarks.labels.kinds import statute_source_context
    from benchmarks.suites.selectors import workbench_search

    hits = workbench_search(corpus="cfr14", text="ultralight vehicle operation at night")
    assert hits and any(h.citation.startswith("14 CFR § 103.") for h in hits)
    cited = workbench_search(corpus="cfr14", text="14 C.F.R. § 101.1")
    assert cited[0].citation == "14 CFR § 101.1" and cited[0].by_citation
    section = Provision.objects.get(citation="14 CFR § 105.1")
    context = statute_source_context({"provision": section.pk})
    facts = dict(context.facts)
    assert facts["Jurisdiction"] == "United States (federal)"
    assert facts["Code"] == "Code of Federal Regulations, Title 14"
    assert facts["Title / chapter"] == "Title 14, part 105: Parachute Operations"
    assert facts["As of"] == "2015-01-01" and facts["Version"] == "revised as of January 1, 2015"
    assert context.url == section.official_url


def test_the_corpus_pages_list_and_show_the_imported_code(cfr14, stakeholder_client):
    index = stakeholder_client.get("/benchmarks/")
    assert "Code of Federal Regulations, Title 14" in index.content.decode()
    page = stakeholder_client.get("/benchmarks/corpus/cfr14/")
    assert page.status_code == 200 and "14/101" in page.content.decode()
    section = Provision.objects.get(citation="14 CFR § 101.1")
    assert "Code of Federal Regulations, Title 14" in stakeholder_client.get(
        f"/benchmarks/corpus/provisions/{section.pk}/").content.decode()
