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
from dataclasses import dataclass, field

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
    all_ids = list(Contract.objects.filter(dataset=dataset).order_by("title").values_list("id", flat=True))
    if len(all_ids) < 2:
        raise ValueError("the self-test needs at least two contracts")
    chosen = sorted(rng.choice(all_ids, size=min(n_contracts, len(all_ids)), replace=False).tolist())
    contracts = {c.pk: c for c in Contract.objects.filter(pk__in=chosen)}
    category_names = [c.name for c in dataset_categories(dataset=dataset)]
    spans = list(
        Span.objects.filter(contract_id__in=chosen)
        .select_related("category")
        .order_by("contract_id", "category__position", "answer_index")
    )
    cell_size: dict[tuple[int, str], int] = {}
    for s in spans:
        cell_size[(s.contract_id, s.category.name)] = cell_size.get((s.contract_id, s.category.name), 0) + 1

    # Base run: every gold span as an extraction, keyed by span id so injections can replace or drop them.
    base = {
        s.pk: {"contract": contracts[s.contract_id].title, "category": s.category.name, "text": s.text} for s in spans
    }
    used_spans: set[int] = set()
    used_contracts_for: dict[str, set[int]] = {}
    extra: list[tuple[str, dict]] = []  # (kind, extraction) appended after the base
    replaced: dict[int, str] = {}  # span id -> kind (its extraction replaced by the injected one)
    dropped: list[int] = []
    order = [spans[i] for i in rng.permutation(len(spans))]

    def pick(kind: str, predicate) -> list[Span]:
        found: list[Span] = []
        seen = used_contracts_for.setdefault(kind, set())
        for s in order:
            if len(found) == per_kind:
                break
            if s.pk in used_spans or s.contract_id in seen or not predicate(s):
                continue
            found.append(s)
            used_spans.add(s.pk)
            seen.add(s.contract_id)
        return found

    def alone(s: Span) -> bool:
        return cell_size[(s.contract_id, s.category.name)] == 1

    for s in pick("truncated", lambda s: alone(s) and len(_words(s.text)) >= 16):
        replaced[s.pk] = "truncated"
        base[s.pk] = {**base[s.pk], "text": _truncate(s.text)}
    for s in pick("paraphrase", lambda s: alone(s) and len(_words(s.text)) >= 12):
        replaced[s.pk] = "paraphrase"
        base[s.pk] = {**base[s.pk], "text": _paraphrase(s.text)}
    for s in pick("wrong_category", lambda s: len(_words(s.text)) >= 8):
        present = {name for (cid, name) in cell_size if cid == s.contract_id}
        target = next((n for n in category_names if n not in present), None)
        if target is None:
            continue
        replaced[s.pk] = "wrong_category"
        base[s.pk] = {**base[s.pk], "category": target}
    for s in pick("duplicate", alone):
        extra.append(("duplicate", dict(base[s.pk])))
    for s in pick("dropped", lambda s: True):
        dropped.append(s.pk)
    for s in pick("fabricated", lambda s: True):
        text = FABRICATED[len([k for k, _ in extra if k == "fabricated"]) % len(FABRICATED)]
        extra.append(("fabricated", {"contract": base[s.pk]["contract"], "category": s.category.name, "text": text}))
    for s in pick("other_contract", lambda s: len(_words(s.text)) >= 20):
        own = _four_grams(_words(s.text))
        host = next(
            (
                c
                for c in contracts.values()
                if c.pk != s.contract_id and not own & _four_grams(_words(c.text)) and s.text not in c.text
            ),
            None,
        )
        if host is None:
            continue
        extra.append(("other_contract", {"contract": host.title, "category": s.category.name, "text": s.text}))
        used_spans.discard(s.pk)  # the span itself stays in its own contract's run, untouched

    extractions: list[dict] = []
    kinds_by_position: dict[int, str] = {}
    untouched_positions: list[int] = []
    for span_id, e in base.items():
        if span_id in dropped:
            continue
        if span_id in replaced:
            kinds_by_position[len(extractions)] = replaced[span_id]
        else:
            untouched_positions.append(len(extractions))
        extractions.append(e)
    for kind, e in extra:
        kinds_by_position[len(extractions)] = kind
        extractions.append(e)

    expected = {
        "fabricated": "hallucinated",
        "paraphrase": "hallucinated",
        "truncated": "partial",
        "wrong_category": "incorrect",
        "duplicate": "incorrect",
        "dropped": "missed",
        "other_contract": "hallucinated",
    }
    results = {k: KindResult(k, v) for k, v in expected.items()}
    outcome: dict[str, object] = {}

    try:
        with transaction.atomic():
            run, _ = extraction_run_import(
                dataset=dataset, raw=json.dumps({"model": "selftest", "extractions": extractions})
            )
            grades, missed = run_extraction_grades(
                run=run, contract_ids=chosen, thresholds=thresholds, matcher=matcher
            )
            ids = run.extractions.order_by("position").values_list("id", flat=True)
            by_position = {pk: position for position, pk in enumerate(ids)}
            outcome_at = {by_position[g.extraction_id]: g.outcome for g in grades}
            for position, kind in kinds_by_position.items():
                results[kind].injected += 1
                results[kind].got.append(outcome_at[position])
                results[kind].flagged += outcome_at[position] == expected[kind]
            missed_set = set(missed)
            for span_id in dropped:
                results["dropped"].injected += 1
                said = "missed" if span_id in missed_set else "not missed"
                results["dropped"].got.append(said)
                results["dropped"].flagged += said == "missed"
            outcome["untouched"] = [outcome_at[p] for p in untouched_positions]

            perfect_run, _ = extraction_run_import(
                dataset=dataset,
                raw=json.dumps(
                    {
                        "model": "selftest-perfect",
                        "extractions": [
                            {"contract": contracts[s.contract_id].title, "category": s.category.name, "text": s.text}
                            for s in spans
                        ],
                    }
                ),
            )
            card = run_scorecard(
                run=perfect_run, contract_ids=chosen, thresholds=thresholds, matcher=matcher, replicates=200
            )
            outcome["perfect"] = {
                "precision": card.overall.precision.estimate,
                "recall": card.overall.recall.estimate,
                "f1": card.overall.f1.estimate,
            }
            raise _Rollback
    except _Rollback:
        pass

    untouched = outcome["untouched"]
    return SelfTestResult(
        kinds=list(results.values()),
        untouched_total=len(untouched),
        untouched_correct=sum(1 for o in untouched if o == OUTCOME_NAMES[0]),
        perfect=outcome["perfect"],
        contracts=len(chosen),
        matcher=matcher,
    )
