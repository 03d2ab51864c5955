"""Span answers as stored: the one place that checks and normalises the spans a reviewer sends.

The stored shape (``JudgmentRevision.spans``, ``Adjudication.spans``) is the normal form of ``offsets.spans_clean``:
``[start, end]`` pairs of half-open character offsets into the item's ``source_text``, sorted, none overlapping or
touching (such spans are merged), each trimmed of white space at both ends. This module adds what a reviewer's
submit needs on top: a message naming each refused span, and a span of white space only refused, not dropped.
The offsets are bound to the text by the revision's ``source_hash`` (computed from that same text), so a span
never outlives the text it points into: a re-bound item makes the whole answer stale, spans included.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from reviewapp.review.kinds import UNKNOWN, PoolKind
from reviewapp.review.spans.offsets import spans_clean

# More than any contract answers for one category (CUAD: at most 97 spans in a whole contract, all categories).
MAX_SPANS = 500


class SpanError(ValueError):
    """Spans that cannot be stored; the message names the span (``spans[2]: ...``) and the problem."""


def _offset(value: Any, *, where: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise SpanError(f"{where}: must be a whole number (a character offset), got {value!r}")
    return value


def spans_normalise(raw: Any, *, text: str, noun: str = "text") -> list[list[int]]:
    """``raw`` spans as stored: checked against ``text``, then sorted, merged where they overlap or touch, trimmed.

    Refused (``SpanError``, naming the span) when a span is not a pair of whole numbers, ends before it starts,
    falls outside the text, or covers only white space.
    """
    if raw is None:
        return []
    if not isinstance(raw, list | tuple):
        raise SpanError(f"spans: must be a list of [start, end] pairs, got {type(raw).__name__}")
    if len(raw) > MAX_SPANS:
        raise SpanError(f"spans: {len(raw)} spans; at most {MAX_SPANS} answer one query")
    size = len(text)
    for i, pair in enumerate(raw):
        where = f"spans[{i}]"
        if not isinstance(pair, list | tuple) or len(pair) != 2:
            raise SpanError(f"{where}: must be a [start, end] pair of character offsets, got {pair!r}")
        start, end = _offset(pair[0], where=f"{where}: start"), _offset(pair[1], where=f"{where}: end")
        if start < 0:
            raise SpanError(f"{where}: start {start} is before the start of the {noun}")
        if end > size:
            raise SpanError(f"{where}: end {end} is past the end of the {noun} ({size} characters)")
        if end <= start:
            raise SpanError(f"{where}: end {end} is not after start {start} (a span covers at least one character)")
        if not text[start:end].strip():
            raise SpanError(f"{where}: characters {start}-{end} are only white space")
    # The one normal form, shared with rulings (``offsets.spans_clean``): merged, then trimmed.
    return spans_clean(text=text, spans=[[pair[0], pair[1]] for pair in raw])


def spans_answer_check(*, kind: PoolKind, grades: Mapping[str, Any], spans: list[list[int]], complete: bool) -> None:
    """Refuse spans a kind does not take, and spans that contradict the answer they come with.

    On a kind that answers with spans: "absent" takes no spans, "present" marked complete needs at least one,
    and "unknown" takes none (spans say present). A draft may hold spans before the answer is chosen.
    """
    if not kind.answers_spans:
        if spans:
            raise SpanError(f"spans: items of kind {kind.key!r} are not answered with spans; send none")
        return
    answer = grades.get(kind.qrels_grade_type)
    if spans and answer == kind.span_absent:
        raise SpanError(f"spans: {kind.qrels_grade_type} is {answer} (absent) but {len(spans)} span(s) were "
                        "sent; remove the spans or mark it present")
    if spans and answer == UNKNOWN:
        raise SpanError(f"spans: {kind.qrels_grade_type} is unknown but {len(spans)} span(s) were sent; spans "
                        "answer present: mark it present or remove them")
    if complete and answer == kind.span_present and not spans:
        raise SpanError(f"cannot mark complete: {kind.qrels_grade_type} is {answer} (present) but no span is "
                        "highlighted; highlight the text that answers it, or mark it absent")
