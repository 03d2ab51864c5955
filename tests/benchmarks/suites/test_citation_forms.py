"""Citations as lawyers write them: every accepted form, subsections, bare numbers, and what is refused."""

from __future__ import annotations

import pytest

from benchmarks.suites.citations import citation_parse


@pytest.mark.parametrize(("text", "citation", "subsection"), [
    ("NRS 432B.220", "NRS 432B.220", ""),
    ("N.R.S. 432B.220", "NRS 432B.220", ""),
    ("Nev. Rev. Stat. § 432B.220", "NRS 432B.220", ""),
    ("Nev. Rev. Stat. Ann. § 432B.220", "NRS 432B.220", ""),
    ("Nev.Rev.Stat. 432B.220", "NRS 432B.220", ""),
    ("NRS §432B.220", "NRS 432B.220", ""),
    ("NRS §§ 432B.220", "NRS 432B.220", ""),
    ("NRS 432B.220(4)(a)", "NRS 432B.220", "(4)(a)"),
    ("under N.R.S. 432B.220(4), a nurse must report", "NRS 432B.220", "(4)"),
    ("nrs 1.4677", "NRS 1.4677", ""),
    ("HRS § 521-44", "HRS § 521-44", ""),
    ("H.R.S. § 521-44", "HRS § 521-44", ""),
    ("Haw. Rev. Stat. § 521-44(a)", "HRS § 521-44", "(a)"),
    ("Haw. Rev. Stat. Ann. § 521-44", "HRS § 521-44", ""),
    ("HRS §521-44", "HRS § 521-44", ""),
    ("9 U.S.C. § 2", "9 U.S.C. § 2", ""),
    ("9 USC 2", "9 U.S.C. § 2", ""),
    ("9 U.S.C.A. § 10(a)(1)", "9 U.S.C. § 10", "(a)(1)"),
    ("9 U.S.C. §2", "9 U.S.C. § 2", ""),
])
def test_each_written_form_reads_as_the_section(text, citation, subsection):
    parsed = citation_parse(text)
    assert parsed is not None and (parsed.citation, parsed.subsection) == (citation, subsection)


@pytest.mark.parametrize(("text", "corpus", "citation"), [
    ("432B.220", "nrs", "NRS 432B.220"),
    ("§ 432B.220(4)(a)", "nrs", "NRS 432B.220"),
    ("What does 0.025 say about 'shall'?", "nrs", "NRS 0.025"),
    ("521-44(a)", "hrs", "HRS § 521-44"),
    ("HRS § 521-44", "nrs", "HRS § 521-44"),  # a named corpus wins over the suite's default
])
def test_a_bare_section_number_is_read_in_the_suites_corpus(text, corpus, citation):
    parsed = citation_parse(text, default_corpus=corpus)
    assert parsed is not None and parsed.citation == citation


@pytest.mark.parametrize("text", [
    "432B.220",  # no corpus named, no default
    "When must a landlord return a security deposit within 30 days?",
    "NRS chapter 432B",
    "pay 1.50 dollars",
])
def test_text_without_a_section_citation_reads_as_none(text):
    assert citation_parse(text) is None


def test_a_bare_number_needs_a_corpus_default_and_a_section_shape():
    assert citation_parse("432B.220") is None
    assert citation_parse("pay 1.50 dollars", default_corpus="nrs") is None
    assert citation_parse("in 2019 the fee rose", default_corpus="nrs") is None
    assert citation_parse("432B.220", default_corpus="usc") is None
    assert citation_parse("NRS 432B.2201").citation == "NRS 432B.2201"
