"""Per-query ranking measures by the names the field uses, computed as trec_eval computes them.

A registry, as ir_measures keeps one: each measure is one function of a
:class:`JudgedRanking` (a query's ranked list already looked up in its qrels)
and, where it has one, a rank cutoff. Names are ir_measures' (``P@5``,
``nDCG@10``, ``AP``, ``R@100``, ``Success@10``, ``RR``, ``Rprec``); ``MAP`` is
an alias of ``AP`` and ``Hit@k`` of ``Success@k`` (the benchmark's own name).

Conventions, all trec_eval's (checked against its own test files):

- A document is *relevant* when its qrels grade is at least the relevance
  level (trec_eval ``-l``, ir_measures ``rel=``; default 1). The level moves
  every binary measure (P, R, AP, RR, Success, Rprec) and never nDCG.
- nDCG's gain is the qrels grade itself (negative grades and unjudged
  documents gain 0); DCG discounts rank r by log2(r + 1); the ideal ranking
  sorts every judged document of the query by grade, not only those
  retrieved. ``nDCG`` without a cutoff is over the whole list.
- A query with no relevant document scores 0 on every measure (trec_eval
  prints 0, ir_measures too), and an empty ranking scores 0.

Unit of every value: a fraction in [0, 1] for one query; the caller averages.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

DEFAULT_REL_LEVEL = 1


@dataclass(frozen=True)
class JudgedRanking:
    """One query's ranked list seen through its qrels, at one relevance level.

    ``grades[i]`` is the qrels grade of the document at rank i + 1 (``None``
    when unjudged); ``relevant[i]`` says whether it reaches ``rel_level``;
    ``num_rel`` counts the query's relevant documents (retrieved or not);
    ``ideal_gains`` are the positive grades of its judged documents, largest first.
    """

    grades: tuple[int | None, ...]
    relevant: tuple[bool, ...]
    num_rel: int
    ideal_gains: tuple[int, ...]
    rel_level: int


def judged_ranking(ranked: Sequence[str], judged: Mapping[str, int], *, rel_level: int = DEFAULT_REL_LEVEL
                   ) -> JudgedRanking:
    """``ranked`` (docids, rank 1 first) looked up in ``judged`` (``{docid: grade}`` of one query)."""
    grades = tuple(judged.get(docid) for docid in ranked)
    return JudgedRanking(
        grades=grades,
        relevant=tuple(grade is not None and grade >= rel_level for grade in grades),
        num_rel=sum(1 for grade in judged.values() if grade >= rel_level),
        ideal_gains=tuple(sorted((grade for grade in judged.values() if grade > 0), reverse=True)),
        rel_level=rel_level,
    )


def _first_relevant_rank(query: JudgedRanking) -> int:
    return next((rank for rank, hit in enumerate(query.relevant, start=1) if hit), 0)


def precision(query: JudgedRanking, cutoff: int) -> float:
    """P@k: relevant documents among the first k, over k (a shorter list still divides by k)."""
    return sum(query.relevant[:cutoff]) / cutoff


def recall(query: JudgedRanking, cutoff: int) -> float:
    """R@k: relevant documents among the first k, over the query's relevant documents."""
    return sum(query.relevant[:cutoff]) / query.num_rel if query.num_rel else 0.0


def success(query: JudgedRanking, cutoff: int) -> int:
    """Success@k: 1 if a relevant document is among the first k, else 0 (an indicator, kept an int)."""
    first = _first_relevant_rank(query)
    return int(0 < first <= cutoff)


def reciprocal_rank(query: JudgedRanking, cutoff: int | None = None) -> float:
    """RR: 1 / rank of the first relevant document (within the first k with a cutoff), 0 if none."""
    first = _first_relevant_rank(query)
    if first == 0 or (cutoff is not None and first > cutoff):
        return 0.0
    return 1.0 / first


def average_precision(query: JudgedRanking, cutoff: int | None = None) -> float:
    """AP: mean over the query's relevant documents of the precision at each one's rank (0 when not retrieved)."""
    if not query.num_rel:
        return 0.0
    total, found = 0.0, 0
    for rank, hit in enumerate(query.relevant[:cutoff], start=1):
        if hit:
            found += 1
            total += found / rank
    return total / query.num_rel


def r_precision(query: JudgedRanking, cutoff: int | None = None) -> float:
    """Rprec: precision at rank R, R = the query's number of relevant documents."""
    if not query.num_rel:
        return 0.0
    return sum(query.relevant[: query.num_rel]) / query.num_rel


def _dcg(gains: Sequence[float]) -> float:
    return sum(gain / math.log2(rank + 1) for rank, gain in enumerate(gains, start=1) if gain)


