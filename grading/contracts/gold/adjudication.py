"""Ruling on a clause item the lawyers disagree on: what the adjudicator sees, and the ruling's record.

The adjudicator sees the category, the contract and every counted lawyer's answer side by side (their span
sets, and the contract text with each lawyer's highlights marked), as the engine's adjudication page shows
reviewers' grades by name; no model output exists in this job. The ruling is a presence and a span set: one
lawyer's set, the union of all, the overlap of all, or offsets typed in. It is an append-only ``Adjudication``
of the ``presence`` grade with its spans, bound to the item's hashes (``disagreements.adjudication_record``).
"""

from __future__ import annotations

import itertools
import re
from dataclasses import dataclass
from typing import Any

from grading.contracts.gold.resolution import ClauseResolution, PoolResolutions, clause_pool_resolutions, disputed
from grading.contracts.kinds import ABSENT, PRESENCE, PRESENT
from reviewapp.review.agreement.disagreements import adjudication_record
from reviewapp.review.errors import ReviewError
from reviewapp.review.pools.refs import PoolRef
from reviewapp.review.pools.selectors import pool_item
from reviewapp.review.spans.offsets import SpanError, spans_clean

LETTERS = "ABCDEFGHIJKLMNOPQRSTUVWXYZ"
CHOICES = ("absent", "union", "overlap", "offsets")  # and "lawyer-<letter>"
_OFFSET_PAIR = re.compile(r"^\s*(\d+)\s*[-–,:]\s*(\d+)\s*$")


class RulingError(ValueError):
    pass


@dataclass(frozen=True)
class LawyerColumn:
    letter: str
    username: str
    presence: Any
    spans: list[tuple[int, int, str]]  # start, end, text


@dataclass(frozen=True)
class Segment:
    text: str
    marks: str  # letters of the lawyers who highlighted it ("" for none), "R" appended for the current ruling


@dataclass(frozen=True)
class ClauseAdjudication:
    row: ClauseResolution
    query_text: str
    columns: list[LawyerColumn]
    segments: list[Segment]
    ruling_spans: list[tuple[int, int, str]]


def _segments(text: str, sets: list[tuple[str, list[list[int]]]]) -> list[Segment]:
    """The text cut at every span boundary, each piece with the letters of the sets covering it."""
    cuts = {0, len(text)}
    for _, spans in sets:
        for start, end in spans:
            cuts.update((start, end))
    bounds = sorted(cuts)
    out: list[Segment] = []
    for start, end in itertools.pairwise(bounds):
        marks = "".join(letter for letter, spans in sets if any(s <= start and end <= e for s, e in spans))
        if out and out[-1].marks == marks:
            out[-1] = Segment(out[-1].text + text[start:end], marks)
        else:
            out.append(Segment(text[start:end], marks))
    return out


def _find(resolutions: PoolResolutions, item_id: str) -> ClauseResolution:
    for row in resolutions.rows:
        if row.item_id == item_id:
            return row
    raise LookupError(item_id)


def clause_adjudication(*, pool: PoolRef, item_id: str) -> ClauseAdjudication:
    """What the adjudication page shows for one item (``LookupError`` when it is not a labelled item here)."""
    resolutions = clause_pool_resolutions(pool=pool)
    row = _find(resolutions, item_id)
    text = resolutions.text_of(row)
    columns = [
        LawyerColumn(letter=LETTERS[i % 26], username=a.username, presence=a.presence,
                     spans=[(s, e, text[s:e]) for s, e in a.spans])
        for i, a in enumerate(row.answers)
    ]
    ruled = row.ruling.spans if row.ruling is not None else []
    sets = [(c.letter, [[s, e] for s, e, _ in c.spans]) for c in columns] + [("R", ruled)]
    return ClauseAdjudication(
        row=row, query_text=pool_item(pool=pool, item_id=item_id).query_text, columns=columns,
        segments=_segments(text, sets), ruling_spans=[(s, e, text[s:e]) for s, e in ruled],
    )


def _parse_offsets(raw: str) -> list[list[int]]:
    spans = []
    for number, line in enumerate((raw or "").splitlines(), start=1):
        if not line.strip():
            continue
        match = _OFFSET_PAIR.match(line)
        if match is None:
            raise RulingError(f"offsets line {number}: {line.strip()[:40]!r} is not 'start-end'")
        spans.append([int(match.group(1)), int(match.group(2))])
    return spans


def _overlap(sets: list[list[list[int]]]) -> list[list[int]]:
    common = sets[0] if sets else []
    for other in sets[1:]:
        common = [[max(s, t), min(e, u)] for s, e in common for t, u in other if max(s, t) < min(e, u)]
    return common


def ruling_spans(*, view: ClauseAdjudication, choice: str, offsets: str = "") -> tuple[int, list[list[int]]]:
    """The presence and raw span set a form choice stands for (the record step puts it in normal form)."""
    lawyers = {f"lawyer-{c.letter}": [[s, e] for s, e, _ in c.spans] for c in view.columns}
    present = [spans for c, spans in zip(view.columns, lawyers.values(), strict=True) if c.presence == PRESENT]
    if choice == "absent":
        return ABSENT, []
    if choice in lawyers:
        return PRESENT, lawyers[choice]
    if choice == "union":
        return PRESENT, [pair for spans in present for pair in spans]
    if choice == "overlap":
        return PRESENT, _overlap(present)
    if choice == "offsets":
        return PRESENT, _parse_offsets(offsets)
    raise RulingError(f"choose a ruling: absent, a lawyer's spans, the union, the overlap or offsets (got {choice!r})")


def clause_ruling_record(*, pool: PoolRef, item_id: str, presence: int, spans: list[list[int]], adjudicator: Any,
                         note: str = "") -> Any:
    """Record the ruling (presence + spans) on the item; ``RulingError`` says what is wrong with it.

    A ruling resolves a dispute and nothing else: the item needs at least two complete lawyer answers that
    differ. An admin who labels an item no lawyers disputed would pass their own label off as adjudicated.
    """
    item = pool_item(pool=pool, item_id=item_id)
    try:
        row = _find(clause_pool_resolutions(pool=pool), item_id)
    except LookupError:
        raise RulingError(f"item {item_id}: not a labelled clause item of this pool") from None
    if not disputed(row.answers):
        said = ("they agree" if len(row.answers) >= 2 else
                f"{len(row.answers)} lawyer{'s' * (len(row.answers) != 1)} completed it")
        raise RulingError(f"item {item_id} ({row.category}, {row.title}): a ruling resolves a dispute, and there is "
                          f"none: {said}; it needs at least two complete lawyer answers that differ")
    if presence not in (ABSENT, PRESENT):
        raise RulingError("presence: 1 (present) or 0 (absent)")
    try:
        cleaned = spans_clean(text=item.source_text, spans=spans) if presence == PRESENT else []
    except SpanError as error:
        raise RulingError(str(error)) from None
    if presence == PRESENT and not cleaned:
        raise RulingError("a ruling of present needs at least one span (or rule the category absent)")
    try:
        return adjudication_record(item=item, grade_type=PRESENCE, value=presence, adjudicator=adjudicator,
                                   note=note, spans=cleaned)
    except ReviewError as error:
        raise RulingError(str(error)) from None
