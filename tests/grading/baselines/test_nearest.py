"""The nearest-labelled-example baseline: folds by contract, no gold of a contract's fold ever reaches it, the
threshold choice against brute force, and what it extracts on small inputs."""

from __future__ import annotations

import math

import numpy as np
import pytest

from grading.baselines.nearest import (
    CORRECT_F1,
    PARTIAL_F1,
    LabelledContract,
    _choose,
    _credit,
    assign_folds,
    nearest_example_run,
)

CATEGORIES = ("Governing Law", "Insurance", "Anti-Assignment")
STATES = ("Nevada", "Delaware", "Ohio", "Texas", "Utah", "Maine", "Iowa", "Idaho", "Oregon", "Kansas", "Vermont",
          "Georgia")
FILLER = "The parties met on a sunny afternoon to discuss the delivery schedule of widgets and gadgets in detail."


def _contract(i: int) -> LabelledContract:
    law = f"This Agreement shall be governed by and construed in accordance with the laws of the State of {STATES[i]}."
    insurance = ("Supplier shall maintain general liability insurance coverage with reputable insurers at its own "
                 f"cost in an amount of {i + 1} million dollars.")
    assign = ("Neither party may assign this Agreement without the prior written consent of the other party, "
              "which consent shall not be unreasonably withheld.")
    sentences = [FILLER, law, FILLER.replace("widgets", "bolts"), insurance]
    spans = [("Governing Law", law), ("Insurance", insurance)]
    if i % 2 == 0:
        sentences.append(assign)
        spans.append(("Anti-Assignment", assign))
    return LabelledContract(f"C{i:02d}", "\n".join(sentences), tuple(spans))


POOL = [_contract(i) for i in range(12)]
# Twelve near-identical contracts: every clause word is in a fifth of the passages, so the stop-word cut-off
# (MAX_DF, set for CUAD's ~20,000 passages) is raised here.
SMALL = {"folds": 4, "seed": 1, "max_df": 0.5}
TARGETS = [c.key for c in POOL]


def test_folds_are_seeded_balanced_and_independent_of_input_order():
    keys = [f"K{i}" for i in range(23)]
    folds = assign_folds(keys, folds=5, seed=3)
    assert folds == assign_folds(list(reversed(keys)), folds=5, seed=3)
    assert sorted(np.bincount(list(folds.values()))) == [4, 4, 5, 5, 5]
    assert folds != assign_folds(keys, folds=5, seed=4)


def test_a_contract_never_sees_gold_of_its_own_fold_as_example_or_for_its_threshold():
    result = nearest_example_run(POOL, TARGETS, CATEGORIES, **SMALL)
    for t in TARGETS:
        f = result.folds[t]
        assert f not in result.example_folds[t]
        assert all(result.folds[k] != f for k in result.calibration_keys[f])
        assert t not in result.calibration_keys[f]


def _with_gold(pool: list[LabelledContract], keys: set[str], spans_of) -> list[LabelledContract]:
    return [LabelledContract(c.key, c.text, spans_of(c)) if c.key in keys else c for c in pool]


def test_changing_the_gold_of_a_contracts_fold_leaves_its_extractions_unchanged():
    """The leak test: the gold of every contract in the target's fold (its own included) is replaced by the
    target's own passages under every type, which would make them perfect examples if they were used; the
    target's extractions stay exactly the same. The same change in another fold does change them (so the
    test can fail)."""
    base = nearest_example_run(POOL, TARGETS, CATEGORIES, **SMALL)
    target = "C03"
    lines = tuple(POOL[3].text.split("\n"))
    planted = lambda c: tuple((cat, line) for cat in CATEGORIES for line in lines)  # noqa: E731
    own_fold = {k for k, f in base.folds.items() if f == base.folds[target]}
    assert target in own_fold and len(own_fold) == 3
    assert len(base.found[target]) == 2  # its governing law and insurance clauses
    leaked = nearest_example_run(_with_gold(POOL, own_fold, planted), TARGETS, CATEGORIES, **SMALL)
    assert leaked.found[target] == base.found[target]
    # also dropping the fold's gold altogether changes nothing for the target
    dropped = nearest_example_run(_with_gold(POOL, own_fold, lambda c: ()), TARGETS, CATEGORIES, **SMALL)
    assert dropped.found[target] == base.found[target]
    # control: the same planting in the other folds reaches the target
    others = set(TARGETS) - own_fold
    control = nearest_example_run(_with_gold(POOL, others, planted), TARGETS, CATEGORIES, **SMALL)
    assert control.found[target] != base.found[target]


