"""The held-out freshness rule with declared comparisons, on plain ledgers (no database).

Declared systems are one look: none warns against another; a system added after a declaration warns and names
it; a declaration made after a system's first held-out figure does not count for that system; without any
declaration the rule is the old one (first retrieval and first model configuration are fresh).
"""

from __future__ import annotations

import random
from datetime import UTC, datetime, timedelta

from benchmarks.comparisons.selectors import Declaration
from benchmarks.reports.exposure import configuration_key, exposure_judge

T0 = datetime(2026, 12, 1, 9, 0, tzinfo=UTC)
RETRIEVAL = {"configuration": "bm25-v1", "detail": "", "k": 30, "passage_rule": "section", "engine": "bm25"}


def _model(name: str, question: str = "statute-relevance-v1") -> dict:
    return {"provider": "openai_compatible", "model_id": name, "question_version": question,
            "question_sha256": "1" * 64}


def _config(model: str | None, retrieval: dict = RETRIEVAL) -> dict:
    return {"retrieval": retrieval, "rerank": _model(model) if model else None}


def _ledger(*configs: dict) -> list[dict]:
    """One computation per configuration, a minute apart, from T0 + 1 min."""
    return [{"retrieval_sha256": configuration_key(c)[0], "rerank_sha256": configuration_key(c)[1],
             "configuration": c, "scored_at": T0 + timedelta(minutes=n + 1)} for n, c in enumerate(configs)]


def _declared(*configs: dict, at: datetime = T0, pk: int = 1) -> Declaration:
    return Declaration(pk=pk, sha256="d" * 64, suite="s v1", split="heldout",
                       keys=tuple(configuration_key(c) for c in configs), configurations=configs,
                       labels=tuple(f"system {n}" for n in range(len(configs))), declared_by="ada",
                       declared_via="page", declared_at=at)


def test_without_a_declaration_the_second_model_warns_as_before():
    ledger = _ledger(_config(None), _config("a"), _config("b"))
    assert exposure_judge(ledger=ledger, declarations=[], key=configuration_key(_config(None))).changes == ()
    assert exposure_judge(ledger=ledger, declarations=[], key=configuration_key(_config("a"))).changes == ()
    judged = exposure_judge(ledger=ledger, declarations=[], key=configuration_key(_config("b")))
    assert judged.changes == ("model model_id: 'a' -> 'b'",) and judged.added_after is None
    assert judged.looks == 3 and judged.declaration is None


def test_systems_declared_together_never_warn_against_each_other_in_any_order():
    systems = [_config(None), _config("a"), _config("b"), _config("c", {**RETRIEVAL, "k": 50})]
    declaration = _declared(*systems)
    rng = random.Random(5)
    for _ in range(20):
        order = rng.choices(systems, k=9) + systems  # repeated computations, every system at least once
        rng.shuffle(order)
        ledger = _ledger(*order)
        for system in systems:
            judged = exposure_judge(ledger=ledger, declarations=[declaration], key=configuration_key(system))
            assert judged.changes == () and judged.declaration is declaration
            assert judged.looks == 1  # four configurations, one look


def test_a_system_added_after_the_declaration_warns_and_names_it():
    declaration = _declared(_config(None), _config("a"), _config("b"))
    ledger = _ledger(_config("a"), _config(None), _config("b"), _config("late"))
    judged = exposure_judge(ledger=ledger, declarations=[declaration], key=configuration_key(_config("late")))
    # Nearest declared model named: both differ in model_id only.
    assert judged.changes == ("model model_id: 'a' -> 'late'",)
    assert judged.added_after is declaration and judged.declaration is None and judged.looks == 2
    # Keyword order of the declared retrieval, undeclared, is not a change (as without declarations).
    undeclared = _ledger(_config("a"), _config(None, {**RETRIEVAL, "k": 31}))
    judged = exposure_judge(ledger=undeclared, declarations=[_declared(_config("a"), _config("b"))],
                            key=configuration_key(_config(None, {**RETRIEVAL, "k": 31})))
    assert judged.changes == ("retrieval k: 30 -> 31",) and judged.added_after is not None


def test_a_declaration_made_after_a_system_was_scored_does_not_count_for_it():
    ledger = _ledger(_config("a"), _config("b"))
    forged = _declared(_config("a"), _config("b"), at=T0 + timedelta(hours=1))  # after both were seen
    judged = exposure_judge(ledger=ledger, declarations=[forged], key=configuration_key(_config("b")))
    assert judged.changes == ("model model_id: 'a' -> 'b'",) and judged.declaration is None


def test_a_declaration_after_an_earlier_look_is_judged_against_that_look():
    # Model a was scored first, undeclared; b and c were planned together afterwards: they saw a's figures.
    later = _declared(_config("b"), _config("c"), at=T0 + timedelta(minutes=5))
    ledger = _ledger(_config("a")) + [{**e, "scored_at": e["scored_at"] + timedelta(minutes=9)}
                                      for e in _ledger(_config("b"), _config("c"))]
    for model in ("b", "c"):
        judged = exposure_judge(ledger=ledger, declarations=[later], key=configuration_key(_config(model)))
        assert judged.changes == (f"model model_id: 'a' -> '{model}'",) and judged.declaration is later
        assert judged.added_after is None and judged.looks == 2
    # Keyword order scored first and a declaration of models after it: the models are the first models seen.
    keyword_first = _ledger(_config(None)) + [{**e, "scored_at": e["scored_at"] + timedelta(minutes=9)}
                                              for e in _ledger(_config("b"), _config("c"))]
    for model in ("b", "c"):
        judged = exposure_judge(ledger=keyword_first, declarations=[later], key=configuration_key(_config(model)))
        assert judged.changes == ()


def test_a_system_scored_before_any_declared_one_but_after_the_declaration_still_warns():
    declaration = _declared(_config("a"), _config("b"))
    ledger = _ledger(_config("x"), _config("a"))
    judged = exposure_judge(ledger=ledger, declarations=[declaration], key=configuration_key(_config("x")))
    assert judged.changes == ("model model_id: 'a' -> 'x'",) and judged.added_after is declaration
    assert exposure_judge(ledger=ledger, declarations=[declaration],
                          key=configuration_key(_config("a"))).changes == ()


def test_two_declarations_before_any_figure_are_one_look_and_a_third_after_figures_is_not():
    first = _declared(_config(None), _config("a"), at=T0, pk=1)
    forgotten = _declared(_config("b"), _config("c"), at=T0 + timedelta(seconds=30), pk=2)  # nothing seen yet
    after = _declared(_config("d"), _config("e"), at=T0 + timedelta(hours=2), pk=3)
    ledger = _ledger(_config("b"), _config(None), _config("a"), _config("c"))
    ledger += [{**e, "scored_at": e["scored_at"] + timedelta(hours=3)} for e in _ledger(_config("d"))]
    declarations = [first, forgotten, after]
    for model in ("a", "b", "c", None):
        judged = exposure_judge(ledger=ledger, declarations=declarations, key=configuration_key(_config(model)))
        assert judged.changes == (), model
    judged = exposure_judge(ledger=ledger, declarations=declarations, key=configuration_key(_config("d")))
    assert judged.changes == ("model model_id: 'a' -> 'd'",) and judged.declaration is after
    assert judged.added_after is first and judged.looks == 2  # the two early declarations are one look
