"""Span answers as the engine stores them: half-open character offsets into an item's ``source_text``.

The one normal form (``JudgmentRevision.spans``, ``Adjudication.spans``): ``[[start, end], ...]`` with
``0 <= start < end <= len(text)``, each span trimmed of surrounding white space, sorted, and no two overlapping
(overlapping spans are merged into one: the union highlights the same characters). Two answers that highlight
the same characters have the same normal form, so "the same spans" is list equality.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any


class SpanError(ValueError):
    pass


def spans_clean(*, text: str, spans: Any) -> list[list[int]]:
    """``spans`` in the normal form over ``text``; ``SpanError`` naming the first span that is not offsets in it."""
    if not isinstance(spans, (list, tuple)):
        raise SpanError("spans: expected a list of [start, end] pairs")
    ranges: list[tuple[int, int]] = []
    for index, pair in enumerate(spans):
        if (not isinstance(pair, (list, tuple)) or len(pair) != 2
                or not all(isinstance(v, int) and not isinstance(v, bool) for v in pair)):
            raise SpanError(f"spans[{index}]: expected [start, end] (two integers)")
        start, end = pair
        if not 0 <= start < end <= len(text):
            raise SpanError(f"spans[{index}]: [{start}, {end}] is not a non-empty range of the text "
                            f"(0..{len(text)})")
        ranges.append((start, end))
    merged: list[list[int]] = []
    for start, end in sorted(ranges):  # the union first, so that trimming cannot split what overlapped
        if merged and start < merged[-1][1]:
            merged[-1][1] = max(merged[-1][1], end)
        else:
            merged.append([start, end])
    out = []
    for start, end in merged:
        while start < end and text[start].isspace():
            start += 1
        while end > start and text[end - 1].isspace():
            end -= 1
        if start < end:
            out.append([start, end])
    return out


def span_texts(*, text: str, spans: Sequence[Sequence[int]]) -> list[str]:
    """The highlighted texts, in order."""
    return [text[start:end] for start, end in spans]
