"""Depth-k pooling over several systems, and the order of work that completes their label figures soonest. Pure.

A *system* is one order of one query's candidates: keyword order, or a rerank run's order. The pool of a query
is the union of every system's top k (TREC depth-k pooling). Which systems put an item in their top k is
recorded with it (for metrics and admins, never for reviewers).

A *figure* is what ``benchmarks.labels.metrics`` (and the leaderboard) can only report once its items carry
labels, and refuses to fill otherwise:
- judged P@5 of system s on query q needs s's top five of q;
- pooled nDCG@5 of s on q needs the whole declared pool of q (its ideal ranking comes from that pool);
- the split-level P@5 / nDCG@5 of s (the leaderboard's cell) needs the same for every query of the split.
Every one of these is a figure with weight 1.

*Judgments still needed* by an item: the pool's reviewers per item minus the completed judgments of the same
texts that exist already (judge once); an item needing none is done before any work starts. A figure that needs
an item outside the pool (depth k below five: P@5 needs a system's top five) can never be completed from the
pool; ``reachable`` sets those figures aside.

The queue order (``query_tiers``) is blind: whole queries, one after another, in a keyed shuffle of their ids,
each reviewer's own keyed shuffle of a query's items. A position in a queue is then independent of every
system's ranks and top-k membership (tests/benchmarks/labels/test_queue_blind.py proves it with permutation
tests). Per-query figures still complete query by query; ``order_cost`` prices any order.

The fewest-judgment order (``work_order``) is kept to measure what blindness costs, never to order a queue: it
puts first the items in most systems' top five (they complete most figures per judgment), so a reviewer's
first items of a query would be the ones the models ranked highest. Greedy, like weighted set cover: at each
step, for every figure not yet complete, take the items it still lacks as a candidate block; its price is the
judgments the block needs divided by the weight of every figure the block completes. The cheapest block becomes
the next tier. The objective it approximates is the mean number of judgments made before a figure is complete;
each tier is priced as if its figures completed only at its end.
"""

from __future__ import annotations

import hashlib
from collections import defaultdict
from collections.abc import Hashable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import TypeVar

Item = tuple[str, str]  # (query id, doc id)
# order_cost's items and figures: any hashable keys, the same in each of its arguments.
_Unit = TypeVar("_Unit", bound=Hashable)
_Figure = TypeVar("_Figure", bound=Hashable)
FigureKey = tuple[str, str, str]  # (system, "query:<qid>" or "split:<split>", metric)
TOP = 5  # P@5 and nDCG@5 look at the first five results


@dataclass(frozen=True)
class SystemRanking:
    """One system's order of one query's candidates (doc ids, best first)."""

    system: str
    qid: str
    split: str
    ranked: tuple[str, ...]


def depth_k_pool(rankings: Sequence[SystemRanking], k: int) -> dict[Item, tuple[str, ...]]:
    """(qid, docid) -> the systems that put it in their top ``k``, for the union of every system's top ``k``."""
    contributed: dict[Item, list[str]] = {}
    for r in rankings:
        for docid in r.ranked[:k]:
            systems = contributed.setdefault((r.qid, docid), [])
            if r.system not in systems:
                systems.append(r.system)
    return {item: tuple(systems) for item, systems in contributed.items()}


def figure_needs(rankings: Sequence[SystemRanking], pool: Mapping[Item, object]) -> dict[FigureKey, frozenset[Item]]:
    """Every figure's items: P@5 and pooled nDCG@5 per system, per query and per split (see the module doc)."""
    members: dict[str, set[Item]] = defaultdict(set)
    for item in pool:
        members[item[0]].add(item)
    needs: dict[FigureKey, set[Item]] = defaultdict(set)
    for r in rankings:
        top = {(r.qid, d) for d in r.ranked[:TOP]}
        whole = members.get(r.qid, set()) | top
        for unit in (f"query:{r.qid}", f"split:{r.split}"):
            needs[(r.system, unit, "P@5")] |= top
            needs[(r.system, unit, "nDCG@5")] |= whole
    return {key: frozenset(items) for key, items in needs.items()}


def reachable(needs: Mapping[FigureKey, frozenset[Item]], pool: Iterable[Item]
              ) -> tuple[dict[FigureKey, frozenset[Item]], int]:
    """The figures the pool alone can complete, and how many others need items outside it (k below five)."""
    members = set(pool)
    inside = {key: items for key, items in needs.items() if items <= members}
    return inside, len(needs) - len(inside)


