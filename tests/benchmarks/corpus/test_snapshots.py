"""Snapshots are immutable; identical bytes are a no-op; changed bytes make a new snapshot."""

from __future__ import annotations

import httpx
import pytest

from benchmarks.corpus.models import ImmutableRowError, Passage, Provision, SourceSnapshot
from benchmarks.corpus.passages import MAX_WORDS, PASSAGE_RULE, passage_extract
from benchmarks.corpus.services import ImportProblem, statutes_import, statutes_import_url
from reviewapp.core.records.hashing import sha256_hex


def test_it_imports_the_four_nrs_chapters_with_hashes_and_passages(nrs_imported):
    assert len(nrs_imported) == 4 and all(o.created for o in nrs_imported)
    assert Provision.objects.filter(corpus="nrs").count() == 302
    snapshot = SourceSnapshot.objects.get(source_key="NRS-036.html")
    assert snapshot.sha256 == sha256_hex(bytes(snapshot.raw))
    assert snapshot.parser_name == "nrs-html" and snapshot.official_url.startswith("https://www.leg.state.nv.us/")
    assert Passage.objects.filter(rule=PASSAGE_RULE).count() == 302
    assert Provision.objects.get(citation="NRS 432B.135").repealed


def test_reimporting_identical_bytes_is_a_no_op(nrs_imported, data_dir):
    again = statutes_import(fmt="nrs-html", paths=[data_dir / "statutes" / "nrs"])
    assert not any(o.created for o in again)
    assert [o.snapshot.pk for o in again] == [o.snapshot.pk for o in nrs_imported]
    assert SourceSnapshot.objects.count() == 4 and Provision.objects.count() == 302


def test_changed_bytes_make_a_new_snapshot_and_keep_the_old_one(nrs_imported, data_dir, tmp_path):
    original = (data_dir / "statutes" / "nrs" / "NRS-036.html").read_bytes()
    changed = tmp_path / "NRS-036.html"
    changed.write_bytes(original.replace(b"counterclaim, and thereupon", b"counterclaim and thereupon"))
    (outcome,) = statutes_import(fmt="nrs-html", paths=[changed])
    assert outcome.created
    both = SourceSnapshot.objects.filter(source_key="NRS-036.html").order_by("id")
    assert both.count() == 2 and both[0].sha256 != both[1].sha256
    assert Provision.objects.filter(citation="NRS 36.010").count() == 2
    old, new = Provision.objects.filter(citation="NRS 36.010").order_by("id")
    assert old.content_sha256 != new.content_sha256


def test_snapshots_and_provisions_refuse_updates(nrs_imported):
    snapshot = SourceSnapshot.objects.first()
    snapshot.title = "edited"
    with pytest.raises(ImmutableRowError):
        snapshot.save()
    provision = Provision.objects.first()
    provision.body = "edited"
    with pytest.raises(ImmutableRowError):
        provision.save()


def test_the_passage_is_caption_plus_capped_words_with_its_own_hash():
    body = "\n".join(["word " * 100, "more " * 100])
    passage = passage_extract(citation="NRS 1.010", heading="Courts of justice.", body=body)
    assert passage.caption == "NRS 1.010. Courts of justice."
    assert passage.word_count == MAX_WORDS and passage.truncated
    assert passage.text.endswith("…")
    short = passage_extract(citation="NRS 1.010", heading="Courts of justice.", body="Short text.")
    assert not short.truncated and short.sha256 != passage.sha256


def test_an_official_url_goes_through_the_same_parser(db, data_dir):
    page = (data_dir / "statutes" / "nrs" / "NRS-036.html").read_bytes()
    seen = []

    def handler(request: httpx.Request) -> httpx.Response:
        seen.append(str(request.url))
        return httpx.Response(200, content=page)

    client = httpx.Client(transport=httpx.MockTransport(handler))
    (outcome,) = statutes_import_url(fmt="nrs-html", url="https://www.leg.state.nv.us/NRS/NRS-036.html",
                                     client=client)
    assert seen == ["https://www.leg.state.nv.us/NRS/NRS-036.html"]
    assert outcome.created and outcome.snapshot.retrieved_from.startswith("https://")
    assert outcome.snapshot.provisions.get().citation == "NRS 36.010"


def test_a_failed_fetch_is_reported_and_writes_nothing(db):
    client = httpx.Client(transport=httpx.MockTransport(lambda request: httpx.Response(503)))
    with pytest.raises(ImportProblem, match="fetch failed"):
        statutes_import_url(fmt="nrs-html", url="https://www.leg.state.nv.us/NRS/NRS-999.html", client=client)
    assert SourceSnapshot.objects.count() == 0


def test_usc_and_hrs_import_with_their_companion_index(db, data_dir):
    usc = statutes_import(fmt="uslm-xml", paths=[data_dir / "statutes" / "usc"])
    assert sum(o.snapshot.provision_count for o in usc) == 70
    assert Provision.objects.filter(citation="9 U.S.C. § 2").exists()
    hrs_dir = data_dir / "statutes" / "hrs"
    hrs = statutes_import(fmt="hrs-json", paths=[hrs_dir / "Vol11_Ch0476-0490.json"])
    index, volume = hrs
    assert index.snapshot.source_key == "index-meta.json" and index.snapshot.provision_count == 0
    assert volume.snapshot.companion_id == index.snapshot.pk and volume.snapshot.provision_count == 812
