"""Grader self-test: a synthetic run built from CUAD gold with known errors injected; the grader must flag each.

Kinds and the outcome the grader must report (on the injected extraction, or
for a dropped span on the span):

- fabricated    a clause absent from the contract                  -> hallucinated
- paraphrase    a gold span reworded (synonyms, reversed order)    -> hallucinated
- truncated     the first half of a gold span's words              -> partial
- wrong_category a gold span filed under a type the contract lacks -> incorrect
- duplicate     a gold span extracted twice (second copy)          -> incorrect
- dropped       a gold span left out of the run                    -> missed
- other_contract a gold span of another contract                   -> hallucinated

Every untouched gold extraction must come back Correct, and the perfect run
(gold as extractions) must score 1.0 on precision, recall and F1. Injection
sites are chosen by simple checks that do not use the grader (cells with one
span, word counts, shared 4-grams by plain string search), so the grader's
verdict is an independent check. Everything runs inside a transaction that is
rolled back: the self-test stores nothing.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TypedDict

import numpy as np
from django.db import transaction

from grading.dataset.models import Contract, CuadDataset, Span
from grading.dataset.selectors import dataset_categories
from grading.runs.services import extraction_run_import
from grading.scorecard.selectors import run_extraction_grades, run_scorecard
from scoring.cuad.grading import OUTCOME_NAMES, Thresholds

WORD = re.compile(r"\w+")
FABRICATED = (
    "The Distributor shall deliver seventeen violet hippopotami to the lunar warehouse every alternate solstice.",
    "Licensor grants the Licensee a perpetual zeppelin franchise payable in saffron and antique harpsichords.",
    "Each Party waives its right to tango competitions held beneath any submarine owned by the other Party.",
)
SYNONYMS = {
    "shall": "will",
    "agreement": "contract",
    "party": "side",
    "parties": "sides",
    "not": "never",
    "any": "every",
    "the": "this",
    "this": "the",
    "of": "regarding",
    "may": "can",
}


class _Rollback(Exception):
    pass


@dataclass
class KindResult:
    kind: str
    expected: str
    injected: int = 0
    flagged: int = 0
    got: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return self.injected > 0 and self.flagged == self.injected


@dataclass
class SelfTestResult:
    kinds: list[KindResult]
    untouched_total: int
    untouched_correct: int
    perfect: dict[str, float]
    contracts: int
    matcher: str

    @property
    def ok(self) -> bool:
        return (
            all(k.ok for k in self.kinds)
            and self.untouched_correct == self.untouched_total
            and all(self.perfect[k] == 1.0 for k in ("precision", "recall", "f1"))
        )

    def table(self) -> str:
        lines = [f"{'kind':16} {'expected':13} {'injected':>8} {'flagged':>8}  result  (grader said)"]
        for k in self.kinds:
            said = ", ".join(sorted(set(k.got))) or "-"
            lines.append(
                f"{k.kind:16} {k.expected:13} {k.injected:8d} {k.flagged:8d}  {'ok' if k.ok else 'MISS':6}  ({said})"
            )
        lines.append(
            f"untouched gold extractions correct: {self.untouched_correct}/{self.untouched_total}; "
            f"perfect run P {self.perfect['precision']:.3f} R {self.perfect['recall']:.3f} "
            f"F1 {self.perfect['f1']:.3f}  ({self.contracts} contracts, matcher {self.matcher})"
        )
        lines.append("SELF-TEST PASSED" if self.ok else "SELF-TEST FAILED")
        return "\n".join(lines)


def _words(text: str) -> list[str]:
    return WORD.findall(text.lower())


def _four_grams(words: list[str]) -> set[str]:
    return {" ".join(words[i : i + 4]) for i in range(len(words) - 3)}


def _paraphrase(text: str) -> str:
    words = [SYNONYMS.get(w.lower(), w) for w in WORD.findall(text)]
    return " ".join(reversed(words))


def _truncate(text: str) -> str:
    matches = list(WORD.finditer(text))
    return text[: matches[len(matches) // 2 - 1].end()]


# The outcome the grader must report for each kind of injected error.
EXPECTED = {
    "fabricated": "hallucinated",
    "paraphrase": "hallucinated",
    "truncated": "partial",
    "wrong_category": "incorrect",
    "duplicate": "incorrect",
    "dropped": "missed",
    "other_contract": "hallucinated",
}


@dataclass
class _Gold:
    """The sampled contracts and their gold spans, in the order the run lists them."""

    chosen: list[int]
    contracts: dict[int, Contract]
    category_names: list[str]
    spans: list[Span]
    cell_size: dict[tuple[int, str], int]


@dataclass
class _Injected:
    """The run with its errors: gold extractions by span id (some replaced), dropped spans, extra extractions."""

    base: dict[int, dict]
    replaced: dict[int, str] = field(default_factory=dict)  # span id -> kind (its extraction replaced)
    dropped: list[int] = field(default_factory=list)
    extra: list[tuple[str, dict]] = field(default_factory=list)  # (kind, extraction) appended after the base


def cuad_selftest(
    *,
    dataset: CuadDataset,
    n_contracts: int = 20,
    per_kind: int = 3,
    seed: int = 0,
    matcher: str = "hungarian",
    thresholds: Thresholds | None = None,
) -> SelfTestResult:
    thresholds = thresholds or Thresholds()
    rng = np.random.default_rng(seed)
    gold = _gold_sample(dataset, n_contracts, rng)
    injected = _inject(gold, rng, per_kind)
    extractions, kinds_by_position, untouched_positions = _assemble(injected)
    results = {k: KindResult(k, v) for k, v in EXPECTED.items()}
    outcome: _Outcome = {}
    try:
        with transaction.atomic():
            outcome["untouched"] = _grade_injected(dataset, gold, injected, extractions, kinds_by_position,
                                                   untouched_positions, results, thresholds, matcher)
            outcome["perfect"] = _score_perfect(dataset, gold, thresholds, matcher)
            raise _Rollback
    except _Rollback:
        pass

    untouched = outcome["untouched"]
    return SelfTestResult(
        kinds=list(results.values()),
        untouched_total=len(untouched),
        untouched_correct=sum(1 for o in untouched if o == OUTCOME_NAMES[0]),
        perfect=outcome["perfect"],
        contracts=len(gold.chosen),
        matcher=matcher,
    )


def _gold_sample(dataset: CuadDataset, n_contracts: int, rng: np.random.Generator) -> _Gold:
    all_ids = list(Contract.objects.filter(dataset=dataset).order_by("title").values_list("id", flat=True))
    if len(all_ids) < 2:
        raise ValueError("the self-test needs at least two contracts")
    chosen = sorted(rng.choice(all_ids, size=min(n_contracts, len(all_ids)), replace=False).tolist())
    spans = list(
        Span.objects.filter(contract_id__in=chosen)
        .select_related("category")
        .order_by("contract_id", "category__position", "answer_index")
    )
    cell_size: dict[tuple[int, str], int] = {}
    for s in spans:
        cell_size[(s.contract_id, s.category.name)] = cell_size.get((s.contract_id, s.category.name), 0) + 1
    return _Gold(chosen=chosen, contracts={c.pk: c for c in Contract.objects.filter(pk__in=chosen)},
                 category_names=[c.name for c in dataset_categories(dataset=dataset)], spans=spans,
                 cell_size=cell_size)


class _Picker:
    """Chooses the spans each kind of error is injected at: up to ``per_kind``, one per contract, each span once."""

    def __init__(self, gold: _Gold, rng: np.random.Generator, per_kind: int) -> None:
        self.gold = gold
        self.per_kind = per_kind
        self.order = [gold.spans[i] for i in rng.permutation(len(gold.spans))]
        self.used_spans: set[int] = set()
        self.used_contracts_for: dict[str, set[int]] = {}

    def pick(self, kind: str, predicate: Callable[[Span], bool]) -> list[Span]:
        found: list[Span] = []
        seen = self.used_contracts_for.setdefault(kind, set())
        for s in self.order:
            if len(found) == self.per_kind:
                break
            if s.pk in self.used_spans or s.contract_id in seen or not predicate(s):
                continue
            found.append(s)
            self.used_spans.add(s.pk)
            seen.add(s.contract_id)
        return found

    def alone(self, s: Span) -> bool:
        return self.gold.cell_size[(s.contract_id, s.category.name)] == 1


def _inject(gold: _Gold, rng: np.random.Generator, per_kind: int) -> _Injected:
    # Base run: every gold span as an extraction, keyed by span id so injections can replace or drop them.
    run = _Injected(base={
        s.pk: {"contract": gold.contracts[s.contract_id].title, "category": s.category.name, "text": s.text}
        for s in gold.spans
    })
    picker = _Picker(gold, rng, per_kind)
    pick, alone, base = picker.pick, picker.alone, run.base
    for s in pick("truncated", lambda s: alone(s) and len(_words(s.text)) >= 16):
        run.replaced[s.pk] = "truncated"
        base[s.pk] = {**base[s.pk], "text": _truncate(s.text)}
    for s in pick("paraphrase", lambda s: alone(s) and len(_words(s.text)) >= 12):
        run.replaced[s.pk] = "paraphrase"
        base[s.pk] = {**base[s.pk], "text": _paraphrase(s.text)}
    for s in pick("wrong_category", lambda s: len(_words(s.text)) >= 8):
        present = {name for (cid, name) in gold.cell_size if cid == s.contract_id}
        target = next((n for n in gold.category_names if n not in present), None)
        if target is None:
            continue
        run.replaced[s.pk] = "wrong_category"
        base[s.pk] = {**base[s.pk], "category": target}
    for s in pick("duplicate", alone):
        run.extra.append(("duplicate", dict(base[s.pk])))
    for s in pick("dropped", lambda s: True):
        run.dropped.append(s.pk)
    for s in pick("fabricated", lambda s: True):
        text = FABRICATED[len([k for k, _ in run.extra if k == "fabricated"]) % len(FABRICATED)]
        run.extra.append(("fabricated", {"contract": base[s.pk]["contract"], "category": s.category.name,
                                         "text": text}))
    for s in pick("other_contract", lambda s: len(_words(s.text)) >= 20):
        own = _four_grams(_words(s.text))
        host = next(
            (
                c
                for c in gold.contracts.values()
                if c.pk != s.contract_id and not own & _four_grams(_words(c.text)) and s.text not in c.text
            ),
            None,
        )
        if host is None:
            continue
        run.extra.append(("other_contract", {"contract": host.title, "category": s.category.name, "text": s.text}))
        picker.used_spans.discard(s.pk)  # the span itself stays in its own contract's run, untouched
    return run


def _assemble(run: _Injected) -> tuple[list[dict], dict[int, str], list[int]]:
    """The run's extractions, the kind injected at each position, and the positions left as gold."""
    extractions: list[dict] = []
    kinds_by_position: dict[int, str] = {}
    untouched_positions: list[int] = []
    for span_id, e in run.base.items():
        if span_id in run.dropped:
            continue
        if span_id in run.replaced:
            kinds_by_position[len(extractions)] = run.replaced[span_id]
        else:
            untouched_positions.append(len(extractions))
        extractions.append(e)
    for kind, e in run.extra:
        kinds_by_position[len(extractions)] = kind
        extractions.append(e)
    return extractions, kinds_by_position, untouched_positions


