"""Reading contract sets: their contracts (without texts), one contract in windows, and search in a contract.

A contract page shows one window of the original's units (pages of a PDF, paragraphs of a DOCX, lines of a text)
at a time, so a 100-page contract costs the same to open as a 1-page one: the text is sliced by the stored
locations, never split and rendered whole.
"""

from __future__ import annotations

import bisect
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from django.db.models import Count, Q, QuerySet

from grading.contracts.extract import UNIT_NAMES
from grading.contracts.models import ContractSet, ContractText, SetContract
from reviewapp.review.kinds import SpanLocations

if TYPE_CHECKING:
    from typing import TypedDict

    # django-stubs' helper (a dev dependency): named in annotations only.
    from django_stubs_ext import WithAnnotations

    class SetFigures(TypedDict):
        n_contracts: int
        n_excluded: int

    # A contract set as ``contract_sets`` returns it: with its figures annotated.
    ContractSetWithFigures = WithAnnotations[ContractSet, SetFigures]

WINDOW_UNITS = {"pdf": 5, "docx": 150, "text": 300, "html": 300}
SEARCH_MAX_HITS = 200
SNIPPET = 60


def contract_sets() -> QuerySet[ContractSetWithFigures]:
    """The sets with their figures, the one place they are counted: ``n_contracts`` the contracts that count
    (imported and not excluded), ``n_excluded`` those taken back (each page and export shows both)."""
    return ContractSet.objects.annotate(
        n_contracts=Count("contracts", filter=Q(contracts__exclusion__isnull=True)),
        n_excluded=Count("contracts__exclusion"),
    ).order_by("name")


def set_figures(*, contract_set: ContractSet) -> ContractSetWithFigures:
    """One set with the same figures as ``contract_sets`` (``n_contracts``, ``n_excluded``)."""
    return contract_sets().get(pk=contract_set.pk)


def set_contracts(*, contract_set: ContractSet, excluded: bool | None = None) -> QuerySet[SetContract]:
    """The set's contracts with their text's size and hash (never the text itself) and their exclusion if any;
    ``excluded`` False: only those that count, True: only those taken back, None: all."""
    rows = (SetContract.objects.filter(contract_set=contract_set).select_related("text", "exclusion")
            .defer("text__text", "text__locations").order_by("title"))
    if excluded is not None:
        rows = rows.filter(exclusion__isnull=not excluded)
    return rows


@dataclass(frozen=True)
class Unit:
    number: int
    text: str


@dataclass(frozen=True)
class Window:
    unit_name: str
    units: list[Unit]
    first: int
    last: int
    total: int  # units in the stored text (empty paragraphs and lines of the original are not stored)
    previous_start: int | None
    next_start: int | None


def contract_window(*, member: SetContract, start: int = 1) -> Window:
    """Units ``start``.. of the contract (``start`` is the original's page/paragraph/line number)."""
    text = member.text
    locations = [tuple(pair) for pair in text.locations]
    numbers = [number for _, number in locations]
    size = WINDOW_UNITS.get(text.kind, 300)
    first_index = max(0, min(bisect.bisect_left(numbers, start), len(locations) - 1)) if locations else 0
    chosen = locations[first_index:first_index + size]
    units = []
    for position, (offset, number) in enumerate(chosen):
        following = first_index + position + 1
        end = locations[following][0] if following < len(locations) else len(text.text)
        units.append(Unit(number=number, text=text.text[offset:end].strip("\n")))
    previous_index = first_index - size
    next_index = first_index + size
    return Window(
        unit_name=UNIT_NAMES.get(text.kind, "line"), units=units,
        first=units[0].number if units else 0, last=units[-1].number if units else 0, total=len(locations),
        previous_start=numbers[max(previous_index, 0)] if first_index > 0 else None,
        next_start=numbers[next_index] if next_index < len(numbers) else None,
    )


@dataclass(frozen=True)
class Hit:
    unit: int
    offset: int
    before: str
    match: str
    after: str


def contract_search(*, member: SetContract, query: str) -> tuple[list[Hit], int]:
    """Case-insensitive matches of ``query`` (at most SEARCH_MAX_HITS shown) and how many there are in all."""
    needle = query.strip().casefold()
    if not needle:
        return [], 0
    text = member.text.text
    folded = text.casefold()
    if len(folded) != len(text):  # casefold changed lengths (e.g. "ß"): offsets would drift, fall back to lower()
        folded, needle = text.lower(), query.strip().lower()
    starts = [offset for offset, _ in member.text.locations]
    numbers = [number for _, number in member.text.locations]
    hits: list[Hit] = []
    total = 0
    position = folded.find(needle)
    while position != -1:
        total += 1
        if len(hits) < SEARCH_MAX_HITS:
            index = bisect.bisect_right(starts, position) - 1
            end = position + len(needle)
            hits.append(Hit(unit=numbers[index] if index >= 0 else 0, offset=position,
                            before=text[max(0, position - SNIPPET):position], match=text[position:end],
                            after=text[end:end + SNIPPET]))
        position = folded.find(needle, position + max(len(needle), 1))
    return hits, total


def clause_item_locations(external_ref: Mapping[str, Any]) -> SpanLocations | None:
    """Where offsets of a clause item's text fall in the original (its pages, paragraphs or lines), or None.

    The review kind's hook (``PoolKind.span_locations``): read from the stored text the item was declared on,
    named by its hash, so the map always belongs to the text the spans point into.
    """
    sha256 = external_ref.get("text_sha256")
    if not isinstance(sha256, str) or not sha256:
        return None
    row = ContractText.objects.filter(sha256=sha256).values("kind", "locations").first()
    if row is None:
        return None
    return SpanLocations(unit=UNIT_NAMES.get(row["kind"], "line"),
                         starts=tuple((int(offset), int(number)) for offset, number in row["locations"]))
