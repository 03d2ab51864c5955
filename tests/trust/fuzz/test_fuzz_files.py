"""Property-based fuzzing of every file importer an outsider's file reaches: contract DOCX and PDF (through the
bounded reader), eCFR XML and CSV / JSON Lines corpora (through the corpus import service), suite YAML, and
Label Studio and Argilla label exchange files (JSON and zip). Whatever the bytes, each importer answers a clean
import or its own clear error, and a refused file leaves every table exactly as it was.

A fixed budget: ``FILES`` examples per property (20; fewer where each example starts the bounded reader's child
process, 10), so the module runs in CI in well under a minute. Time and memory per file are bounded by the reader
itself (CPU and address-space limits of its child); the largest figures a fuzzed input reached are measured
outside the tests (``/usr/bin/time -v`` over this module), never asserted here.
"""

from __future__ import annotations

import csv
import io
import json
import zipfile
from pathlib import Path

import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.grading.contracts import files
from tests.trust.files import crafted
from tests.trust.fuzz.test_fuzz_importers import ECFR, VALID_SUITE, suite_corpus  # noqa: F401 (a fixture)
from tests.trust.fuzz_support import json_values, mutated, mutated_text, row_counts

FILES = settings(max_examples=20, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture,
                                                                        HealthCheck.too_slow])
# Each DOCX or PDF example starts the reader's child process (a few tenths of a second).
CHILD = settings(FILES, max_examples=10)


@st.composite
def mutated_bytes(draw, data: bytes, *, tail: int = 0) -> bytes:
    """Bytes with a few random edits: flipped bytes, a slice cut out, duplicated or overwritten with noise;
    ``tail``: only in the last that many bytes (a ZIP's central directory, a PDF's cross-reference table)."""
    data = bytearray(data)
    for _ in range(draw(st.integers(1, 4))):
        at = draw(st.integers(max(len(data) - tail, 0) if tail else 0, max(len(data) - 1, 0)))
        action = draw(st.sampled_from(["flip", "cut", "duplicate", "noise", "truncate"]))
        if action == "flip" and data:
            data[at] ^= draw(st.integers(1, 255))
        elif action == "cut":
            del data[at:at + draw(st.integers(1, 200))]
        elif action == "duplicate":
            data[at:at] = data[at:at + draw(st.integers(1, 200))]
        elif action == "noise":
            noise = draw(st.binary(min_size=1, max_size=40))
            data[at:at + len(noise)] = noise
        else:
            data = data[:at]
    return bytes(data)


def _rezipped(archive: bytes, name: str, content: bytes) -> bytes:
    """The same ZIP with part ``name`` replaced: the archive stays valid, so the parser inside is reached."""
    source = zipfile.ZipFile(io.BytesIO(archive))
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as built:
        for info in source.infolist():
            built.writestr(info.filename, content if info.filename == name else source.read(info))
    return out.getvalue()


# --------------------------------------------------------------------------- contracts (DOCX, PDF)


def _document_xml() -> str:
    return zipfile.ZipFile(io.BytesIO(files.docx_bytes())).read("word/document.xml").decode()


@pytest.fixture
def contract_set(db):
    from grading.contracts.services import contract_set_get_or_create

    return contract_set_get_or_create(name="Fuzzed contracts")[0]


def _imported_whole_or_refused(contract_set, filename: str, data: bytes) -> None:
    from grading.contracts.models import SetContract
    from grading.contracts.services import contract_import

    before = row_counts()
    outcome = contract_import(contract_set=contract_set, filename=filename, data=data)
    if outcome.status == "refused":
        assert outcome.detail.strip()
        assert row_counts() == before, f"a refused {filename} wrote rows: {outcome.detail}"
        return
    assert outcome.status in ("imported", "duplicate"), outcome
    member = SetContract.objects.select_related("text").get(pk=outcome.contract.pk)
    assert member.text.text.strip() and member.text.locations


@CHILD
@given(data=mutated_bytes(files.docx_bytes()) | mutated_bytes(files.docx_bytes(), tail=1500)
       | mutated_text(_document_xml()).map(lambda xml: _rezipped(files.docx_bytes(), "word/document.xml",
                                                                   xml.encode("utf-8", "surrogatepass"))))
