"""Imports read every format section by section and write in batches (COPY on PostgreSQL): the stored provisions,
passages and hashes are those the whole-file imports stored, and an import that fails midway leaves nothing."""

from __future__ import annotations

import csv
import hashlib
import io
import json
from pathlib import Path

import pytest
from django.db import connection

from benchmarks.corpus import ParseError, bulk, corpus_file
from benchmarks.corpus.corpus_file import CorpusFileInvalid
from benchmarks.corpus.models import CorpusCode, Passage, Provision, SourceSnapshot
from benchmarks.corpus.services import corpus_file_import, statutes_import
from reviewapp.core.records.hashing import sha256_hex

DATA = Path(__file__).parent / "data"
CFR = DATA / "cfr14-parts101-105.jsonl"
ECFR = DATA / "ecfr" / "current" / "ECFR-title1.xml"

# One SHA-256 over every stored provision's (citation, variant, content hash) and passage hash, in order, as the
# whole-file imports (before reading section by section) stored them: recorded from that code on these files.
BEFORE = {
    "usc": "98155e185a96fd1a222d3b0bac9fcebc204139e17b7859669ab0c48d32cd7142",
    "hrs": "e1fc807377b0f5e35dd98a19b1140b09d0c3252fd1cdd770456a0d7624ef6ce4",
    "nrs": "11b9b7d6fb7011684e6814798afe9db3c2ad0569e4a9896566f44b8f01ee7ddd",
    "ecfr": "4909b1d3165beb50f9a5ff39f5cd289b520dee3b62ed62868492daa731cc49fb",
    "jsonl": "2e6dfe59da909a7851268c15ed63600eca2bcdd1f1d1e43873bbdaa8599208da",
    "csv": "2e6dfe59da909a7851268c15ed63600eca2bcdd1f1d1e43873bbdaa8599208da",
}
VERSIONS_BEFORE = "15e21fc2902aa6c11c49e227ca36fda1db52caeffc063b9d1923fa16f90846b8"


def _digest(snapshot: SourceSnapshot) -> str:
    digest = hashlib.sha256()
    rows = Provision.objects.filter(snapshot=snapshot).order_by("position").values_list(
        "position", "citation", "variant", "content_sha256", "passages__sha256")
    for row in rows:
        digest.update(json.dumps(row).encode())
    return digest.hexdigest()


def _as_csv(raw: bytes) -> bytes:
    out = io.StringIO()
    writer = csv.DictWriter(out, fieldnames=list(corpus_file.FIELDS))
    writer.writeheader()
    writer.writerows(json.loads(line) for line in raw.decode().splitlines())
    return out.getvalue().encode()


def _imported(kind: str, data_dir: Path) -> SourceSnapshot:
    statutes = data_dir / "statutes"
    if kind == "usc":
        return statutes_import(fmt="uslm-xml", paths=[statutes / "usc" / "usc09.xml"])[0].snapshot
    if kind == "hrs":
        return statutes_import(fmt="hrs-json", paths=[statutes / "hrs" / "Vol11_Ch0476-0490.json"])[1].snapshot
    if kind == "nrs":
        return statutes_import(fmt="nrs-html", paths=[statutes / "nrs" / "NRS-036.html"])[0].snapshot
    if kind == "ecfr":
        with ECFR.open("rb") as source:
            return corpus_file_import(code="", raw=source, filename=ECFR.name).snapshot
    if kind == "jsonl":
        with CFR.open("rb") as source:
            return corpus_file_import(code="cfr14", raw=source, filename=CFR.name).snapshot
    return corpus_file_import(code="cfr14", raw=_as_csv(CFR.read_bytes()), filename="cfr14.csv").snapshot


@pytest.mark.parametrize("kind", list(BEFORE))
def test_each_format_stores_the_provisions_and_hashes_the_whole_file_import_stored(kind, db, data_dir):
    snapshot = _imported(kind, data_dir)
    assert snapshot.provision_count == Provision.objects.filter(snapshot=snapshot).count() > 0
    assert Passage.objects.filter(provision__snapshot=snapshot).count() == snapshot.provision_count
    assert _digest(snapshot) == BEFORE[kind]


def test_the_stored_bytes_are_the_file_and_hash_to_the_snapshot_sha256(db):
    with ECFR.open("rb") as source:
        snapshot = corpus_file_import(code="", raw=source, filename=ECFR.name).snapshot
    snapshot.refresh_from_db()
    assert bytes(snapshot.raw) == ECFR.read_bytes()
    assert snapshot.sha256 == sha256_hex(ECFR.read_bytes()) and snapshot.byte_size == ECFR.stat().st_size


def _rule(n: int, **fields: str) -> str:
    return json.dumps({"citation": f"9 SYN § {n}", "heading": f"Rule {n}", "text": f"Text of rule {n}.",
                       "url": f"https://example.org/{n}", "as_of": "2025-01-01", "jurisdiction": "Synthetica",
                       "code": "Synthetic Code", **fields})


