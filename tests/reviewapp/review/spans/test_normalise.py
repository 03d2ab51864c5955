"""Span answers as stored: normalised against the text, refused with a message naming the span and the problem."""

from __future__ import annotations

import pytest

from reviewapp.review.kinds import GradeType, PoolKind, SpanLocations
from reviewapp.review.spans.locate import span_where
from reviewapp.review.spans.normalise import SpanError, spans_answer_check, spans_normalise
from reviewapp.review.spans.offsets import spans_clean

TEXT = "  Governing law.  This Agreement is governed by Nevada law.\n\nNotice: thirty days.  "

SPANS_KIND = PoolKind(key="t_spans", label="t", grade_types=[GradeType("presence", "Clause", "")],
                      scale=[(0, "a", "absent"), (1, "p", "present")], query_label="q", source_label="Contract",
                      passage_label="", qrels_grade_type="presence", answers_spans=True)
PLAIN_KIND = PoolKind(key="t_plain", label="t", grade_types=[GradeType("passage", "Passage", "")],
                      scale=[(0, "0", "no"), (1, "1", "yes")], query_label="q", source_label="Source",
                      passage_label="Passage", qrels_grade_type="passage")


def test_spans_are_trimmed_sorted_and_merged_when_they_overlap_or_touch():
    law = TEXT.index("This")
    spans = spans_normalise([[law + 10, law + 40], [0, 17], [law, law + 12], [law + 40, law + 43]], text=TEXT)
    # [law + 40, law + 43] touches the span before it and ends in line breaks: merged, and trimmed to "."
    assert spans == [[2, 16], [law, law + 41]]
    assert (TEXT[2:16], TEXT[law:law + 41]) == ("Governing law.", "This Agreement is governed by Nevada law.")
    # Touching across the white space between them: one highlight, as the rulings store it (offsets.spans_clean).
    assert spans_normalise([[0, 18], [law, law + 4]], text=TEXT) == spans_clean(text=TEXT, spans=[[0, law + 4]])


@pytest.mark.parametrize(("raw", "message"), [
    ([[0, 5], [3, 90]], r"spans\[1\]: end 90 is past the end of the contract \(83 characters\)"),
    ([[-1, 3]], r"spans\[0\]: start -1 is before the start"),
    ([[5, 5]], r"spans\[0\]: end 5 is not after start 5"),
    ([[16, 18]], r"spans\[0\]: characters 16-18 are only white space"),
    ([[1, "9"]], r"spans\[0\]: end: must be a whole number"),
    ([[1, True]], r"spans\[0\]: end: must be a whole number"),
    ([[1, 2, 3]], r"spans\[0\]: must be a \[start, end\] pair"),
    ({"a": 1}, r"spans: must be a list"),
])
def test_bad_spans_are_refused_naming_the_span_and_the_problem(raw, message):
    with pytest.raises(SpanError, match=message):
        spans_normalise(raw, text=TEXT, noun="contract")


def test_an_answer_and_its_spans_must_agree():
    spans_answer_check(kind=SPANS_KIND, grades={}, spans=[[2, 5]], complete=False)  # a draft: spans before the answer
    spans_answer_check(kind=SPANS_KIND, grades={"presence": 1}, spans=[[2, 5]], complete=True)
    spans_answer_check(kind=SPANS_KIND, grades={"presence": 0}, spans=[], complete=True)
    with pytest.raises(SpanError, match="absent"):
        spans_answer_check(kind=SPANS_KIND, grades={"presence": 0}, spans=[[2, 5]], complete=False)
    with pytest.raises(SpanError, match="no span is highlighted"):
        spans_answer_check(kind=SPANS_KIND, grades={"presence": 1}, spans=[], complete=True)
    with pytest.raises(SpanError, match="unknown"):
        spans_answer_check(kind=SPANS_KIND, grades={"presence": "unknown"}, spans=[[2, 5]], complete=False)


def test_a_kind_without_spans_refuses_any():
    spans_answer_check(kind=PLAIN_KIND, grades={"passage": 1}, spans=[], complete=True)
    with pytest.raises(SpanError, match="'t_plain' are not answered with spans"):
        spans_answer_check(kind=PLAIN_KIND, grades={"passage": 1}, spans=[[0, 3]], complete=False)


def test_a_span_is_placed_on_the_unit_it_starts_and_ends_in():
    pages = SpanLocations(unit="page", starts=((0, 1), (100, 2), (250, 3)))
    assert span_where(start=5, end=99, locations=pages) == "page 1"
    assert span_where(start=5, end=101, locations=pages) == "pages 1–2"
    assert span_where(start=260, end=300, locations=pages) == "page 3"
    assert span_where(start=5, end=9, locations=None) == ""