def test_a_fuzzed_docx_is_imported_whole_or_refused_with_nothing_written(contract_set, data):
    _imported_whole_or_refused(contract_set, "fuzzed.docx", data)


@CHILD
@given(data=mutated_bytes(crafted.pdf_many_pages(3)) | mutated_bytes(files.pdf_with_text())
       | mutated_bytes(files.pdf_with_text(), tail=600))
def test_a_fuzzed_pdf_is_imported_whole_or_refused_with_nothing_written(contract_set, data):
    _imported_whole_or_refused(contract_set, "fuzzed.pdf", data)


# --------------------------------------------------------------------------- corpora (eCFR XML, CSV, JSON Lines)

CORPUS = Path(__file__).parents[2] / "benchmarks" / "corpus" / "data" / "cfr14-parts101-105.jsonl"


def _records() -> list[dict]:
    return [json.loads(line) for line in CORPUS.read_text().splitlines()[:3]]


def _jsonl(records: object) -> bytes:
    rows = records if isinstance(records, list) else [records]
    return ("\n".join(json.dumps(r, ensure_ascii=False) for r in rows) + "\n").encode("utf-8", "surrogatepass")


def _csv(records: object) -> bytes:
    from benchmarks.corpus import corpus_file

    out = io.StringIO()
    writer = csv.DictWriter(out, fieldnames=list(corpus_file.FIELDS), extrasaction="ignore")
    writer.writeheader()
    for row in records if isinstance(records, list) else [records]:
        writer.writerow(row if isinstance(row, dict) else {"citation": row})
    return out.getvalue().encode("utf-8", "surrogatepass")


def _corpus_imported_whole_or_refused(raw: bytes, filename: str, code: str) -> None:
    from benchmarks.corpus import ParseError
    from benchmarks.corpus.corpus_file import CorpusFileInvalid
    from benchmarks.corpus.models import Provision
    from benchmarks.corpus.services import ImportProblem, corpus_file_import

    before = row_counts()
    try:
        outcome = corpus_file_import(code=code, raw=raw, filename=filename)
    except (CorpusFileInvalid, ImportProblem, ParseError) as error:
        assert str(error).strip()
        assert row_counts() == before, f"a refused {filename} wrote rows: {error}"
        return
    assert Provision.objects.filter(snapshot=outcome.snapshot).count() == outcome.snapshot.provision_count


@FILES
@given(records=mutated(_records(), rounds=3) | json_values, as_csv=st.booleans())
def test_a_fuzzed_corpus_file_is_imported_whole_or_refused_naming_line_and_field(db, records, as_csv):
    raw = _csv(records) if as_csv else _jsonl(records)
    _corpus_imported_whole_or_refused(raw, "fuzz.csv" if as_csv else "fuzz.jsonl", "fuzzcode")


@FILES
@given(raw=st.binary(max_size=400) | mutated_text(_jsonl(_records()).decode()).map(
    lambda t: t.encode("utf-8", "surrogatepass")), as_csv=st.booleans())
def test_corpus_bytes_of_any_kind_are_imported_whole_or_refused(db, raw, as_csv):
    _corpus_imported_whole_or_refused(raw, "fuzz.csv" if as_csv else "fuzz.jsonl", "fuzzcode")


@FILES
@given(xml=mutated_text(ECFR))
def test_a_fuzzed_ecfr_file_is_imported_whole_or_refused_naming_the_element(db, xml):
    _corpus_imported_whole_or_refused(xml.encode("utf-8", "surrogatepass"), "ECFR-title1.xml", "")


# --------------------------------------------------------------------------- suite YAML


@FILES
@given(data=mutated(VALID_SUITE, rounds=4), version=st.integers(2, 10**6))
def test_a_fuzzed_suite_yaml_is_frozen_whole_or_refused_naming_query_and_field(suite_corpus, data, version):  # noqa: F811
    from benchmarks.suites.files import SuiteInvalid
    from benchmarks.suites.services import suite_import

    if isinstance(data, dict) and data.get("version") == 1:
        data["version"] = version
    raw = yaml.safe_dump(data, allow_unicode=True).encode("utf-8", "surrogatepass")
    before = row_counts()
    try:
        suite, created = suite_import(raw=raw, filename="fuzz.yaml")
    except SuiteInvalid as error:
        assert error.problems and all(p.where and p.field and p.message for p in error.problems)
        assert row_counts() == before, str(error)
        return
    if created:
        assert suite.queries.count() == len(data["queries"])