def _jsonl(count: int, *, bad_last: bool) -> bytes:
    lines = [_rule(n) for n in range(1, count + 1)]
    if bad_last:
        lines.append(json.dumps({"citation": "9 SYN § 0", "heading": "", "text": "no heading"}))
    return ("\n".join(lines) + "\n").encode()


@pytest.mark.django_db(transaction=True)
def test_an_import_failing_after_batches_were_written_leaves_nothing_visible(monkeypatch):
    written: list[int] = []
    real = bulk.provisions_write

    def counting(snapshot_id, batch):
        written.append(len(batch))
        real(snapshot_id, batch)

    monkeypatch.setattr(bulk, "provisions_write", counting)
    with pytest.raises(CorpusFileInvalid, match="line 2501: heading"):
        corpus_file_import(code="syn", raw=_jsonl(2500, bad_last=True), filename="syn.jsonl")
    assert sum(written) >= 2 * bulk.WRITE_BATCH  # the failure came after rows were written, not before
    assert not SourceSnapshot.objects.exists()
    assert not Provision.objects.exists() and not Passage.objects.exists() and not CorpusCode.objects.exists()
    # The same file without its bad line imports whole afterwards.
    outcome = corpus_file_import(code="syn", raw=_jsonl(2500, bad_last=False), filename="syn.jsonl")
    assert outcome.created and outcome.snapshot.provision_count == 2500


@pytest.mark.django_db(transaction=True)
def test_a_citation_repeated_after_batches_were_written_is_refused_naming_its_first_line():
    raw = _jsonl(2500, bad_last=False) + (_rule(7) + "\n").encode()
    with pytest.raises(CorpusFileInvalid) as refused:
        corpus_file_import(code="syn", raw=raw, filename="syn.jsonl")
    assert str(refused.value) == ("corpus file syn.jsonl rejected:\n  - line 2501: citation: 9 SYN § 7 (version '') "
                                  "is already on line 7; give the second version its own 'version' label")
    assert not SourceSnapshot.objects.exists() and not Provision.objects.exists() and not Passage.objects.exists()


def test_a_second_version_read_after_batches_were_written_is_variant_2_hashed_as_before(db):
    raw = _jsonl(2500, bad_last=False) + (_rule(7, version="effective 2026-01-01") + "\n").encode()
    snapshot = corpus_file_import(code="syn", raw=raw, filename="syn.jsonl").snapshot
    versions = Provision.objects.filter(snapshot=snapshot, citation="9 SYN § 7").order_by("variant")
    assert [(p.variant, p.position, p.version_label) for p in versions] == [
        (1, 6, ""), (2, 2500, "effective 2026-01-01")]
    # Recorded from the import that counted citations in dicts.
    assert _digest(snapshot) == VERSIONS_BEFORE


@pytest.mark.django_db(transaction=True)
def test_an_xml_file_broken_near_its_end_leaves_nothing_visible():
    raw = ECFR.read_bytes()
    broken = raw[: raw.rindex(b"</DIV5>")] + b"<DIV8 N=\"\xc2\xa7 9.9\" TYPE=\"SECTION\"><P>unclosed</DIV5>"
    with pytest.raises(ParseError, match="not well-formed XML"):
        corpus_file_import(code="", raw=broken, filename=ECFR.name)
    assert not SourceSnapshot.objects.exists() and not Provision.objects.exists()


@pytest.mark.postgresql
@pytest.mark.django_db(transaction=True)
def test_on_postgresql_provisions_passages_and_bytes_go_in_by_copy(monkeypatch):
    assert connection.vendor == "postgresql"
    copies: list[str] = []
    with connection.cursor() as cursor:
        psycopg_cursor = type(cursor.cursor)
    copy = psycopg_cursor.copy

    def noted(self, statement, *args, **kwargs):
        copies.append(str(statement).split("(", 1)[0].strip())
        return copy(self, statement, *args, **kwargs)

    monkeypatch.setattr(psycopg_cursor, "copy", noted)
    monkeypatch.setattr(bulk, "WRITE_BATCH", 200)
    with CFR.open("rb") as source:
        snapshot = corpus_file_import(code="cfr14", raw=source, filename=CFR.name).snapshot
    monkeypatch.undo()
    assert copies.count("COPY benchmarks_sourcesnapshot") == 1
    assert copies.count("COPY benchmarks_provision") == copies.count("COPY benchmarks_passage") >= 1
    snapshot.refresh_from_db()
    assert bytes(snapshot.raw) == CFR.read_bytes() and snapshot.sha256 == sha256_hex(CFR.read_bytes())
    assert _digest(snapshot) == BEFORE["jsonl"]
    stored = Provision.objects.filter(snapshot=snapshot).order_by("position")
    assert [p.position for p in stored] == list(range(snapshot.provision_count))
    first = stored.first()
    assert first is not None and first.hierarchy and first.as_of is not None
    # The COPY rows are searchable like any other (the generated tsvector column filled by the database).
    with connection.cursor() as cursor:
        cursor.execute("SELECT count(*) FROM benchmarks_provision WHERE snapshot_id = %s AND search_tsv IS NOT NULL",
                       [snapshot.pk])
        assert cursor.fetchone()[0] == snapshot.provision_count
