"""Fixtures for the statute benchmark tests: real NRS/USC imports and small synthetic corpora."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from benchmarks.corpus import ParsedProvision, ParsedSource

EXAMPLE_SUITE = Path(__file__).resolve().parents[2] / "benchmarks" / "suites" / "nrs_v1.json"


# The NRS pages parsed once per process: parsing their HTML was a third of these tests' CPU, and the parser is a
# pure function of the bytes whose result is immutable (frozen dataclasses, tuples). Keyed by digest and name.
_NRS_PARSED: dict[tuple[str, str], ParsedSource] = {}


@pytest.fixture
def nrs_imported(db, data_dir, monkeypatch):
    """The real NRS pages imported into this test's database (each test imports them in its own transaction)."""
    import hashlib

    from benchmarks.corpus.formats import nrs_html
    from benchmarks.corpus.services import statutes_import

    parse = nrs_html.parse

    def parse_once(raw: bytes, *, filename: str = "") -> ParsedSource:
        key = (hashlib.sha256(raw).hexdigest(), filename)
        if key not in _NRS_PARSED:
            _NRS_PARSED[key] = parse(raw, filename=filename)
        return _NRS_PARSED[key]

    with monkeypatch.context() as patched:
        patched.setattr(nrs_html, "parse", parse_once)
        return statutes_import(fmt="nrs-html", paths=[data_dir / "statutes" / "nrs"])


@pytest.fixture
def example_suite(nrs_imported):
    from benchmarks.suites.services import suite_import

    suite, _ = suite_import(raw=EXAMPLE_SUITE.read_bytes(), filename=str(EXAMPLE_SUITE), frozen_by="tests")
    return suite


@pytest.fixture
def example_suite_data() -> dict:
    return json.loads(EXAMPLE_SUITE.read_text())


def make_source(sections: list[tuple[str, str, str]], *, corpus: str = "nrs", chapter: str = "999") -> ParsedSource:
    """A tiny parsed source: (number, heading, body) per section."""
    return ParsedSource(
        corpus=corpus, parser_name="test", parser_version="1", title=f"test chapter {chapter}",
        official_url="https://example.invalid/chapter",
        provisions=tuple(
            ParsedProvision(citation=f"NRS {number}", number=number, chapter=chapter, chapter_title="TEST",
                            heading=heading, body=body)
            for number, heading, body in sections
        ),
    )


def import_synthetic(sections: list[tuple[str, str, str]], *, key: str = "synthetic.html"):
    from benchmarks.corpus.services import snapshot_import

    source = make_source(sections)
    raw = json.dumps(sections).encode()
    return snapshot_import(corpus="nrs", source_key=key, raw=raw, retrieved_from="tests",
                           parse=lambda _raw: source, parser=("test", "1")).snapshot


def freeze_suite(queries: list[dict], *, name: str = "synthetic", version: int = 1, families=None):
    from benchmarks.suites.services import suite_import

    data = {"name": name, "version": version, "corpus": "nrs",
            "families": families or [{"id": "fam-a", "split": "dev"}], "queries": queries}
    suite, _ = suite_import(raw=json.dumps(data).encode(), filename="synthetic.json")
    return suite
