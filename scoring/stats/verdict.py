"""One quotable sentence across N systems compared on the same units. Pure.

Both leaderboards (statute: held-out Hit@5 over query families; CUAD: micro F1 over contracts) open
with it, and it follows the cases of a report's conclusion: a system incomplete, too few units for an
interval, every system at the ceiling or the floor, all identical, one best, or none that can be told
apart after Holm's adjustment. "Best" means: the highest estimate, and every system whose difference
from it is not significant after Holm's adjustment (adjusted p >= ``ALPHA``) shares the top; the
sentence quotes the interval of the top difference (the leader against the runner-up).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

from scoring.stats.bootstrap import Interval
from scoring.stats.units import UnitSupport, p_value_text

ALPHA = 0.05

BEST = "best"
UNDECIDED = "cannot tell apart"
SATURATED = "saturated"
FLOOR = "floor"
IDENTICAL = "identical"
INCOMPLETE = "incomplete"
TOO_FEW = "too few units"
SINGLE = "one system"
NO_SYSTEM = "no system"
KINDS = (BEST, UNDECIDED, SATURATED, FLOOR, IDENTICAL, INCOMPLETE, TOO_FEW, SINGLE, NO_SYSTEM)


@dataclass(frozen=True)
class Contender:
    """One system with figures: its key (as the tables name it), estimate, and '' or why it is incomplete."""

    key: str
    estimate: float
    incomplete: str = ""


@dataclass(frozen=True)
class Duel:
    """A paired difference a - b on the verdict's metric, with its Holm-adjusted p-value."""

    a: str
    b: str
    difference: Interval
    p_adjusted: float


@dataclass(frozen=True)
class Verdict:
    kind: str
    sentence: str
    best: tuple[str, ...] = ()  # the systems sharing the top ('' when none is named)

    def as_json(self) -> dict[str, object]:
        return {"kind": self.kind, "sentence": self.sentence, "best": list(self.best)}


def _num(x: float) -> str:
    return f"{x:.3f}"


def _difference_text(duel: Duel, a: str, b: str, replicates: int) -> str:
    d = duel.difference
    sign = 1.0 if duel.a == a else -1.0
    low, high = sorted((sign * d.low, sign * d.high))
    bounds = f" [{low:+.3f}, {high:+.3f}]" if d.has_bounds else ""
    return (f"{a} − {b} {sign * d.estimate:+.3f}{bounds}, Holm p "
            f"{p_value_text(duel.p_adjusted, replicates=replicates)}")


def _listing(keys: Sequence[str]) -> str:
    return keys[0] if len(keys) == 1 else ", ".join(keys[:-1]) + " and " + keys[-1]


def verdict_sentence(
    *, metric: str, contenders: Sequence[Contender], duels: Sequence[Duel], population: str,
    support: UnitSupport, replicates: int, ceiling: float = 1.0, floor: float = 0.0,
) -> Verdict:
    """The leaderboard's sentence on ``metric`` (e.g. "held-out Hit@5") over ``population``
    (e.g. "12 held-out queries in 8 query families"); ``support`` is the number of resampling units.

    ``duels`` holds every pair of ``contenders`` (either order); ``replicates`` prints p-values
    honestly. Saturated / floor: every system's estimate is ``ceiling`` / ``floor`` (a mean of 0/1
    values at 1 is 1 on every unit).
    """
    if not contenders:
        return Verdict(NO_SYSTEM, f"No system has figures on {metric}, so this leaderboard draws no conclusion.")
    incomplete = [c for c in contenders if c.incomplete]
    if incomplete:
        which = "; ".join(f"{c.key} is {c.incomplete}" for c in incomplete)
        return Verdict(INCOMPLETE, f"Incomplete: {which}, so this leaderboard names no best system on {metric} "
                                   f"over {population}; the figures cover only what was graded.")
    ranked = sorted(contenders, key=lambda c: (math.isnan(c.estimate), -c.estimate if not math.isnan(c.estimate)
                                               else 0.0))
    scores = "; ".join(f"{c.key} {_num(c.estimate)}" for c in ranked)
    if len(contenders) == 1:
        return Verdict(SINGLE, f"One system only: {ranked[0].key} scores {_num(ranked[0].estimate)} on {metric} "
                               f"over {population}; there is nothing to compare it with.")
    if not support.has_interval:
        return Verdict(TOO_FEW, f"{support.sentence[0].upper()}{support.sentence[1:]}, so this leaderboard names "
                                f"no best system on {metric} over {population} ({scores}).")
    few = f" ({support.sentence})" if support.few else ""
    estimates = [c.estimate for c in contenders]
    if all(e == ceiling for e in estimates) or all(e == floor for e in estimates):
        at_ceiling = estimates[0] == ceiling
        return Verdict(
            SATURATED if at_ceiling else FLOOR,
            f"These {len(contenders)} systems cannot be told apart on {metric}: every one scores "
            f"{_num(estimates[0])} over {population} "
            f"({'the suite is saturated' if at_ceiling else 'none finds a target: the suite is at its floor'}).")
    if all(d.difference.estimate == 0.0 and d.difference.low == d.difference.high == 0.0 for d in duels):
        return Verdict(IDENTICAL, f"These {len(contenders)} systems cannot be told apart on {metric}: they score "
                                  f"the same over {population} ({_num(estimates[0])} each), every difference "
                                  f"+0.000 [+0.000, +0.000]{few}.")
    duel_of = {frozenset((d.a, d.b)): d for d in duels}
    leader, runner_up = ranked[0], ranked[1]
    tied = [c.key for c in ranked[1:]
            if not (duel_of[frozenset((leader.key, c.key))].p_adjusted < ALPHA)]
    top = _difference_text(duel_of[frozenset((leader.key, runner_up.key))], leader.key, runner_up.key, replicates)
    if len(tied) == len(ranked) - 1:
        return Verdict(UNDECIDED, f"On {metric} these {len(contenders)} systems cannot be told apart after Holm's "
                                  f"adjustment over {population}: {scores}; top difference {top}{few}.",
                       tuple(c.key for c in ranked))
    best = (leader.key, *tied)
    rest = [c.key for c in ranked if c.key not in best]
    if tied:
        head = (f"On {metric} {_listing(best)} are best and cannot be told apart after Holm's adjustment; "
                f"{_listing(rest)} {'is' if len(rest) == 1 else 'are'} worse")
    else:
        head = f"On {metric} {leader.key} is best, ahead of {_listing(rest)} after Holm's adjustment"
    return Verdict(BEST, f"{head}, over {population}: {scores}; top difference {top}{few}.", best)