class _Outcome(TypedDict, total=False):
    untouched: list[str]
    perfect: dict[str, float]


def _grade_injected(dataset: CuadDataset, gold: _Gold, run: _Injected, extractions: list[dict],
                    kinds_by_position: dict[int, str], untouched_positions: list[int],
                    results: dict[str, KindResult], thresholds: Thresholds, matcher: str) -> list[str]:
    """Grade the injected run, count what the grader flagged in ``results``; the untouched extractions' outcomes."""
    raw = json.dumps({"model": "selftest", "extractions": extractions})
    stored, _ = extraction_run_import(dataset=dataset, raw=raw)
    grades, missed = run_extraction_grades(run=stored, contract_ids=gold.chosen, thresholds=thresholds,
                                           matcher=matcher)
    ids = stored.extractions.order_by("position").values_list("id", flat=True)
    by_position = {pk: position for position, pk in enumerate(ids)}
    outcome_at = {by_position[g.extraction_id]: g.outcome for g in grades}
    for position, kind in kinds_by_position.items():
        results[kind].injected += 1
        results[kind].got.append(outcome_at[position])
        results[kind].flagged += outcome_at[position] == EXPECTED[kind]
    missed_set = set(missed)
    for span_id in run.dropped:
        results["dropped"].injected += 1
        said = "missed" if span_id in missed_set else "not missed"
        results["dropped"].got.append(said)
        results["dropped"].flagged += said == "missed"
    return [outcome_at[p] for p in untouched_positions]


def _score_perfect(dataset: CuadDataset, gold: _Gold, thresholds: Thresholds, matcher: str) -> dict[str, float]:
    """Precision, recall and F1 of the gold spans pasted back as a run (each must be 1.0)."""
    extractions = [{"contract": gold.contracts[s.contract_id].title, "category": s.category.name, "text": s.text}
                   for s in gold.spans]
    perfect_run, _ = extraction_run_import(
        dataset=dataset, raw=json.dumps({"model": "selftest-perfect", "extractions": extractions}))
    card = run_scorecard(run=perfect_run, contract_ids=gold.chosen, thresholds=thresholds, matcher=matcher,
                         replicates=200)
    return {
        "precision": card.overall.precision.estimate,
        "recall": card.overall.recall.estimate,
        "f1": card.overall.f1.estimate,
    }
