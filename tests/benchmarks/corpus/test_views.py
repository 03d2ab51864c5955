"""Corpus browser pages: the US Code (chapter ids with "/") and paginated chapters."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from django.urls import reverse

from benchmarks.corpus.models import Provision
from benchmarks.corpus.views import PROVISIONS_PER_PAGE
from tests.benchmarks.conftest import import_synthetic


@pytest.fixture
def usc_imported(db, data_dir):
    from benchmarks.corpus.services import statutes_import

    return statutes_import(fmt="uslm-xml", paths=[data_dir / "statutes" / "usc" / "usc01.xml"])


def test_the_us_code_corpus_and_its_slashed_chapters_can_be_browsed(usc_imported, stakeholder_client):
    chapters = sorted(set(Provision.objects.filter(snapshot__corpus="usc").values_list("chapter", flat=True)))
    assert any("/" in c for c in chapters), chapters  # the case that raised NoReverseMatch
    page = stakeholder_client.get(reverse("benchmarks:corpus", args=["usc"]))
    assert page.status_code == 200
    for chapter in chapters:
        url = reverse("benchmarks:chapter", args=["usc", chapter])
        assert url in page.content.decode()
        detail = stakeholder_client.get(url)
        assert detail.status_code == 200, url
        first = Provision.objects.filter(snapshot__corpus="usc", chapter=chapter).order_by("position").first()
        assert first.citation in detail.content.decode()


def test_a_long_chapter_is_paginated_with_page_links(db, stakeholder_client):
    total = PROVISIONS_PER_PAGE + 7
    import_synthetic([(f"999.{100 + i}", f"Heading {i}.", f"Body of section {i}.") for i in range(total)])
    url = reverse("benchmarks:chapter", args=["nrs", "999"])
    first = stakeholder_client.get(url).content.decode()
    assert first.count('href="/benchmarks/corpus/provisions/') == PROVISIONS_PER_PAGE
    assert "NRS 999.100" in first and f"NRS 999.{100 + total - 1}" not in first
    assert re.search(r'href="\?page=2"', first) and f"of {total} sections" in first
    second = stakeholder_client.get(url, {"page": 2}).content.decode()
    assert second.count('href="/benchmarks/corpus/provisions/') == 7
    assert f"NRS 999.{100 + total - 1}" in second and 'href="?page=1"' in second
    # A page number past the end shows the last page rather than an error.
    assert stakeholder_client.get(url, {"page": 99}).status_code == 200


def test_an_unknown_chapter_is_a_404(db, stakeholder_client):
    assert stakeholder_client.get(reverse("benchmarks:chapter", args=["usc", "no/such"])).status_code == 404


def test_every_page_names_a_favicon_that_the_static_finders_serve(db, stakeholder_client):
    from django.contrib.staticfiles import finders

    page = stakeholder_client.get(reverse("benchmarks:corpus", args=["nrs"])).content.decode()
    href = re.search(r'<link rel="icon" href="([^"]+)"', page)
    assert href, "no <link rel=icon>: browsers fall back to a 404 on /favicon.ico"
    path = href.group(1).split("/static/", 1)[1]
    found = finders.find(path)
    assert found and Path(found).read_bytes().startswith(b"<svg")



def test_corpus_and_chapter_pages_read_no_source_file_nor_section_text(db, stakeholder_client):
    # Joining each row's snapshot read its raw source file (megabytes for an HRS volume) once per row: seconds a page.
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    import_synthetic([(f"999.{100 + i}", f"Heading {i}.", f"Body of section {i}.") for i in range(12)])
    chapter = reverse("benchmarks:chapter", args=["nrs", "999"])
    for url, shown in ((chapter, "NRS 999.100"), (reverse("benchmarks:corpus", args=["nrs"]), chapter)):
        with CaptureQueriesContext(connection) as queries:
            page = stakeholder_client.get(url)
        assert page.status_code == 200 and shown in page.content.decode()
        read = " ".join(q["sql"] for q in queries.captured_queries)
        assert '"raw"' not in read, url
        assert '"benchmarks_provision"."body"' not in read, url


def test_a_corpus_file_without_title_chapter_or_part_lists_its_sections_flat(db, stakeholder_client):
    import json

    from benchmarks.corpus.services import corpus_file_import

    lines = [{"citation": f"Manual § {i}", "heading": f"Rule {i}.", "text": f"Text of rule {i}.",
              "url": f"https://example.org/manual#{i}", "as_of": "2025-01-01", "jurisdiction": "Example",
              "code": "Example Manual"} for i in range(1, PROVISIONS_PER_PAGE + 4)]
    raw = "".join(json.dumps(line) + "\n" for line in lines).encode()
    corpus_file_import(code="manual", raw=raw, filename="manual.jsonl")
    page = stakeholder_client.get(reverse("benchmarks:corpus", args=["manual"]))
    assert page.status_code == 200
    html = page.content.decode()
    assert "Manual § 1" in html and "Rule 1." in html
    assert html.count('href="/benchmarks/corpus/provisions/') == PROVISIONS_PER_PAGE
    assert "<h2>Chapters</h2>" not in html
    second = stakeholder_client.get(reverse("benchmarks:corpus", args=["manual"]), {"page": 2}).content.decode()
    assert f"Manual § {PROVISIONS_PER_PAGE + 3}" in second
