"""Time spent reviewing, read from when a reviewer opened each item and the saves they made on it (autosaved
drafts and completions), and the time left at their own pace. Pure: timestamps in, seconds out.

Time is measured per item, the way Label Studio's lead time is: a save counts the time since the later of the
item's last opening and the item's previous save, never more than the idle cap (a lunch break or a night with
the item open counts as at most the cap). A save in another item or another pool never starts or ends this
item's time. Where no opening of the item is recorded before its first save (a client that saved through the
API without fetching the item, revisions from before openings were recorded), the reviewer's previous save in
the same pool stands in for the opening; the first save of a pool counts nothing. Every figure is therefore a
floor within the cap's slack, stated as such where it is shown.
"""

from __future__ import annotations

from collections.abc import Hashable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import TypeVar

PoolKey = TypeVar("PoolKey", bound=Hashable)

# Fewer completed items than this give no estimate: one or two items say little about a pace.
MIN_ITEMS_FOR_PACE = 3


@dataclass(frozen=True)
class TimedSave:
    """One save and the seconds it counts for its item (None: nothing known to start from)."""

    at: datetime
    pool: Hashable
    item: Hashable
    seconds: float | None


def save_seconds(saves: Iterable[Sequence], *, idle_cap_seconds: float,
                 opens: Iterable[tuple[datetime, Hashable]] = ()) -> list[TimedSave]:
    """Each save, in time order, with the seconds spent on its item before it.

    ``saves``: (saved at, pool, item) in any order ((saved at, pool) reads as an item of its own pool with no
    opening); ``opens``: (opened at, item). An opening at the same instant as a save comes before it.
    """
    events: list[tuple[datetime, int, Hashable, Hashable]] = [(at, 0, item, None) for at, item in opens]
    for save in saves:
        at, pool = save[0], save[1]
        events.append((at, 1, save[2] if len(save) > 2 else None, pool))
    events.sort(key=lambda e: (e[0], e[1]))
    opened: dict[Hashable, datetime] = {}
    item_saved: dict[Hashable, datetime] = {}
    pool_saved: dict[Hashable, datetime] = {}
    out = []
    for at, kind, item, pool in events:
        if kind == 0:
            opened[item] = at
            continue
        known = [t for t in (opened.get(item), item_saved.get(item)) if t is not None] if item is not None else []
        start = max(known) if known else pool_saved.get(pool)
        seconds = None if start is None else min((at - start).total_seconds(), idle_cap_seconds)
        out.append(TimedSave(at=at, pool=pool, item=item, seconds=seconds))
        if item is not None:
            item_saved[item] = at
        pool_saved[pool] = at
    return out


def seconds_spent(saves: Iterable[Sequence], *, idle_cap_seconds: float,
                  opens: Iterable[tuple[datetime, Hashable]] = ()) -> dict[Hashable, float]:
    """Seconds spent per pool from the saves (and the items' openings), in any order (``save_seconds``)."""
    timed = save_seconds(saves, idle_cap_seconds=idle_cap_seconds, opens=opens)
    spent: dict[Hashable, float] = {save.pool: 0.0 for save in timed}
    for save in timed:
        spent[save.pool] += save.seconds or 0.0
    return spent


@dataclass(frozen=True)
class Estimate:
    seconds_left: float | None  # None: too few completed items to know a pace
    pace_seconds: float | None  # per completed item
    pace_from: str  # "this pool", "all your pools", or "" (no pace)
    items_timed: int  # the completed items the pace is measured on


def estimate_left(*, pool: PoolKey, left: int, spent: Mapping[PoolKey, float],
                  completed: Mapping[PoolKey, int]) -> Estimate:
    """Time to finish ``left`` items of ``pool`` at the reviewer's pace in that pool, else over all their pools."""
    for source, seconds, items in (("this pool", spent.get(pool, 0.0), completed.get(pool, 0)),
                                   ("all your pools", sum(spent.values()), sum(completed.values()))):
        if items >= MIN_ITEMS_FOR_PACE:
            pace = seconds / items
            return Estimate(seconds_left=pace * left, pace_seconds=pace, pace_from=source, items_timed=items)
    return Estimate(seconds_left=None, pace_seconds=None, pace_from="", items_timed=sum(completed.values()))


def duration_words(seconds: float | None) -> str:
    """"1 h 05 min", "12 min", "under a minute"; "" for None."""
    if seconds is None:
        return ""
    minutes = round(seconds / 60)
    if minutes < 1:
        return "under a minute"
    hours, minutes = divmod(minutes, 60)
    return f"{hours} h {minutes:02d} min" if hours else f"{minutes} min"
