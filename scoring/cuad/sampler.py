"""Seeded contract sampler: greedy clause-type coverage, then a spread over contract lengths.

1. Greedy coverage: repeatedly add the contract that advances the most clause
   types still under target (present in fewer than ``min_per_type`` sampled
   contracts), until every type reaches the target or no remaining contract
   advances any under-target type (or the sample is full).
2. Length spread: the remaining slots are filled evenly across the length
   distribution of the contracts not yet sampled: they are sorted by length
   and cut into as many contiguous, equal-count strata as there are slots, and
   one contract is drawn from each stratum.

``numpy.random.default_rng(seed)`` breaks every tie, and candidates are put in
title order first, so the same inputs and seed give the same sample whatever
order the caller lists them in.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class Candidate:
    title: str
    length: int  # characters of contract text
    types: frozenset[str]  # clause types with at least one CUAD span


@dataclass(frozen=True)
class Picked:
    title: str
    length: int
    phase: str  # "coverage" or "length"


@dataclass(frozen=True)
class SampleResult:
    picked: tuple[Picked, ...]
    per_type: dict[str, int]  # sampled contracts having the type
    available: dict[str, int]  # contracts in the population having the type


def sample_contracts(
    candidates: Iterable[Candidate],
    *,
    n: int,
    min_per_type: int,
    seed: int,
    types: Sequence[str] | None = None,
) -> SampleResult:
    """Pick ``n`` contracts (all of them when there are fewer) as described in the module docstring."""
    # local import: numpy, ~0.25 s of a process's start: load_cuad imports this module (through the dataset
    # services) and needs none of it.
    import numpy as np

    pool = sorted(candidates, key=lambda c: c.title)
    titles = [c.title for c in pool]
    if len(set(titles)) != len(titles):
        raise ValueError("contract titles must be unique")
    if n <= 0:
        raise ValueError("n must be positive")
    if min_per_type < 0:
        raise ValueError("min_per_type must not be negative")
    type_names = list(types) if types is not None else sorted({t for c in pool for t in c.types})
    type_index = {t: i for i, t in enumerate(type_names)}
    has = np.zeros((len(pool), len(type_names)), dtype=bool)
    for i, c in enumerate(pool):
        for t in c.types:
            if t in type_index:
                has[i, type_index[t]] = True

    rng = np.random.default_rng(seed)
    target = min(n, len(pool))
    chosen = np.zeros(len(pool), dtype=bool)
    order: list[tuple[int, str]] = []
    counts = np.zeros(len(type_names), dtype=int)

    while len(order) < target:
        under = counts < min_per_type
        if not under.any():
            break
        gain = has[:, under].sum(axis=1)
        gain[chosen] = -1
        best = gain.max()
        if best <= 0:
            break
        ties = np.flatnonzero(gain == best)
        pick = int(ties[rng.integers(len(ties))]) if len(ties) > 1 else int(ties[0])
        chosen[pick] = True
        counts += has[pick]
        order.append((pick, "coverage"))

    slots = target - len(order)
    if slots > 0:
        rest = list(np.flatnonzero(~chosen))
        rest.sort(key=lambda i: (pool[i].length, pool[i].title))
        for stratum in np.array_split(np.asarray(rest, dtype=int), slots):
            pick = int(stratum[rng.integers(len(stratum))])
            chosen[pick] = True
            counts += has[pick]
            order.append((pick, "length"))

    picked = tuple(Picked(pool[i].title, pool[i].length, phase) for i, phase in order)
    return SampleResult(
        picked=picked,
        per_type={t: int(counts[k]) for k, t in enumerate(type_names)},
        available={t: int(has[:, k].sum()) for k, t in enumerate(type_names)},
    )


def build_manifest(
    result: SampleResult,
    *,
    source: dict[str, Any],
    n: int,
    min_per_type: int,
    seed: int,
) -> dict[str, Any]:
    """The manifest as a plain dict: input file, parameters, contracts in pick order, per-type counts."""
    short = sorted(t for t, c in result.per_type.items() if c < min_per_type)
    return {
        "source": source,
        "parameters": {"n": n, "min_per_type": min_per_type, "seed": seed, "method": "greedy-coverage+length-spread"},
        "contracts": [{"title": p.title, "length": p.length, "phase": p.phase} for p in result.picked],
        "per_type": result.per_type,
        "available_per_type": result.available,
        "types_below_target": short,
    }


def manifest_bytes(manifest: dict[str, Any]) -> bytes:
    """Deterministic serialisation (sorted keys, fixed indent, UTF-8, trailing newline)."""
    return (json.dumps(manifest, sort_keys=True, indent=2, ensure_ascii=False) + "\n").encode("utf-8")
