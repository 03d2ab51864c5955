"""The clause-heading / keyword rule baseline on small inputs."""

from __future__ import annotations

import re

from grading.baselines.rules import RULES, rule_extract

CATEGORIES = ["Document Name", "Parties", "Agreement Date", "Effective Date", *RULES]

CONTRACT = """EXHIBIT 10.1

SUPPLY AGREEMENT

This Supply Agreement is made on March 3, 2004 by and between Acme Widgets Inc., a Delaware corporation
("Supplier"), and Beta Retail LLC ("Buyer").

1. Definitions. Words have the meanings given to them in this section and elsewhere in this document.

12. Governing Law. This Agreement shall be governed by the laws of the State of New York, without regard to conflicts.

13. Notices. All notices shall be in writing. Any dispute shall be governed by the laws of the venue chosen.

14. Insurance. Supplier shall keep adequate cover with insurers of good standing for the whole term.

15. The Agreement shall become effective on April 1, 2004 upon signature by both parties hereto.
"""


def _by_type(found):
    out: dict[str, list[str]] = {}
    for f in found:
        out.setdefault(f.category, []).append(f.text)
    return out


def test_a_heading_with_its_keyword_beats_a_keyword_alone_and_one_passage_per_type_is_returned():
    got = _by_type(rule_extract(CONTRACT, CATEGORIES))
    assert got["Governing Law"] == [
        "12. Governing Law. This Agreement shall be governed by the laws of the State of New York, without regard "
        "to conflicts."
    ]
    assert got["Insurance"][0].startswith("14. Insurance.")  # the heading alone is enough


def test_title_parties_and_dates_are_short_verbatim_slices_of_the_preamble():
    got = _by_type(rule_extract(CONTRACT, CATEGORIES))
    assert got["Document Name"] == ["SUPPLY AGREEMENT"]
    assert got["Parties"] == ["Acme Widgets Inc.", "Beta Retail LLC"]
    assert got["Agreement Date"] == ["March 3, 2004"]
    assert got["Effective Date"] == ["April 1, 2004"]


def test_every_extraction_is_a_verbatim_slice_and_types_without_a_match_return_nothing():
    found = rule_extract(CONTRACT, CATEGORIES)
    assert all(CONTRACT[f.start:f.end] == f.text for f in found)
    assert "Source Code Escrow" not in _by_type(found) and "Non-Compete" not in _by_type(found)
    assert rule_extract(CONTRACT, ["Governing Law"]) == [f for f in found if f.category == "Governing Law"]
    assert rule_extract(CONTRACT, CATEGORIES) == found  # deterministic


def test_the_patterns_compile_and_are_lower_case_as_the_passages_they_are_matched_against():
    for name, rule in RULES.items():
        for pattern in (*rule.headings, *rule.keywords):
            re.compile(pattern)
            letters = re.sub(r"\\[a-zA-Z]", "", pattern)  # \b, \w are not letters of the text
            assert letters == letters.lower(), (name, pattern)