def query_tiers(qids: Iterable[str], *, seed: str) -> dict[str, int]:
    """Query id -> tier (1, 2, ...): whole queries in a keyed shuffle, blind to every system's ranks.

    The key is a hash of ``seed`` and the query id only, so which query comes first carries nothing of the
    rankings, the pool's size per query or what was judged before.
    """
    def key(qid: str) -> tuple[str, str]:
        return hashlib.sha256(f"queue-order:{seed}:{qid}".encode()).hexdigest(), qid

    return {qid: n for n, qid in enumerate(sorted(set(qids), key=key), start=1)}


@dataclass(frozen=True)
class WorkOrder:
    tiers: tuple[tuple[Hashable, ...], ...]  # items still needing judgments, tier by tier (tier 1 first)
    done: frozenset[Hashable]  # items needing no judgment (judged enough already)
    cost: float  # sum over figures of weight x judgments made when it completes (tier ends)
    weight: float  # total weight of the figures

    def merged(self, min_size: int) -> tuple[tuple[Hashable, ...], ...]:
        """The tiers, neighbours merged until each holds at least ``min_size`` items (the last may hold fewer).

        A tier of one or two items would put those items at the same place in every reviewer's queue; a
        merged tier is shuffled per reviewer, at the price of figures completing a little later.
        """
        out: list[tuple[Hashable, ...]] = []
        current: list[Hashable] = []
        for tier in self.tiers:
            current.extend(tier)
            if len(current) >= min_size:
                out.append(tuple(current))
                current = []
        if current:
            if out and len(current) < min_size:
                out[-1] = out[-1] + tuple(current)
            else:
                out.append(tuple(current))
        return tuple(out)

    def priority_of(self, *, min_size: int = 1) -> dict[Hashable, int]:
        """Item -> tier number (1, 2, ...) of ``merged(min_size)``; done items get the tier after the last."""
        tiers = self.merged(min_size)
        out = {item: n for n, tier in enumerate(tiers, start=1) for item in tier}
        out.update(dict.fromkeys(self.done, len(tiers) + 1))
        return out

    @property
    def mean_judgments(self) -> float:
        """Mean judgments made before a figure is complete (weighted), tiers priced at their end."""
        return self.cost / self.weight if self.weight else 0.0


def work_order(needs: Mapping[Hashable, frozenset[Hashable]], cost: Mapping[Hashable, float],
               weight: Mapping[Hashable, float] | None = None) -> WorkOrder:
    """Greedy tiers that complete the figures ``needs`` soonest (see the module doc).

    ``cost``: judgments still needed per item (0: done; items absent from it cost 0); ``weight`` per figure
    (default 1). Deterministic: ties go to the cheaper block, then to the smaller sorted item list.
    """
    items = sorted({i for need in needs.values() for i in need} | set(cost), key=repr)
    index = {item: n for n, item in enumerate(items)}
    price = [float(cost.get(item, 0)) for item in items]
    done = 0
    for n, p in enumerate(price):
        if p <= 0:
            done |= 1 << n
    figures = list(needs)
    w = [float((weight or {}).get(f, 1.0)) for f in figures]
    mask = [sum(1 << index[i] for i in needs[f]) for f in figures]
    touching: dict[int, list[int]] = defaultdict(list)
    for fn, m in enumerate(mask):
        for n in _bits(m):
            touching[n].append(fn)
    open_figures = {fn for fn, m in enumerate(mask) if m & ~done}
    tiers: list[tuple[Hashable, ...]] = []
    spent = total = 0.0
    while open_figures:
        best: tuple[float, float, str, int] | None = None
        for block in {mask[fn] & ~done for fn in open_figures}:
            block_cost = sum(price[n] for n in _bits(block))
            near = {g for n in _bits(block) for g in touching[n] if g in open_figures}
            gain = sum(w[g] for g in near if mask[g] & ~done & ~block == 0)
            key = (block_cost / gain if gain else float("inf"), block_cost, repr(sorted(_bits(block))), block)
            if best is None or key < best:
                best = key
        assert best is not None
        block = best[3]
        for part in _refine(block, [mask[g] & ~done for g in open_figures], [w[g] for g in open_figures], price):
            spent += sum(price[n] for n in _bits(part))
            done |= part
            completed = {g for g in open_figures if mask[g] & ~done == 0}
            total += spent * sum(w[g] for g in completed)
            open_figures -= completed
            tiers.append(tuple(items[n] for n in _bits(part)))
    return WorkOrder(tiers=tuple(tiers), done=frozenset(items[n] for n in _bits(done) if price[n] <= 0),
                     cost=total, weight=sum(w))