def test_it_extracts_the_sentences_like_other_contracts_gold_with_a_confidence():
    result = nearest_example_run(POOL, TARGETS, CATEGORIES, **SMALL)
    by_key = {c.key: c for c in POOL}
    for t in TARGETS:
        text = by_key[t].text
        got = {(f.category, f.text) for f in result.found[t]}
        assert set(by_key[t].spans) <= got  # every gold clause found (the examples are near-identical)
        for f in result.found[t]:
            assert text[f.start:f.end] == f.text and 0.0 < f.score <= 1.0 + 1e-9
            assert "sunny afternoon" not in f.text  # the filler is like no example
    assert result.found == nearest_example_run(POOL, TARGETS, CATEGORIES, **SMALL).found  # deterministic


def test_a_target_outside_the_pool_or_too_few_folds_is_refused():
    with pytest.raises(ValueError, match="targets: 1 not among"):
        nearest_example_run(POOL, ["nope"], CATEGORIES)
    with pytest.raises(ValueError, match="folds: 2"):
        nearest_example_run(POOL, TARGETS, CATEGORIES, folds=2)


def _brute_force(scores: np.ndarray, f1s: list[np.ndarray], spans: int, k_max: int) -> float:
    """Best micro F1 over every (threshold, count), crediting each selection by exhaustive one-to-one matching."""
    best = 0.0
    thresholds = sorted({float(s) for s in scores.ravel() if np.isfinite(s)}, reverse=True)
    for k in range(1, k_max + 1):
        for tau in thresholds:
            credit = selected = 0.0
            for row, f1 in zip(scores, f1s, strict=True):
                m = int(sum(1 for s in row[:k] if s >= tau))
                selected += m
                credit += _greedy_reference(f1[:m])
            f1_total = 2 * credit / (selected + spans) if credit > 0 else 0.0
            best = max(best, f1_total)
    return best


def _greedy_reference(f1: np.ndarray) -> float:
    """Candidates in order, each taking the best span still free (written out separately from ``_credit``)."""
    used: set[int] = set()
    total = 0.0
    for i in range(f1.shape[0]):
        free = [(f1[i, j], -j) for j in range(f1.shape[1]) if j not in used]
        if not free:
            continue
        value, neg_j = max(free)  # the best span still free (lowest index on ties)
        if value >= PARTIAL_F1:
            used.add(-neg_j)
            total += 1.0 if value >= CORRECT_F1 else 0.5
    return total


@pytest.mark.parametrize("seed", range(6))
def test_the_threshold_choice_reaches_the_brute_force_best_on_random_inputs(seed):
    rng = np.random.default_rng(seed)
    contracts, k_max = 7, 3
    scores = np.sort(rng.random((contracts, k_max)).round(2), axis=1)[:, ::-1].copy()
    scores[0, 2] = -np.inf  # a contract with only two passages
    f1s, credits, spans = [], [], 0
    for _ in range(contracts):
        n_spans = int(rng.integers(0, 3))
        spans += n_spans
        f1 = rng.choice([0.0, 0.2, 0.5, 0.8, 1.0], size=(k_max, n_spans))
        f1s.append(f1)
        credits.append(_credit(f1))
    threshold, _, f1 = _choose(scores, np.array(credits), spans, max_per_type=k_max)
    assert math.isclose(f1, _brute_force(scores, f1s, spans, k_max))
    for c, row in enumerate(credits):  # the prefix credits agree with the written-out matching
        assert [_greedy_reference(f1s[c][:m]) for m in range(k_max + 1)] == list(row)
    if f1 == 0.0:
        assert threshold == math.inf


def test_a_type_never_seen_in_training_is_not_extracted():
    assert _choose(np.zeros((3, 2)), np.zeros((3, 3)), 0, max_per_type=2) == (math.inf, 1, 0.0)
