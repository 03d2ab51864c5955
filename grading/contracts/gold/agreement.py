"""Agreement between lawyers on a clause pool, per category and overall, with the CUAD grader as the measure.

- **Span agreement** of an item: ``scoring.cuad.span_agreement`` over the texts of each pair of its lawyers'
  counted answers (both absent 1, present vs absent 0, both present: token-F1 under the optimal one-to-one
  matching, ``2 x matched F1 / (|A| + |B|)``), the mean over pairs when more than two lawyers answered.
  A category's figure is the mean over its items (contracts) with at least two answers of present or absent;
  "overall" is the mean over every such item of every category. Beside it, the same mean over the items
  where every lawyer said present (the span figure alone, without presence).
- **Presence agreement**: Cohen's kappa and Gwet's AC1 over present/absent, for each pair of lawyers over the
  items both answered, then the mean over the pairs whose figure is defined (kappa is undefined when both
  lawyers gave one and the same answer everywhere; AC1 then still says how much they agree).

Population: items (one contract, one category) with two or more answers; an answer of "unknown" takes no part.
Each row counts its own units: a category's contracts are its items, but "ALL" pools the items of every category,
and items of one contract are not independent, so its unit is the distinct contract (3 contracts of 2 categories
are 3 contracts, not 6). Below ``TOO_FEW`` of a row's contracts its figures are reported with ``too_few`` set,
and pages say "too few to say". Wherever a presence kappa is given, so is the kappa-paradox line
(``scoring.stats.agreement.kappa_paradox_note``) when raw agreement is high and kappa low.
"""

from __future__ import annotations

import itertools
from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

from grading.contracts.gold.resolution import ClauseResolution
from grading.contracts.kinds import ABSENT, PRESENT
from scoring.cuad.span_agreement import SpanAnswer, pairwise_span_agreement
from scoring.stats.agreement import cohen_kappa, confusion_table, gwet_ac1, kappa_paradox_note, prevalence

TOO_FEW = 5
PRESENCE_VALUES = (ABSENT, PRESENT)


@dataclass(frozen=True)
class ClauseAgreement:
    """Agreement on one category (or ``category`` "ALL"), with its populations."""

    category: str
    contracts: int  # distinct contracts among the items with at least two present/absent answers
    span_agreement: float | None
    both_present: int  # items where every lawyer said present
    span_f1_present: float | None
    kappa: float | None
    ac1: float | None
    lawyer_pairs: int  # pairs of lawyers with at least one item in common
    agreed: int
    adjudicated: int
    open: int
    incomplete: int
    items: int = 0  # the items counted (a contract once per category): equal to ``contracts`` in a category's row
    paradox_note: str = ""  # the kappa paradox in one line, or ''

    @property
    def too_few(self) -> bool:
        return self.contracts < TOO_FEW

    def as_dict(self) -> dict[str, object]:
        return {
            "category": self.category, "contracts": self.contracts, "items": self.items, "too_few": self.too_few,
            "span_agreement": self.span_agreement, "both_present": self.both_present,
            "span_f1_present": self.span_f1_present, "kappa": self.kappa, "ac1": self.ac1,
            "lawyer_pairs": self.lawyer_pairs, "agreed": self.agreed, "adjudicated": self.adjudicated,
            "open": self.open, "incomplete": self.incomplete, "paradox_note": self.paradox_note,
        }


def _mean(values: Sequence[float]) -> float | None:
    return sum(values) / len(values) if values else None


@dataclass(frozen=True)
class _Presence:
    kappa: float | None
    ac1: float | None
    pairs: int
    paradox_note: str


def _presence_pairs(rows: Iterable[ClauseResolution]) -> _Presence:
    by_reviewer: dict[int, dict[str, int]] = defaultdict(dict)
    for row in rows:
        for answer in row.answers:
            if answer.presence in PRESENCE_VALUES:
                by_reviewer[answer.reviewer_id][row.item_id] = int(answer.presence)
    kappas, ac1s, pairs = [], [], 0
    pooled_a: list[int] = []
    pooled_b: list[int] = []
    for first, second in itertools.combinations(sorted(by_reviewer), 2):
        shared = sorted(set(by_reviewer[first]) & set(by_reviewer[second]))
        if not shared:
            continue
        pairs += 1
        a = [by_reviewer[first][i] for i in shared]
        b = [by_reviewer[second][i] for i in shared]
        pooled_a += a
        pooled_b += b
        kappa = cohen_kappa(a, b, categories=PRESENCE_VALUES)
        ac1 = gwet_ac1(a, b, categories=PRESENCE_VALUES)
        if kappa is not None:
            kappas.append(kappa)
        if ac1 is not None:
            ac1s.append(ac1)
    kappa, ac1 = _mean(kappas), _mean(ac1s)
    # The paradox line reads the pairs' answers pooled: how many agree, and how common the commonest answer is.
    table = confusion_table(pooled_a, pooled_b, categories=PRESENCE_VALUES)
    shares = tuple(("present" if value == PRESENT else "absent", share)
                   for value, share in prevalence(table, PRESENCE_VALUES))
    note = kappa_paradox_note(n=len(pooled_a), agreements=int(table.trace()), kappa=kappa, ac1=ac1,
                              prevalence=shares) if pairs else ""
    return _Presence(kappa=kappa, ac1=ac1, pairs=pairs, paradox_note=note)


def _agreement(category: str, rows: list[ClauseResolution], texts: Mapping[str, str]) -> ClauseAgreement:
    spans_all: list[float] = []
    spans_present: list[float] = []
    contracts: set[str] = set()
    for row in rows:
        text = texts[row.source_hash]
        answers = [
            SpanAnswer(present=a.presence == PRESENT, texts=tuple(text[s:e] for s, e in a.spans))
            for a in row.answers if a.presence in PRESENCE_VALUES
        ]
        figure = pairwise_span_agreement(answers)
        if figure is None:
            continue
        spans_all.append(figure)
        contracts.add(row.source_hash)  # one contract, whichever category (its title and text)
        if all(a.present for a in answers):
            spans_present.append(figure)
    presence = _presence_pairs(rows)
    states = [row.state for row in rows]
    return ClauseAgreement(
        category=category, contracts=len(contracts), span_agreement=_mean(spans_all),
        both_present=len(spans_present), span_f1_present=_mean(spans_present), kappa=presence.kappa,
        ac1=presence.ac1, lawyer_pairs=presence.pairs, agreed=states.count("agreed"),
        adjudicated=states.count("adjudicated"), open=states.count("open"), incomplete=states.count("incomplete"),
        items=len(spans_all), paradox_note=presence.paradox_note,
    )


def clause_agreement(*, resolutions: Sequence[ClauseResolution], texts: Mapping[str, str],
                     categories: Sequence[str] | None = None) -> list[ClauseAgreement]:
    """One row per category (in ``categories`` order, else first seen), then "ALL" over every item.

    ``texts``: source hash -> the item's source text (the contract), to read the spans' texts
    (``PoolResolutions.texts``).
    """
    grouped: dict[str, list[ClauseResolution]] = defaultdict(list)
    for row in resolutions:
        grouped[row.category].append(row)
    order = list(categories) if categories is not None else list(dict.fromkeys(r.category for r in resolutions))
    rows = [_agreement(category, grouped.get(category, []), texts) for category in order]
    rows.append(_agreement("ALL", [r for c in order for r in grouped.get(c, [])], texts))
    return rows
