"""Where the passage a reviewer grades sits inside the source shown with it, for highlighting it in place.

The statute passage is the section's first words with its white space squeezed and " …" appended when cut;
a CUAD "text in question" is a quote from the contract excerpt. Both are found with the one quote search of
``scoring.cuad.quotes`` (exact, then ignoring case, then ignoring white space), after dropping the cut mark.
"""

from __future__ import annotations

from dataclasses import dataclass

from scoring.cuad.quotes import locate

# The mark a truncated passage ends with (benchmarks.corpus.passages): not part of the source text.
CUT_MARK = "…"


@dataclass(frozen=True)
class SourceSegments:
    """The source text cut around the passage: ``before`` + ``passage`` + ``after`` is the whole source."""

    before: str
    passage: str
    after: str


def passage_locate(*, source_text: str, passage_text: str) -> SourceSegments | None:
    """The source split around the passage, or None when the passage is not one contiguous part of it."""
    quote = passage_text.strip()
    while quote.endswith(CUT_MARK):
        quote = quote[: -len(CUT_MARK)].rstrip()
    if not quote or not source_text:
        return None
    found = locate(source_text, quote)
    if found is None:
        return None
    return SourceSegments(before=source_text[: found.start], passage=source_text[found.start: found.end],
                          after=source_text[found.end:])