# --------------------------------------------------------------------------- label exchange (Label Studio, Argilla)


@pytest.fixture
def exchange_pool(reviewer_user, reviewer2_user):
    from tests.reviewapp.review.conftest import make_items, make_pool
    from tests.reviewapp.review.exchange.conftest import judge_pool

    pool = make_pool(reviewers=[reviewer_user, reviewer2_user], items=make_items(n_queries=1, per_query=2))
    judge_pool(pool, [reviewer_user, reviewer2_user])
    return pool


def _labels_imported_whole_or_refused(pool, tool: str, content: bytes) -> None:
    from reviewapp.review.exchange.models import ImportedAnnotation
    from reviewapp.review.exchange.services import annotations_import, document_read
    from reviewapp.review.exchange.texts import ExchangeError

    before = row_counts()
    try:
        result = annotations_import(pool=pool, tool=tool, document=document_read(content, tool=tool),
                                    filename="fuzz", imported_by="fuzz")
    except ExchangeError as error:
        assert str(error).strip()
        assert row_counts() == before, f"a refused {tool} file wrote rows: {error}"
        return
    assert ImportedAnnotation.objects.filter(label_import=result.label_import).count() == result.annotations


def _tasks(pool) -> list:
    from reviewapp.review.exchange import labelstudio

    return json.loads(json.dumps(labelstudio.labelstudio_tasks(pool=pool)))


@FILES
@given(data=st.data())
def test_a_fuzzed_label_studio_export_is_imported_whole_or_refused_naming_the_task(exchange_pool, data):
    document = data.draw(mutated(_tasks(exchange_pool), rounds=4) | json_values)
    raw = json.dumps(document).encode("utf-8", "surrogatepass")
    _labels_imported_whole_or_refused(exchange_pool, "label-studio", raw)


@FILES
@given(data=st.data())
def test_a_fuzzed_argilla_zip_is_imported_whole_or_refused_naming_the_record(exchange_pool, data):
    from reviewapp.review.exchange import argilla

    archive = argilla.argilla_zip(pool=exchange_pool)
    records = json.loads(json.dumps(argilla.argilla_records(pool=exchange_pool)))
    content = data.draw(
        mutated_bytes(archive) | mutated_bytes(archive, tail=300)
        | mutated(records, rounds=4).map(lambda doc: _rezipped(archive, argilla.RECORDS_PATH,
                                                                json.dumps(doc).encode("utf-8", "surrogatepass"))))
    _labels_imported_whole_or_refused(exchange_pool, "argilla", content)


@pytest.mark.django_db
@pytest.mark.parametrize("where", [0.25, 0.5, 0.9])
def test_an_argilla_zip_whose_records_member_is_damaged_is_refused_naming_it(exchange_pool, where):
    # Found by the property above: a broken deflate stream or a bad CRC inside the zip escaped as zlib.error or
    # BadZipFile (a 500 on the pool's import page) instead of the file's own error.
    from reviewapp.review.exchange import argilla
    from reviewapp.review.exchange.services import document_read
    from reviewapp.review.exchange.texts import ExchangeError

    archive = bytearray(argilla.argilla_zip(pool=exchange_pool))
    info = zipfile.ZipFile(io.BytesIO(bytes(archive))).getinfo(argilla.RECORDS_PATH)
    offset = info.header_offset
    start = offset + 30 + int.from_bytes(archive[offset + 26:offset + 28], "little") + int.from_bytes(
        archive[offset + 28:offset + 30], "little")
    archive[start + int(info.compress_size * where)] ^= 0x55
    before = row_counts()
    with pytest.raises(ExchangeError, match=r"records\.json: cannot be read from the zip"):
        document_read(bytes(archive), tool="argilla")
    assert row_counts() == before
