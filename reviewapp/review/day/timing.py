"""Time spent reviewing, read from the saves a reviewer made (autosaved drafts and completions), and the time
left at their own pace. Pure: timestamps in, seconds out.

Each save is preceded by work on it: the time since the reviewer's previous save (in any pool) is counted for
the pool of the later save, but never more than the idle cap, so a lunch break or a night between two saves
counts as at most the cap (the reviewer read the item for some of it, then left). The first save of all counts
nothing. Every figure is therefore a floor within the cap's slack, stated as such where it is shown.
"""

from __future__ import annotations

import itertools
from collections.abc import Hashable, Iterable, Mapping
from dataclasses import dataclass
from datetime import datetime

# Fewer completed items than this give no estimate: one or two items say little about a pace.
MIN_ITEMS_FOR_PACE = 3


def seconds_spent(saves: Iterable[tuple[datetime, Hashable]], *, idle_cap_seconds: float) -> dict[Hashable, float]:
    """Seconds spent per pool from (saved at, pool) pairs, in any order."""
    ordered = sorted(saves, key=lambda save: save[0])
    spent: dict[Hashable, float] = {pool: 0.0 for _, pool in ordered}
    for (before, _), (after, pool) in itertools.pairwise(ordered):
        spent[pool] += min((after - before).total_seconds(), idle_cap_seconds)
    return spent


@dataclass(frozen=True)
class Estimate:
    seconds_left: float | None  # None: too few completed items to know a pace
    pace_seconds: float | None  # per completed item
    pace_from: str  # "this pool", "all your pools", or "" (no pace)
    items_timed: int  # the completed items the pace is measured on


def estimate_left(*, pool: Hashable, left: int, spent: Mapping[Hashable, float], completed: Mapping[Hashable, int]) \
        -> Estimate:
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