def _refine(block: int, remaining: list[int], weights: list[float], price: list[float]) -> list[int]:
    """The chosen block cut into smaller tiers when some figures need only part of it, best ratio first.

    All of the block is judged next anyway; judging first the part that completes figures cheapest lets those
    figures complete before the block's end.
    """
    inside = [(m, wt) for m, wt in zip(remaining, weights, strict=True) if m and m & ~block == 0]
    parts: list[int] = []
    left = block
    while left:
        best: tuple[float, float, str, int] | None = None
        # A figure that needs all that is left completes at the block's end whatever the order: not a part.
        for part in {m & left for m, _ in inside if m & left and m & left != left}:
            part_cost = sum(price[n] for n in _bits(part))
            gain = sum(wt for m, wt in inside if m & left and m & left & ~part == 0)
            key = (part_cost / gain if gain else float("inf"), part_cost, repr(sorted(_bits(part))), part)
            if best is None or key < best:
                best = key
        if best is None:
            parts.append(left)
            break
        part = best[3]
        # The part is a block of its own: some figures may need only part of it in turn.
        parts.extend(_refine(part, [m & left for m, _ in inside], [wt for _, wt in inside], price))
        left &= ~part
    return parts


def _bits(mask: int) -> list[int]:
    out = []
    while mask:
        low = mask & -mask
        out.append(low.bit_length() - 1)
        mask ^= low
    return out


def order_cost(tiers: Sequence[Sequence[_Unit]], needs: Mapping[_Figure, frozenset[_Unit]],
               cost: Mapping[_Unit, float], weight: Mapping[_Figure, float] | None = None) -> float:
    """``WorkOrder.cost`` of any tiers: each figure priced at the judgments made by the end of its tier."""
    done = {i for i, c in cost.items() if c <= 0}
    spent = total = 0.0
    waiting = {f: set(need) - done for f, need in needs.items()}
    for tier in tiers:
        spent += sum(cost.get(i, 0) for i in tier)
        for f in list(waiting):
            waiting[f] -= set(tier)
            if not waiting[f]:
                total += spent * float((weight or {}).get(f, 1.0))
                del waiting[f]
    if any(waiting.values()):
        raise ValueError("the tiers leave figures incomplete")
    return total


def judgments_needed(needs: Mapping[FigureKey, frozenset[Item]], cost: Mapping[Item, float], *,
                     metric: str | None = None) -> dict[str, float]:
    """Per system: judgments still needed before all its figures (of ``metric`` only, if given) are complete;
    "total": before every system's are."""
    per_system: dict[str, set[Item]] = defaultdict(set)
    for (system, _unit, figure_metric), items in needs.items():
        per_system.setdefault(system, set())
        if metric is None or figure_metric == metric:
            per_system[system] |= items
    out = {system: sum(cost.get(i, 0) for i in items) for system, items in per_system.items()}
    out["total"] = sum(cost.get(i, 0) for i in set().union(*per_system.values())) if per_system else 0
    return out


def optimal_cost(needs: Mapping[Hashable, frozenset[Hashable]], cost: Mapping[Hashable, float],
                 weight: Mapping[Hashable, float] | None = None) -> float:
    """The exact minimum of ``WorkOrder.cost`` over every order of single items (dynamic programme over subsets).

    Exponential in the number of items that still need judgments: for checking ``work_order`` on small
    instances only. An item order is at least as good as any tiering, so this bounds the greedy from below.
    """
    todo = sorted({i for i in cost if cost[i] > 0} | {i for need in needs.values() for i in need if cost.get(i, 0) > 0},
                  key=repr)
    if len(todo) > 16:
        raise ValueError(f"{len(todo)} items: too many for an exhaustive search (at most 16)")
    index = {item: n for n, item in enumerate(todo)}
    masks, weights = [], []
    for f, need in needs.items():
        m = sum(1 << index[i] for i in need if i in index)
        if m:
            masks.append(m)
            weights.append(float((weight or {}).get(f, 1.0)))
    full = (1 << len(todo)) - 1
    price = [float(cost[i]) for i in todo]
    best = [0.0] * (full + 1)
    # best[S]: the least cost still to come once the items of S are judged. Supersets first.
    for state in range(full - 1, -1, -1):
        waiting = sum(wt for m, wt in zip(masks, weights, strict=True) if m & ~state)
        best[state] = min(price[n] * waiting + best[state | (1 << n)] for n in range(len(todo))
                          if not state >> n & 1)
    return best[0]
