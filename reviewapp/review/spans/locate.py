"""Spans as a lawyer reads them: where each falls in the original (page 3, paragraphs 12-13) and how it starts."""

from __future__ import annotations

import bisect
from collections.abc import Sequence
from dataclasses import dataclass

from reviewapp.review.kinds import SpanLocations

EXCERPT = 90


@dataclass(frozen=True)
class SpanRow:
    start: int
    end: int
    where: str  # "page 3", "pages 3-4", "" without a location map
    excerpt: str


def span_where(*, start: int, end: int, locations: SpanLocations | None) -> str:
    """The unit (page, paragraph, line) of the original a span starts in, and ends in when that differs."""
    if locations is None or not locations.starts:
        return ""
    offsets = [offset for offset, _ in locations.starts]
    first = locations.starts[max(0, bisect.bisect_right(offsets, start) - 1)][1]
    last = locations.starts[max(0, bisect.bisect_right(offsets, max(start, end - 1)) - 1)][1]
    if first == last:
        return f"{locations.unit} {first}"
    return f"{locations.unit}s {first}–{last}"


def span_rows(*, spans: Sequence[Sequence[int]], text: str, locations: SpanLocations | None) -> list[SpanRow]:
    rows = []
    for start, end in spans:
        piece = " ".join(text[start:end].split())
        rows.append(SpanRow(start=start, end=end, where=span_where(start=start, end=end, locations=locations),
                            excerpt=piece if len(piece) <= EXCERPT else piece[:EXCERPT - 1] + "…"))
    return rows