def ndcg(query: JudgedRanking, cutoff: int | None = None) -> float:
    """nDCG@k (graded): DCG of the first k over the ideal DCG of the query's judged grades; 0 if no positive grade."""
    ideal = _dcg(query.ideal_gains[:cutoff])
    if ideal <= 0.0:
        return 0.0
    gains = [max(grade, 0) if grade is not None else 0 for grade in query.grades[:cutoff]]
    return _dcg(gains) / ideal


@dataclass(frozen=True)
class MeasureKind:
    """One registered measure: its ir_measures name, its function and how a cutoff is given."""

    name: str
    function: Callable[..., float]
    cutoff: str  # "required", "optional" or "none"
    trec_eval: str  # trec_eval's name; "{k}" stands for the cutoff
    trec_eval_uncut: str | None = None  # trec_eval's name without a cutoff, if it differs


REGISTRY: dict[str, MeasureKind] = {
    kind.name: kind
    for kind in (
        MeasureKind("P", precision, "required", "P_{k}"),
        MeasureKind("R", recall, "required", "recall_{k}"),
        MeasureKind("Success", success, "required", "success_{k}"),
        MeasureKind("RR", reciprocal_rank, "none", "recip_rank"),
        MeasureKind("AP", average_precision, "optional", "map_cut_{k}", "map"),
        MeasureKind("nDCG", ndcg, "optional", "ndcg_cut_{k}", "ndcg"),
        MeasureKind("Rprec", r_precision, "none", "Rprec"),
    )
}
ALIASES = {"MAP": "AP", "Hit": "Success", "NDCG": "nDCG", "ndcg": "nDCG", "MRR": "RR"}

_NAME = re.compile(r"^(?P<kind>[A-Za-z]+)(?:@(?P<cutoff>[1-9][0-9]*))?$")


@dataclass(frozen=True)
class Measure:
    """A measure as asked for (``name``, e.g. ``Hit@5``) and what it computes (``kind`` with ``cutoff``)."""

    name: str
    kind: MeasureKind
    cutoff: int | None

    @property
    def canonical(self) -> str:
        """The ir_measures name (``MAP`` -> ``AP``, ``Hit@5`` -> ``Success@5``)."""
        return self.kind.name if self.cutoff is None else f"{self.kind.name}@{self.cutoff}"

    @property
    def trec_eval(self) -> str:
        """trec_eval's name of the same figure (``P@5`` -> ``P_5``, ``AP`` -> ``map``)."""
        if self.cutoff is None:
            return self.kind.trec_eval_uncut or self.kind.trec_eval
        return self.kind.trec_eval.format(k=self.cutoff)

    def __call__(self, query: JudgedRanking) -> float:
        value: float = self.kind.function(query, self.cutoff)
        return value


def known_measures() -> str:
    """The accepted names, for an error message."""
    parts = []
    for kind in REGISTRY.values():
        parts.append({"required": f"{kind.name}@k", "optional": f"{kind.name}[@k]", "none": kind.name}[kind.cutoff])
    return ", ".join(parts) + "; aliases: " + ", ".join(f"{a}={c}" for a, c in ALIASES.items())


def parse_measure(name: str) -> Measure:
    """The measure called ``name``; ValueError naming what is accepted otherwise."""
    match = _NAME.match(name.strip())
    kind_name = match and ALIASES.get(match["kind"], match["kind"])
    kind = REGISTRY.get(kind_name) if match and kind_name else None
    if match is None or kind is None:
        raise ValueError(f"unknown measure {name!r}; known: {known_measures()}")
    cutoff = int(match["cutoff"]) if match["cutoff"] else None
    if cutoff is None and kind.cutoff == "required":
        raise ValueError(f"measure {name!r} needs a cutoff, e.g. {kind.name}@10")
    if cutoff is not None and kind.cutoff == "none":
        raise ValueError(f"measure {name!r} takes no cutoff (write {kind.name})")
    return Measure(name=name.strip(), kind=kind, cutoff=cutoff)


def parse_measures(names: Sequence[str]) -> tuple[Measure, ...]:
    """Each name parsed; ValueError if two names ask for the same figure (``AP`` and ``MAP``)."""
    measures = tuple(parse_measure(name) for name in names)
    seen: dict[str, str] = {}
    for measure in measures:
        if measure.canonical in seen:
            raise ValueError(f"measures {seen[measure.canonical]!r} and {measure.name!r} are the same figure")
        seen[measure.canonical] = measure.name
    if not measures:
        raise ValueError("no measure asked for")
    return measures


def evaluate_query(measures: Sequence[Measure], ranked: Sequence[str], judged: Mapping[str, int], *,
                   rel_level: int = DEFAULT_REL_LEVEL) -> dict[str, float]:
    """``{measure name: value}`` of one query."""
    query = judged_ranking(ranked, judged, rel_level=rel_level)
    return {measure.name: measure(query) for measure in measures}
