from __future__ import annotations

import pytest

from benchmarks.suites.citations import citation_parse


@pytest.mark.parametrize(("text", "expected"), [
    ("NRS 432B.220", "NRS 432B.220"),
    ("nrs 1.4677", "NRS 1.4677"),
    ("What does Nev. Rev. Stat. § 0.025 provide?", "NRS 0.025"),
    ("Show me NRS 432B.390.", "NRS 432B.390"),
    ("HRS § 521-44", "HRS § 521-44"),
    ("Haw. Rev. Stat. 657-7 says", "HRS § 657-7"),
    ("9 U.S.C. § 2", "9 U.S.C. § 2"),
    ("see 9 USC 10 on vacatur", "9 U.S.C. § 10"),
    ("1 U.S.C. § 106a", "1 U.S.C. § 106a"),
])
def test_it_normalises_a_citation_to_the_corpus_form(text, expected):
    parsed = citation_parse(text)
    assert parsed is not None and parsed.citation == expected


def test_it_finds_no_citation_in_a_plain_question():
    assert citation_parse("When must a landlord return a security deposit?") is None
